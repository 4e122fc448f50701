"""The wire format: the proto3 JSON mapping of goodput.v1.Event.

Field and enum names follow proto/event.proto exactly. Integers are written
as JSON numbers (proto3 JSON parsers accept numbers and strings for int64),
time is RFC 3339 UTC with millisecond precision.
"""

import datetime
import json
import math

WORKLOADS = ("TRAINING", "SERVING", "BULK_INFERENCE", "OTHER")
ACTIVITIES = ("IDLE", "INIT", "PREP", "COMPILE", "RESTORE", "DATA_WAIT",
              "CHECKPOINT", "CUSTOM", "TRAINING", "SERVING", "RESHARD")
REASONS = ("PREEMPTED", "FAILED", "HOST_FAILURE", "MAINTENANCE", "OTHER")
OUTCOMES = ("SUCCEEDED", "FAILED", "CANCELLED")


def format_time(unix_seconds):
    """RFC 3339 UTC with milliseconds, e.g. 2026-11-22T10:00:00.123Z."""
    ms = int(round(unix_seconds * 1000))
    dt = datetime.datetime.fromtimestamp(ms // 1000, tz=datetime.timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + ".%03dZ" % (ms % 1000)


def check_enum(field, value, allowed):
    """Returns `value` upper-cased if it is one of `allowed`, else raises."""
    name = str(value).upper()
    if name not in allowed:
        raise ValueError("%s: must be one of %s, got %r" %
                         (field, ", ".join(allowed), value))
    return name


def check_number(field, value):
    """Returns `value` as a float if finite and >= 0, else raises."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    if not math.isfinite(number) or number < 0:
        raise ValueError("%s: must be a finite number >= 0, got %r" %
                         (field, value))
    return number


def make_event(kind, body, job_id, unix_seconds, attempt=None, host=None):
    """One Event as a dict: {"time", "job_id", ["host"], ["attempt"], kind: body}."""
    event = {"time": format_time(unix_seconds), "job_id": job_id}
    if host:
        event["host"] = host
    if attempt:
        event["attempt"] = attempt
    event[kind] = body
    return event


def to_line(event):
    """The event as one compact JSON line ending in a newline."""
    return json.dumps(event, separators=(",", ":"), sort_keys=False) + "\n"
