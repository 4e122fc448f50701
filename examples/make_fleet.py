#!/usr/bin/env python3
"""Writes fleet.jsonl, the example fleet log (see README.md). Deterministic.

Usage: python3 examples/make_fleet.py > examples/fleet.jsonl
"""
import json
import sys
from datetime import datetime, timedelta, timezone

T0 = datetime(2026, 11, 22, 10, 0, 0, tzinfo=timezone.utc)
END = T0 + timedelta(hours=2)
events = []


def at(seconds):
    return T0 + timedelta(seconds=seconds)


def emit(t, body_name, body, job_id=None, host=None, attempt=None):
    e = {"time": t.strftime("%Y-%m-%dT%H:%M:%S") +
         (".%03dZ" % (t.microsecond // 1000) if t.microsecond else "Z")}
    if job_id:
        e["job_id"] = job_id
    if host:
        e["host"] = host
    if attempt:
        e["attempt"] = attempt
    e[body_name] = body
    events.append((t, e))


def hms(h, m, s=0):
    return at(h * 3600 + m * 60 + s - 10 * 3600)


def heartbeats():
    hosts = [("tpu-v6e-host-0", 8, "tpu-v6e"), ("tpu-v6e-host-1", 8, "tpu-v6e"),
             ("tpu-v6e-host-2", 8, "tpu-v6e"), ("gpu-host-0", 8, "h100")]
    for i, (host, chips, acc) in enumerate(hosts):
        t = at(i)
        while t <= END:
            # gpu-host-0 is down from its HOST_FAILURE (10:40) until 10:46.
            down = host == "gpu-host-0" and hms(10, 40, 30) < t < hms(10, 46)
            if not down:
                emit(t, "heartbeat", {"chips": chips, "accelerator": acc},
                     host=host)
            t += timedelta(seconds=60)


def llm_pretrain():
    """16-chip TPU training: init/compile, checkpoints, preemption, restore."""
    j, h = "llm-pretrain", "tpu-v6e-host-0"
    ev = lambda t, n, b, a: emit(t, n, b, job_id=j, host=h, attempt=a)
    ev(hms(10, 0), "job_submitted", {
        "chips": 16, "accelerator": "tpu-v6e", "workload": "TRAINING",
        "framework": "jax", "labels": {"team": "lm", "priority": "high"},
        "step_flops": 2.0e16, "step_bytes": 1.5e13}, None)
    ev(hms(10, 2), "allocation", {"chips": 16}, None)
    step = run_attempt(ev, "a1", hms(10, 2, 5), 0, None,
                       stop=hms(10, 47, 10), checkpoint_every=15)
    ev(hms(10, 46, 40), "interruption",
       {"reason": "PREEMPTED", "notice": True}, "a1")
    ev(hms(10, 47, 10), "interruption", {"reason": "PREEMPTED"}, "a1")
    ev(hms(10, 47, 10), "allocation", {"chips": 0}, None)
    ev(hms(10, 55), "allocation", {"chips": 16}, None)
    run_attempt(ev, "a2", hms(10, 55, 10), step, step, stop=END,
                checkpoint_every=15, extras=True)


def run_attempt(ev, attempt, start, last_ckpt, restore, stop,
                checkpoint_every, extras=False):
    """One attempt of llm-pretrain; returns the last durable step."""
    ev(start, "started", {}, attempt)
    ev(start, "activity", {"kind": "INIT"}, attempt)
    t = start + timedelta(seconds=60)
    if restore is not None:
        ev(t, "activity", {"kind": "RESTORE", "step": restore}, attempt)
        t += timedelta(seconds=45)
    else:
        ev(t, "activity", {"kind": "PREP"}, attempt)
        t += timedelta(seconds=55)
    ev(t, "activity", {"kind": "COMPILE"}, attempt)
    t += timedelta(seconds=120)
    ev(t, "activity", {"kind": "TRAINING"}, attempt)
    step, next_ckpt = last_ckpt, t + timedelta(minutes=checkpoint_every)
    eval_done = data_wait_done = not extras
    while True:
        t += timedelta(seconds=30)
        if t >= stop:
            return last_ckpt
        step += 10
        ev(t, "step", {"step": step, "input_wait_seconds": 0.6}, attempt)
        if t >= next_ckpt and t + timedelta(seconds=20) < stop:
            ev(t, "activity", {"kind": "CHECKPOINT"}, attempt)
            t += timedelta(seconds=20)
            ev(t, "checkpoint", {"step": step}, attempt)
            ev(t, "activity", {"kind": "TRAINING"}, attempt)
            last_ckpt, next_ckpt = step, t + timedelta(minutes=checkpoint_every)
        elif not eval_done and t >= hms(11, 15):
            ev(t, "activity", {"kind": "CUSTOM", "name": "eval"}, attempt)
            t += timedelta(seconds=180)
            ev(t, "activity", {"kind": "TRAINING"}, attempt)
            eval_done = True
        elif not data_wait_done and t >= hms(11, 30):
            ev(t, "activity", {"kind": "DATA_WAIT"}, attempt)
            t += timedelta(seconds=120)
            ev(t, "activity", {"kind": "TRAINING"}, attempt)
            data_wait_done = True


def chat_serve():
    """8-chip TPU serving: steps are request batches with idle time."""
    j, h = "chat-serve", "tpu-v6e-host-2"
    ev = lambda t, n, b: emit(t, n, b, job_id=j, host=h)
    ev(hms(10, 0, 30), "job_submitted", {
        "chips": 8, "accelerator": "tpu-v6e", "workload": "SERVING",
        "framework": "jax", "labels": {"team": "assistant"}}, )
    ev(hms(10, 1), "allocation", {"chips": 8})
    ev(hms(10, 1, 5), "started", {})
    ev(hms(10, 1, 5), "activity", {"kind": "INIT"})
    ev(hms(10, 3), "activity", {"kind": "SERVING"})
    t, step = hms(10, 3), 0
    for i in range(1, 200):
        t += timedelta(seconds=60)
        if t > END:
            break
        step += 120
        ev(t, "step", {"step": step, "flops": 1.0e17 + 1e15 * (i % 7),
                       "bytes": 2.9e14, "idle_seconds": 5 + (i * 7) % 20})


def rl_tune():
    """8-chip GPU training that dies with its host."""
    j, h = "rl-tune", "gpu-host-0"
    ev = lambda t, n, b: emit(t, n, b, job_id=j, host=h)
    ev(hms(10, 5), "job_submitted", {
        "chips": 8, "accelerator": "h100", "workload": "TRAINING",
        "framework": "pytorch", "labels": {"team": "rl"},
        "step_flops": 1.5e16})
    ev(hms(10, 6), "allocation", {"chips": 8})
    ev(hms(10, 6, 10), "started", {})
    ev(hms(10, 6, 10), "activity", {"kind": "INIT"})
    ev(hms(10, 7), "activity", {"kind": "COMPILE"})
    ev(hms(10, 9), "activity", {"kind": "TRAINING"})
    for i in range(1, 31):
        ev(hms(10, 9) + timedelta(seconds=60 * i), "step", {"step": 20 * i})
        if i == 16:
            ev(hms(10, 25), "checkpoint", {"step": 20 * i})
    ev(hms(10, 40, 12), "interruption", {"reason": "HOST_FAILURE"})
    ev(hms(10, 41), "job_ended", {"outcome": "FAILED"})


def vision_ft():
    """8-chip GPU fine-tune that queues behind rl-tune and the host repair."""
    j, h = "vision-ft", "gpu-host-0"
    ev = lambda t, n, b: emit(t, n, b, job_id=j, host=h)
    ev(hms(10, 8), "job_submitted", {
        "chips": 8, "accelerator": "h100", "workload": "TRAINING",
        "framework": "pytorch", "labels": {"team": "vision"}})
    ev(hms(10, 50), "allocation", {"chips": 8})
    ev(hms(10, 50, 10), "started", {})
    ev(hms(10, 50, 10), "activity", {"kind": "INIT"})
    ev(hms(10, 51), "activity", {"kind": "PREP"})
    ev(hms(10, 52), "activity", {"kind": "TRAINING"})
    t = hms(10, 52)
    # No COMPILE activity: the slow first step's excess is compile (rule 4).
    t += timedelta(seconds=150)
    ev(t, "step", {"step": 1, "flops": 3.8e15, "input_wait_seconds": 0.5})
    for i in range(1, 53):  # then a report every 50 steps
        t += timedelta(seconds=60)
        ev(t, "step", {"step": 50 * i, "flops": 3.8e15 * (50 if i > 1 else 49),
                       "input_wait_seconds": 1.5})
        if i % 10 == 0:
            ev(t + timedelta(seconds=5), "checkpoint", {"step": 50 * i})
    ev(t + timedelta(seconds=30), "checkpoint", {"step": 50 * 52})
    ev(t + timedelta(seconds=40), "job_ended", {"outcome": "SUCCEEDED"})


def emb_backfill():
    """Steps only: no job_submitted, so no chips, accelerator or activity."""
    j, h = "emb-backfill", "a100-spot-12"
    for i in range(1, 41):
        emit(hms(10, 30) + timedelta(seconds=120 * i), "step",
             {"step": 1000 * i}, job_id=j, host=h)
    emit(hms(11, 50, 30), "job_ended", {"outcome": "SUCCEEDED"}, job_id=j,
         host=h)


def main():
    for make in (heartbeats, llm_pretrain, chat_serve, rl_tune, vision_ft,
                 emb_backfill):
        make()
    keys = set()
    for t, e in events:
        kind = [k for k in e if k not in ("time", "job_id", "host", "attempt")]
        key = (e.get("job_id") or e["host"], e["time"], kind[0])
        assert key not in keys, key  # one apply order for any line order
        keys.add(key)
    events.sort(key=lambda te: te[0])
    for _, e in events:
        sys.stdout.write(json.dumps(e, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
