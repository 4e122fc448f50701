#!/usr/bin/python3
"""Writes e2e_fleet.jsonl, the scripted fleet of tests/prometheus_e2e_test.

Deterministic. Times start at 2026-01-01T00:00:00Z; the test shifts every
time so the last event is a minute before it runs (the validator rejects
events more than 300 s ahead, and the exporter's windows are in event time).

Usage: /usr/bin/python3 tests/testdata/make_e2e_fleet.py \
           > tests/testdata/e2e_fleet.jsonl

Hosts starting with "a-" go to the test's first agent, "b-" to the second.
Every attempt reports COMPILE before its first step, so the counters' and
the report's compile shares agree exactly (SPEC rule 4).
  job-1  16 tpu-v5p, TRAINING jax: checkpoint at step 50, PREEMPTED at
         14:30 (steps 60-100 lost), recovery, RESTORE 50, SUCCEEDED.
  job-2  8 h100, TRAINING pytorch: the slow program (PG about 0.17).
  job-3  8 tpu-v6e, SERVING jax: idle time inside steps.
  job-4  128 tpu-v6e, TRAINING jax: queued 9 min, HOST_FAILURE at 29:30
         after a checkpoint at 22:00, FAILED (lost work).
  Heartbeats every 2 min from five hosts (one idle) for capacity SG.
"""
import json
from datetime import datetime, timedelta, timezone

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
EVENTS = []


def emit(sec, body_name, body, job_id=None, host=None, attempt=None):
    t = T0 + timedelta(seconds=sec)
    e = {"time": t.strftime("%Y-%m-%dT%H:%M:%SZ")}
    if job_id:
        e["job_id"] = job_id
    if host:
        e["host"] = host
    if attempt:
        e["attempt"] = attempt
    e[body_name] = body
    EVENTS.append((sec, len(EVENTS), e))


def m(minutes, seconds=0):
    return minutes * 60 + seconds


def job(job_id, host):
    return lambda sec, name, body, attempt=None: emit(
        sec, name, body, job_id=job_id, host=host, attempt=attempt)


def attempt_start(ev, sec, attempt, compile_at):
    ev(sec, "started", {}, attempt)
    ev(sec, "activity", {"kind": "INIT"}, attempt)
    ev(compile_at, "activity", {"kind": "COMPILE"}, attempt)


def job1():
    ev = job("job-1", "a-v5p-0")
    ev(m(0), "job_submitted", {"chips": 16, "accelerator": "tpu-v5p",
                               "workload": "TRAINING", "framework": "jax",
                               "labels": {"team": "lm"}})
    ev(m(1), "allocation", {"chips": 16})
    attempt_start(ev, m(1, 5), "a1", m(2))
    ev(m(4), "activity", {"kind": "TRAINING"}, "a1")
    # 10 steps a minute; ideal 36 s of 60 (PG 0.6).
    step = {"flops": 36 * 16 * 459e12, "bytes": 1e14}
    for k in range(1, 11):
        ev(m(4 + k), "step", dict(step, step=10 * k), "a1")
        if k == 5:
            ev(m(9), "checkpoint", {"step": 50}, "a1")
    ev(m(13, 50), "interruption", {"reason": "PREEMPTED", "notice": True}, "a1")
    ev(m(14, 30), "interruption", {"reason": "PREEMPTED"}, "a1")
    ev(m(18), "allocation", {"chips": 16})
    attempt_start(ev, m(18, 5), "a2", m(19))
    ev(m(20), "activity", {"kind": "RESTORE", "step": 50}, "a2")
    ev(m(21), "activity", {"kind": "TRAINING"}, "a2")
    for k in range(1, 11):
        ev(m(21 + k), "step", dict(step, step=50 + 10 * k), "a2")
        if k in (5, 10):
            ev(m(21 + k), "checkpoint", {"step": 50 + 10 * k}, "a2")
    ev(m(31, 30), "job_ended", {"outcome": "SUCCEEDED"})


def job2():
    ev = job("job-2", "a-h100-0")
    ev(m(2), "job_submitted", {"chips": 8, "accelerator": "h100",
                               "workload": "TRAINING", "framework": "pytorch",
                               "labels": {"team": "vision"}})
    ev(m(4), "allocation", {"chips": 8})
    attempt_start(ev, m(4, 5), "b1", m(5))
    ev(m(7), "activity", {"kind": "TRAINING"}, "b1")
    # 5 steps every 2 min, 15 s of input wait; ideal 18 s (PG about 0.17).
    for k in range(1, 16):
        sec = m(7 + 2 * k)
        ev(sec, "step", {"step": 5 * k, "flops": 18 * 8 * 989e12,
                         "input_wait_seconds": 15}, "b1")
        if k % 5 == 0:
            ev(sec, "checkpoint", {"step": 5 * k}, "b1")
    ev(m(37, 30), "job_ended", {"outcome": "SUCCEEDED"})


def job3():
    ev = job("job-3", "b-v6e-0")
    ev(m(3), "job_submitted", {"chips": 8, "accelerator": "tpu-v6e",
                               "workload": "SERVING", "framework": "jax",
                               "labels": {"team": "assistant"}})
    ev(m(3, 30), "allocation", {"chips": 8})
    attempt_start(ev, m(3, 35), "c1", m(4, 30))
    ev(m(6), "activity", {"kind": "SERVING"}, "c1")
    # A request batch a minute, 12 s idle inside; ideal 30 s (PG 0.625).
    for k in range(1, 37):
        ev(m(6 + k), "step", {"step": 100 * k, "flops": 30 * 8 * 918e12,
                              "idle_seconds": 12}, "c1")
    ev(m(43, 30), "job_ended", {"outcome": "SUCCEEDED"})


def job4():
    ev = job("job-4", "b-v6e-pod")
    ev(m(5), "job_submitted", {"chips": 128, "accelerator": "tpu-v6e",
                               "workload": "TRAINING", "framework": "jax",
                               "labels": {"team": "research"}})
    ev(m(14), "allocation", {"chips": 128})
    attempt_start(ev, m(14, 5), "d1", m(15))
    ev(m(17), "activity", {"kind": "TRAINING"}, "d1")
    for k in range(1, 12):  # ideal 40 s of 60 (PG 0.67)
        ev(m(17 + k), "step", {"step": 10 * k, "flops": 40 * 128 * 918e12},
           "d1")
        if k == 5:
            ev(m(22), "checkpoint", {"step": 50}, "d1")
    ev(m(29, 30), "interruption", {"reason": "HOST_FAILURE"}, "d1")
    ev(m(30), "job_ended", {"outcome": "FAILED"})


def heartbeats():
    hosts = [("a-v5p-0", 16, "tpu-v5p"), ("a-h100-0", 8, "h100"),
             ("b-v6e-0", 8, "tpu-v6e"), ("b-v6e-1", 8, "tpu-v6e"),
             ("b-v6e-pod", 128, "tpu-v6e")]
    for i, (host, chips, acc) in enumerate(hosts):
        for sec in range(i, m(44), 120):
            emit(sec, "heartbeat", {"chips": chips, "accelerator": acc},
                 host=host)


for f in (job1, job2, job3, job4, heartbeats):
    f()
for _, _, e in sorted(EVENTS, key=lambda x: (x[0], x[1])):
    print(json.dumps(e, separators=(",", ":")))
