"""Recorder: a job's events from inside its training or serving loop."""

import contextlib
import logging
import os
import sys
import threading
import time
import uuid

from goodput import wire
from goodput.transport import Transport

_log = logging.getLogger("goodput")


def detect_rank():
    """This process's rank: $RANK, else JAX's process index, else 0."""
    for name in ("RANK", "JAX_PROCESS_INDEX", "JAX_PROCESS_ID"):
        value = os.environ.get(name)
        if value is not None and value.strip().lstrip("-").isdigit():
            return int(value)
    jax = sys.modules.get("jax")
    if jax is not None:
        try:
            return int(jax.process_index())
        except Exception:  # jax not initialised: treat as single process
            return 0
    return 0


class Recorder(object):
    """Sends one job's events (SPEC section 2) to the goodput agent.

    Created once per process at program start; it sends `job_submitted`
    (only if `submit`, default: when `chips` is given and no launcher set
    GOODPUT_ATTEMPT) and `started` with this attempt's id. Only rank 0 sends
    unless `all_ranks`. After construction no method blocks or raises: bad
    arguments are logged and counted in `errors`. Owns its Transport unless
    one is passed in. Thread-safe.
    """

    def __init__(self, job_id, chips=None, accelerator=None, workload=None,
                 framework=None, labels=None, step_flops=None, step_bytes=None,
                 attempt=None, rank=None, all_ranks=False, submit=None,
                 socket_path=None, spool_dir=None, transport=None,
                 clock=time.time, min_chips=None):
        if not job_id:
            raise ValueError("job_id: must not be empty")
        self.job_id = str(job_id)
        self.workload = wire.check_enum("workload", workload or "TRAINING",
                                        wire.WORKLOADS)
        self.attempt = (attempt or os.environ.get("GOODPUT_ATTEMPT") or
                        str(uuid.uuid4()))
        self.rank = detect_rank() if rank is None else int(rank)
        self.enabled = all_ranks or self.rank == 0
        self.errors = 0
        self._clock = clock
        self._lock = threading.Lock()
        self._current = None  # (kind, name) of the reported activity
        submitted = self._submitted_body(chips, accelerator, framework, labels,
                                         step_flops, step_bytes, min_chips)
        self._transport = None
        if self.enabled:
            self._transport = transport or Transport(socket_path, spool_dir)
        if submit is None:
            submit = chips is not None and "GOODPUT_ATTEMPT" not in os.environ
        if submit:
            self._send("job_submitted", submitted, with_attempt=False)
        self._send("started", {})

    def _submitted_body(self, chips, accelerator, framework, labels,
                        step_flops, step_bytes, min_chips=None):
        body = {"workload": self.workload}
        if chips is not None:
            if int(chips) <= 0:
                raise ValueError("chips: must be > 0, got %r" % (chips,))
            body["chips"] = int(chips)
        if accelerator:
            body["accelerator"] = str(accelerator)
        if framework:
            body["framework"] = str(framework)
        if labels:
            body["labels"] = {str(k): str(v) for k, v in labels.items()}
        if step_flops is not None:
            body["step_flops"] = wire.check_number("step_flops", step_flops)
        if step_bytes is not None:
            body["step_bytes"] = wire.check_number("step_bytes", step_bytes)
        if min_chips is not None:  # elastic (SPEC rule 14)
            if chips is None or not 0 < int(min_chips) <= int(chips):
                raise ValueError(
                    "min_chips: must be > 0 and at most chips (%r), got %r"
                    % (chips, min_chips))
            body["min_chips"] = int(min_chips)
        return body

    # --- activities ------------------------------------------------------------

    @contextlib.contextmanager
    def activity(self, kind, name=None, step=None):
        """`with rec.activity("COMPILE"):` reports KIND now and, on exit, the
        activity that was current before (TRAINING/SERVING if none was).

        RESTORE takes the restored `step`, here or later via `span.step = n`
        inside the block (then a RESTORE with the step is sent at exit).
        CUSTOM needs a `name` (see `custom`)."""
        span = _Span(step)
        previous = self._enter(kind, name, step)
        try:
            yield span
        finally:
            if span.step is not None and span.step != step and previous != "bad":
                self._report_activity("RESTORE", None, span.step)
            if previous != "bad":
                self._restore(previous)

    def custom(self, name):
        """`with rec.custom("eval"):` a named CUSTOM activity."""
        return self.activity("CUSTOM", name=name)

    def _enter(self, kind, name, step):
        try:
            kind = wire.check_enum("activity", kind, wire.ACTIVITIES)
            if kind == "CUSTOM" and not name:
                raise ValueError("activity: CUSTOM needs a name")
        except ValueError as e:
            self._error(e)
            return "bad"
        with self._lock:
            previous = self._current
            self._current = (kind, name)
        self._report_activity(kind, name, step)
        return previous

    def _restore(self, previous):
        if previous is None:
            previous = ("SERVING" if self.workload == "SERVING" else
                        "TRAINING", None)
        with self._lock:
            self._current = previous
        self._report_activity(previous[0], previous[1], None)

    def _report_activity(self, kind, name, step):
        body = {"kind": kind}
        if name:
            body["name"] = str(name)
        if step is not None:
            body["step"] = int(step)
        self._send("activity", body)

    # --- progress and end ----------------------------------------------------

    def step(self, n, flops=None, bytes=None, input_wait_seconds=None,
             idle_seconds=None):
        """Optimizer step `n` completed now (or steps since the last report)."""
        try:
            body = {"step": _integer("step", n)}
            for field, value in (("flops", flops), ("bytes", bytes),
                                 ("input_wait_seconds", input_wait_seconds),
                                 ("idle_seconds", idle_seconds)):
                if value is not None:
                    body[field] = wire.check_number(field, value)
        except ValueError as e:
            return self._error(e)
        with self._lock:
            if self._current is not None and self._current[0] not in (
                    "TRAINING", "SERVING"):
                self._current = None  # a step switches back to stepping
        self._send("step", body)

    def checkpoint(self, n):
        """Progress through step `n` is durable now."""
        try:
            body = {"step": _integer("checkpoint.step", n)}
        except ValueError as e:
            return self._error(e)
        self._send("checkpoint", body)

    def interruption(self, reason, notice=False):
        """The job lost its chips or is about to (`notice`)."""
        try:
            body = {"reason": wire.check_enum("reason", reason, wire.REASONS)}
        except ValueError as e:
            return self._error(e)
        if notice:
            body["notice"] = True
        self._send("interruption", body)

    def ended(self, outcome="SUCCEEDED", flush_timeout=5.0):
        """Sends job_ended and waits up to `flush_timeout` s for delivery."""
        try:
            body = {"outcome": wire.check_enum("outcome", outcome,
                                               wire.OUTCOMES)}
        except ValueError as e:
            return self._error(e)
        self._send("job_ended", body)
        self.flush(flush_timeout)

    def flush(self, timeout=5.0):
        """Waits up to `timeout` s until queued events were written."""
        return self._transport.flush(timeout) if self._transport else True

    def close(self, timeout=5.0):
        """Flushes and stops the background thread."""
        return self._transport.close(timeout) if self._transport else True

    @property
    def counts(self):
        """{"sent", "spooled", "dropped"} of the transport (zeros if off)."""
        if self._transport is None:
            return {"sent": 0, "spooled": 0, "dropped": 0}
        return self._transport.counts

    def _send(self, kind, body, with_attempt=True):
        if self._transport is None:
            return
        event = wire.make_event(kind, body, self.job_id, self._clock(),
                                self.attempt if with_attempt else None)
        self._transport.send(event)

    def _error(self, error):
        self.errors += 1
        _log.warning("goodput: %s (event not sent)", error)


def _integer(field, value):
    """`value` as an int >= 0, else ValueError naming `field`."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = -1
    if number < 0 or isinstance(value, float) and value != number:
        raise ValueError("%s: must be an integer >= 0, got %r" % (field, value))
    return number


class _Span(object):
    """What `Recorder.activity` yields: set `step` for RESTORE."""

    def __init__(self, step):
        self.step = step
