"""Client for the goodput service: record a training or serving job's events.

    import goodput
    rec = goodput.Recorder(job_id="llm-7", chips=8, accelerator="tpu-v5p")
    with rec.activity("COMPILE"):
        compile_model()
    for step in range(n):
        train_step()
        rec.step(step + 1)
    rec.ended("SUCCEEDED")

Standard library only. See clients/python/README.md.
"""

from goodput.recorder import Recorder, detect_rank
from goodput.transport import Transport, DEFAULT_SOCKET, DEFAULT_SPOOL_DIR
from goodput.wire import format_time, make_event

__all__ = [
    "Recorder",
    "Transport",
    "DEFAULT_SOCKET",
    "DEFAULT_SPOOL_DIR",
    "detect_rank",
    "format_time",
    "make_event",
]
