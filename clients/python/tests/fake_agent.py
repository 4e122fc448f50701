"""A Unix-socket server that collects the JSON lines it receives (tests)."""

import json
import os
import socket
import tempfile
import threading


class FakeAgent(object):
    """Listens on a socket in a temp dir; `lines()` is what arrived."""

    def __init__(self, path=None):
        self.dir = tempfile.mkdtemp(prefix="goodput-py-")
        self.path = path or os.path.join(self.dir, "agent.sock")
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(self.path)
        self._server.listen(8)
        self._data = b""
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
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                return
            with self._lock:
                self._data += chunk
                self._changed.notify_all()

    def events(self):
        with self._lock:
            text = self._data.decode("utf-8")
        return [json.loads(l) for l in text.split("\n") if l]

    def wait_for(self, count, timeout=10.0):
        """Waits until `count` complete lines arrived; returns the events."""
        with self._lock:
            self._changed.wait_for(lambda: self._data.count(b"\n") >= count,
                                   timeout)
        return self.events()

    def shut_connections(self):
        """Shuts every connection for reading, as the agent does before it
        closes an idle one: the client's next write fails with EPIPE."""
        with self._lock:
            conns, self._conns = self._conns, []
        for conn in conns:
            conn.shutdown(socket.SHUT_RD)

    def close(self):
        self._server.close()
