"""A Unix-socket server that collects the JSON lines it receives (tests)."""

import json
import os
import socket
import tempfile
import threading
import time

HELLO = b'{"hello":{"ack":1}}'


class FakeAgent(object):
    """Listens on a socket in a temp dir; `events()` is what arrived.

    With `ack` (the default) it speaks the agent's ack mode: it answers the
    hello, unwraps {"id","event"} lines and acknowledges each line at once
    unless `hold_acks` is set. Without it, it is an agent that predates
    the ack mode: it answers nothing and keeps the hello out of events().
    `hello_delay` (s) answers the hello late, as a busy agent whose
    connections are all taken accepts a new one late. In ack mode a line
    that is not {"id","event"} is rejected as the agent does (`rejected`)."""

    def __init__(self, path=None, ack=True, hello_delay=0.0):
        self.dir = tempfile.mkdtemp(prefix="goodput-py-")
        self.path = path or os.path.join(self.dir, "agent.sock")
        self.ack = ack
        self.hold_acks = False
        self.hello_delay = hello_delay
        self.rejected = 0
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(self.path)
        self._server.listen(8)
        self._lines = []  # (id or None, event)
        self._conns = []
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            with self._lock:
                self._conns.append(conn)
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn):
        data, n, acking = b"", 0, False
        while True:
            try:
                chunk = conn.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            data += chunk
            while b"\n" in data:
                line, data = data.split(b"\n", 1)
                if line == HELLO:
                    acking = self.ack
                    if acking:
                        time.sleep(self.hello_delay)
                        conn.sendall(HELLO + b"\n")
                    continue
                n += 1
                if acking and not self.hold_acks:  # before tests see it
                    conn.sendall(b'{"acked":%d}\n' % n)
                self._take(line, acking)

    def _take(self, line, acking):
        record = json.loads(line)
        with self._lock:
            if acking and not (isinstance(record, dict) and "id" in record
                               and "event" in record):
                self.rejected += 1
                return
            if acking:
                self._lines.append((record["id"], record["event"]))
            else:
                self._lines.append((None, record))
            self._changed.notify_all()

    def records(self):
        """(id, event) of every line, in arrival order (id None: plain)."""
        with self._lock:
            return list(self._lines)

    def events(self):
        return [event for _, event in self.records()]

    def wait_for(self, count, timeout=10.0):
        """Waits until `count` lines arrived; returns the events."""
        with self._lock:
            self._changed.wait_for(lambda: len(self._lines) >= count, timeout)
        return self.events()

    def shut_connections(self):
        """Shuts every connection for reading, as the agent does before it
        closes an idle one: the client's next write fails with EPIPE."""
        with self._lock:
            conns, self._conns = self._conns, []
        for conn in conns:
            conn.shutdown(socket.SHUT_RD)

    def kill_connections(self):
        """Closes every connection at once, as a killed agent's end."""
        with self._lock:
            conns, self._conns = self._conns, []
        for conn in conns:
            conn.shutdown(socket.SHUT_RDWR)
            conn.close()

    def close(self):
        self._server.close()
