"""Delivery of events to the goodput agent without ever blocking the caller.

`Transport.send` puts the event on a bounded queue and returns at once; a
background thread writes each event as one JSON line to the agent's Unix
socket. While the agent cannot be reached, the thread appends the events to a
client spool file that the agent ingests later (agent/README.md, "Client
spool files"):

    <spool_dir>/spool-<pid>-<uuid>.open    being written by process <pid>
    <spool_dir>/spool-<pid>-<uuid>.jsonl   closed: complete, ready to ingest

Each spool line is {"id": "<uuid4>", "event": {...Event JSON...}}, written
with a single write() so a reader never sees half an event unless the
process died in the middle of it (the agent ignores a last line without its
newline). The file is renamed from .open to .jsonl when the agent is
reachable again, at close(), and at interpreter exit.
"""

import atexit
import logging
import os
import queue
import socket
import threading
import time
import uuid

from goodput import wire

DEFAULT_SOCKET = "/tmp/goodput-agent.sock"
DEFAULT_SPOOL_DIR = "/tmp/goodput-client-spool"

_log = logging.getLogger("goodput")


class _Marker(object):
    """A queue item that is not an event: flush or stop."""

    def __init__(self, stop=False):
        self.stop = stop
        self.done = threading.Event()


class Transport(object):
    """A bounded queue plus one background thread writing to the agent.

    Owns the socket and the current spool file. `send`, `flush`, `close` and
    the counters are safe to use from any thread.
    """

    def __init__(self, socket_path=None, spool_dir=None, queue_size=10000,
                 retry_seconds=1.0, socket_timeout=2.0, monotonic=time.monotonic):
        self.socket_path = (socket_path or os.environ.get("GOODPUT_SOCKET") or
                            DEFAULT_SOCKET)
        self.spool_dir = (spool_dir or os.environ.get("GOODPUT_SPOOL_DIR") or
                          DEFAULT_SPOOL_DIR)
        self.retry_seconds = retry_seconds
        self.socket_timeout = socket_timeout
        self._monotonic = monotonic
        self._queue = queue.Queue(maxsize=queue_size)
        self._lock = threading.Lock()
        self._counts = {"sent": 0, "spooled": 0, "dropped": 0}
        self._sock = None
        self._next_connect = 0.0
        self._spool = None  # (file, path) of the open spool file
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="goodput-transport",
                                        daemon=True)
        self._thread.start()
        atexit.register(self.close)

    # --- caller side: never blocks, never raises ---------------------------

    def send(self, event):
        """Queues `event` (a dict); False if it was dropped (queue full)."""
        try:
            self._queue.put_nowait(event)
            return True
        except queue.Full:
            self._count("dropped")
            return False

    def flush(self, timeout=5.0):
        """Waits up to `timeout` s until every queued event was written."""
        return self._marker(_Marker(), timeout)

    def close(self, timeout=5.0):
        """Flushes, then closes the socket and the spool file. Idempotent."""
        with self._lock:
            if self._closed:
                return True
            self._closed = True
        return self._marker(_Marker(stop=True), timeout)

    @property
    def counts(self):
        """{"sent", "spooled", "dropped"}: events by fate so far."""
        with self._lock:
            return dict(self._counts)

    def _marker(self, marker, timeout):
        if not self._thread.is_alive():
            return False
        try:
            self._queue.put(marker, timeout=timeout)
        except queue.Full:
            return False
        return marker.done.wait(timeout)

    def _count(self, name):
        with self._lock:
            self._counts[name] += 1

    # --- background thread ---------------------------------------------------

    def _run(self):
        while True:
            item = self._queue.get()
            if isinstance(item, _Marker):
                if item.stop:
                    self._shutdown()
                item.done.set()
                if item.stop:
                    return
                continue
            try:
                self._deliver(item)
            except Exception:  # never let one event stop the thread
                _log.exception("goodput: could not deliver an event")
                self._count("dropped")

    def _deliver(self, event):
        line = wire.to_line(event).encode("utf-8")
        if self._write_socket(line):
            self._count("sent")
        elif self._write_spool(event):
            self._count("spooled")
        else:
            self._count("dropped")

    def _write_socket(self, line):
        if self._sock is None and not self._connect():
            return False
        try:
            self._sock.sendall(line)
            return True
        except (BrokenPipeError, ConnectionResetError):
            pass  # the agent closed this connection: retry once below
        except OSError:  # e.g. the send timeout of a stuck agent
            self._disconnect()
            return False
        # The agent closed this connection (idle, or to make room for a new
        # client: agent/README.md): the write failed as a whole (EPIPE),
        # so one retry on a new connection cannot count the event twice.
        self._drop_socket()
        if not self._connect():
            return False
        try:
            self._sock.sendall(line)
            return True
        except OSError:
            self._disconnect()
            return False

    def _drop_socket(self):
        try:
            self._sock.close()
        finally:
            self._sock = None

    def _connect(self):
        now = self._monotonic()
        if now < self._next_connect:
            return False
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.socket_timeout)
        try:
            sock.connect(self.socket_path)
        except OSError:
            sock.close()
            self._next_connect = now + self.retry_seconds
            return False
        self._sock = sock
        self._close_spool()  # the agent is back: hand it the spool file
        return True

    def _disconnect(self):
        try:
            self._sock.close()
        finally:
            self._sock = None
            self._next_connect = self._monotonic() + self.retry_seconds

    def _write_spool(self, event):
        try:
            if self._spool is None:
                self._open_spool()
            record = {"id": str(uuid.uuid4()), "event": event}
            f = self._spool[0]
            f.write(wire.to_line(record).encode("utf-8"))
            f.flush()
            return True
        except OSError as e:
            _log.warning("goodput: cannot spool to %s: %s", self.spool_dir, e)
            return False

    def _open_spool(self):
        if not os.path.isdir(self.spool_dir):
            os.makedirs(self.spool_dir, exist_ok=True)
            try:  # shared by every user's jobs, like /tmp (and the agent's)
                os.chmod(self.spool_dir, 0o1777)
            except OSError:
                pass
        name = "spool-%d-%s.open" % (os.getpid(), uuid.uuid4().hex)
        path = os.path.join(self.spool_dir, name)
        # Unbuffered: each line is exactly one write() call.
        self._spool = (open(path, "ab", buffering=0), path)

    def _close_spool(self):
        if self._spool is None:
            return
        f, path = self._spool
        self._spool = None
        try:
            f.close()
            os.rename(path, path[:-len(".open")] + ".jsonl")
        except OSError as e:
            _log.warning("goodput: cannot close spool file %s: %s", path, e)

    def _shutdown(self):
        if self._sock is not None:
            self._disconnect()
        self._close_spool()
