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

Ack mode (docs/delivery.md, "The ack mode"; on unless `ack=False`): each
connection starts with the hello line; an agent that answers it acknowledges
events once they are in its spool. Until then the transport keeps them
(at most `max_unacked`; beyond that the oldest go to the spool file) and
sends them again, with the same ids, on the next connection, so a killed
agent loses nothing; the agent drops the ones it had already taken. When
the agent cannot be reached the unacknowledged events go to the spool file
at once, and so do those still unacknowledged at close(). An agent that
answers the hello late (a busy agent accepts a connection only when a slot
frees) is still in ack mode on that connection: once the hello went out, no
plain line is ever written on it. Until the answer comes, events wait with
the unacknowledged ones; an agent that says nothing for `hello_wait`
seconds (default 10 x `socket_timeout`) predates the ack mode: the transport
reconnects without the hello and writes it plain lines.
"""

import atexit
import collections
import itertools
import json
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
HELLO = b'{"hello":{"ack":1}}\n'

_log = logging.getLogger("goodput")


class _Marker(object):
    """A queue item that is not an event: flush or stop."""

    def __init__(self, stop=False, deadline=None):
        self.stop = stop
        self.deadline = deadline  # time.monotonic() to stop waiting for acks
        self.ok = False  # everything was written (acknowledged) or spooled
        self.done = threading.Event()


class _Unacked(object):
    """An event sent in ack mode and not acknowledged yet."""

    __slots__ = ("id", "event", "line", "line_no")

    def __init__(self, event_id, event, line):
        self.id = event_id
        self.event = event
        self.line = line  # its {"id","event"} line, as bytes
        self.line_no = 0  # its number on the current connection (0: unsent)


class Transport(object):
    """A bounded queue plus one background thread writing to the agent.

    Owns the socket and the current spool file. `send`, `flush`, `close` and
    the counters are safe to use from any thread.
    """

    def __init__(self, socket_path=None, spool_dir=None, queue_size=10000,
                 retry_seconds=1.0, socket_timeout=2.0, monotonic=time.monotonic,
                 ack=True, max_unacked=10000, ack_poll_seconds=0.05,
                 hello_wait=None):
        self.socket_path = (socket_path or os.environ.get("GOODPUT_SOCKET") or
                            DEFAULT_SOCKET)
        self.spool_dir = (spool_dir or os.environ.get("GOODPUT_SPOOL_DIR") or
                          DEFAULT_SPOOL_DIR)
        self.retry_seconds = retry_seconds
        self.socket_timeout = socket_timeout
        self._monotonic = monotonic
        self.ack = ack
        self.max_unacked = max_unacked
        self.ack_poll_seconds = ack_poll_seconds
        self.hello_wait = (10 * socket_timeout if hello_wait is None
                           else hello_wait)
        # Ack mode, owned by the thread: the events not acknowledged yet,
        # oldest first; unparsed reply bytes.
        self._unacked = collections.deque()  # of _Unacked
        self._acking = False  # this connection is in ack mode
        # The hello went out unanswered within socket_timeout: the agent may
        # still answer it (ack mode), so nothing is written until it does.
        self._hello_pending = False
        self._hello_deadline = 0.0
        self._plain_next = False  # the next connection skips the hello
        self._hello_partial = b""  # what came of the answer in time
        self._conn_lines = 0  # event lines written on this connection
        self._rejected_lines = set()  # their numbers the agent rejected
        self._replies = b""
        self._queue = queue.Queue(maxsize=queue_size)
        self._lock = threading.Lock()
        self._counts = {"sent": 0, "spooled": 0, "dropped": 0}
        self._rejected = 0
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
        """Waits up to `timeout` s until every queued event was written (in
        ack mode: acknowledged, or spooled)."""
        return self._marker(_Marker(deadline=time.monotonic() + timeout),
                            timeout)

    def close(self, timeout=5.0):
        """Flushes, then closes the socket and the spool file. Idempotent."""
        with self._lock:
            if self._closed:
                return True
            self._closed = True
        return self._marker(
            _Marker(stop=True, deadline=time.monotonic() + timeout * 0.8),
            timeout)

    @property
    def counts(self):
        """{"sent", "spooled", "dropped"}: events by fate so far ("sent":
        written, or in ack mode acknowledged; rejected lines not included)."""
        with self._lock:
            return dict(self._counts)

    @property
    def rejected(self):
        """Events the agent answered as invalid (ack mode; logged)."""
        with self._lock:
            return self._rejected

    def _marker(self, marker, timeout):
        if not self._thread.is_alive():
            return False
        try:
            self._queue.put(marker, timeout=timeout)
        except queue.Full:
            return False
        return marker.done.wait(timeout) and marker.ok

    def _count(self, name, n=1):
        with self._lock:
            self._counts[name] += n

    # --- background thread ---------------------------------------------------

    def _run(self):
        while True:
            try:
                item = self._queue.get(
                    timeout=self.ack_poll_seconds if self._unacked else None)
            except queue.Empty:
                self._poll_acks()
                continue
            if isinstance(item, _Marker):
                self._await_acks(item.deadline)
                if item.stop:
                    self._shutdown()
                item.ok = not self._unacked
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
        if self.ack:
            return self._deliver_acked(event)
        line = wire.to_line(event).encode("utf-8")
        if self._write_socket(line):
            self._count("sent")
        else:
            self._spool_or_drop(None, event)

    def _spool_or_drop(self, event_id, event):
        if self._write_spool(event, event_id):
            self._count("spooled")
        else:
            self._count("dropped")

    # --- ack mode (thread only) -----------------------------------------------

    def _deliver_acked(self, event):
        event_id = str(uuid.uuid4())
        line = wire.to_line({"id": event_id, "event": event}).encode("utf-8")
        while len(self._unacked) >= self.max_unacked:
            old = self._unacked.popleft()  # bounded: the oldest go to disk
            self._spool_or_drop(old.id, old.event)
        if self._sock is None and not self._connect():
            return self._spool_or_drop(event_id, event)
        if not self._acking:  # an agent without the ack mode
            if self._write_socket(wire.to_line(event).encode("utf-8")):
                return self._count("sent")
            return self._spool_or_drop(event_id, event)
        self._unacked.append(_Unacked(event_id, event, line))
        if not self._hello_pending:
            self._send_unacked(len(self._unacked) - 1)
        self._poll_acks()

    def _send_unacked(self, start):
        """Writes the unacked lines from index `start`; on a broken
        connection writes them all on a new one, else spools them."""
        if self._write_acked(start):
            return
        self._read_last_acks()
        self._disconnect(retry_now=True)
        if self._connect() and self._acking and self._write_acked(0):
            return
        self._disconnect()
        self._spool_unacked()

    def _write_acked(self, start):
        if self._hello_pending:
            return True  # written once the agent answers the hello
        items = list(itertools.islice(self._unacked, start, None))
        for item in items:
            self._conn_lines += 1
            item.line_no = self._conn_lines
        try:
            self._sock.sendall(b"".join(item.line for item in items))
            return True
        except OSError:
            return False

    def _spool_unacked(self):
        while self._unacked:
            item = self._unacked.popleft()
            self._spool_or_drop(item.id, item.event)

    def _poll_acks(self, wait=0.0):
        """Reads what the agent answered (waits up to `wait` s for it)."""
        if self._sock is None or not self._acking:
            return
        if self._hello_pending and self._monotonic() >= self._hello_deadline:
            return self._plain_agent()
        try:
            chunk = self._recv(wait)
        except OSError:
            chunk = b""
        if chunk is None:
            return
        if not chunk:  # the agent went away: resend on a new connection
            self._read_replies(self._replies + b"\n")
            self._disconnect(retry_now=True)
            if not self._unacked:
                return
            if self._connect() and self._acking and self._write_acked(0):
                return
            self._disconnect()
            return self._spool_unacked()
        self._read_replies(self._replies + chunk)
        if self._hello_pending is None:  # answered just now: ack mode
            self._hello_pending = False
            self._send_unacked(0)

    def _plain_agent(self):
        """The hello stayed unanswered for hello_wait: an agent without the
        ack mode. No event was written on this connection; a new one
        without the hello gets them as plain lines."""
        _log.warning("goodput: the agent at %s did not answer the ack mode's "
                     "hello in %.1fs: plain lines", self.socket_path,
                     self.hello_wait)
        self._disconnect(retry_now=True)
        self._plain_next = True
        pending, self._unacked = self._unacked, collections.deque()
        for item in pending:
            if self._write_socket(wire.to_line(item.event).encode("utf-8")):
                self._count("sent")
            else:
                self._spool_or_drop(item.id, item.event)

    def _read_replies(self, data):
        lines = data.split(b"\n")
        self._replies = lines.pop()
        for line in lines:
            if line:
                self._reply(line)

    def _read_last_acks(self):
        """Acks the agent wrote before the connection broke are still
        readable: take them, so fewer events are sent twice."""
        for _ in range(64):
            try:
                chunk = self._recv(0)
            except OSError:
                return
            if not chunk:
                return
            self._read_replies(self._replies + chunk)

    def _recv(self, wait):
        """Bytes the agent sent, b"" at its end, None if none came."""
        self._sock.settimeout(wait)  # 0: non-blocking
        try:
            return self._sock.recv(65536)
        except (socket.timeout, BlockingIOError, InterruptedError):
            return None
        finally:
            self._sock.settimeout(self.socket_timeout)

    def _reply(self, line):
        if self._hello_pending and line + b"\n" == HELLO:
            self._hello_pending = None  # _poll_acks writes what waited
            return
        try:
            reply = json.loads(line)
        except ValueError:
            return _log.warning("goodput: agent answered %r", line[:200])
        rejected = reply.get("rejected")
        if isinstance(rejected, dict):
            # Line numbers count the hello as line 1.
            self._rejected_lines.add(rejected.get("line", 0) - 1)
            _log.warning("goodput: agent rejected an event: %s",
                         rejected.get("reason"))
        acked = reply.get("acked")
        if not isinstance(acked, int):
            return
        sent = rejected_n = 0
        while self._unacked and 0 < self._unacked[0].line_no <= acked:
            item = self._unacked.popleft()
            if item.line_no in self._rejected_lines:
                self._rejected_lines.discard(item.line_no)
                rejected_n += 1
            else:
                sent += 1
        with self._lock:
            self._counts["sent"] += sent
            self._rejected += rejected_n

    def _await_acks(self, deadline):
        """Until every sent event is acknowledged, or `deadline`."""
        while self._unacked and self._sock is not None and self._acking:
            left = deadline - time.monotonic() if deadline else 0
            if left <= 0:
                return
            self._poll_acks(min(left, 0.2))

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
        if not self._connect() or self._acking:
            return False  # (an agent that now acks: the caller spools it)
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
        plain, self._plain_next = self._plain_next, False
        try:
            sock.connect(self.socket_path)
            answer = self._hello(sock) if self.ack and not plain else False
        except OSError:
            sock.close()
            self._next_connect = now + self.retry_seconds
            return False
        # None: no answer yet; still ack mode if one comes (_poll_acks).
        self._acking = answer is not False
        self._hello_pending = answer is None
        self._hello_deadline = now + self.hello_wait
        self._sock = sock
        self._conn_lines = 0
        self._rejected_lines = set()
        self._replies = self._hello_partial if answer is None else b""
        self._close_spool()  # the agent is back: hand it the spool file
        return True

    def _hello(self, sock):
        """Asks for the ack mode; whether the agent answered yes, None if it
        did not answer within socket_timeout (a busy or an old agent)."""
        sock.sendall(HELLO)
        reply = b""
        try:
            while not reply.endswith(b"\n"):
                chunk = sock.recv(len(HELLO) - len(reply))
                if not chunk:
                    raise ConnectionResetError("agent closed the connection")
                reply += chunk
        except socket.timeout:
            self._hello_partial = reply  # _poll_acks reads the rest
            return None
        return reply == HELLO

    def _disconnect(self, retry_now=False):
        if self._sock is None:
            return
        try:
            self._sock.close()
        finally:
            self._sock = None
            self._acking = False
            self._hello_pending = False
            if not retry_now:
                self._next_connect = self._monotonic() + self.retry_seconds

    def _write_spool(self, event, event_id=None):
        try:
            if self._spool is None:
                self._open_spool()
            record = {"id": event_id or str(uuid.uuid4()), "event": event}
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
        self._spool_unacked()  # the agent drops those it already has
        if self._sock is not None:
            self._disconnect()
        self._close_spool()
