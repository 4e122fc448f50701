#!/usr/bin/python3
"""Feeds a JSON Lines fleet log into goodput-agent's Unix socket, live.

The log's timeline is moved to start now and compressed by --speed (a 2 h
log at 60x plays in 2 min). Every duration shrinks by the same factor: the
times, a step's input_wait_seconds and idle_seconds, and (so that ideal
step time shrinks with real step time) its FLOPs and bytes. Every ratio
(SG, RG, PG, MPG, goodput) is then what the original log gives, as long as
the server's --stall_after is scaled too (600 s / speed).
Standard library only; run it with /usr/bin/python3.
"""
import argparse
import datetime
import json
import socket
import sys
import time


def parse_time(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def format_time(t):
    return t.astimezone(datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


SCALED = {
    "step": ("flops", "bytes", "input_wait_seconds", "idle_seconds"),
    "job_submitted": ("step_flops", "step_bytes"),
}


def compress(event, speed):
    """Divides the event's durations and costs by `speed`, in place."""
    for kind, fields in SCALED.items():
        body = event.get(kind)
        for field in fields if body else ():
            if field in body:
                body[field] = float(body[field]) / speed


def load(path):
    events = []
    with open(path) as f:
        for line in f:
            if line.strip():
                events.append(json.loads(line))
    events.sort(key=lambda e: parse_time(e["time"]))
    return events


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--socket", required=True)
    ap.add_argument("--speed", type=float, default=60.0)
    ap.add_argument("log")
    args = ap.parse_args()
    events = load(args.log)
    start_old = parse_time(events[0]["time"])
    start_new = datetime.datetime.now(datetime.timezone.utc)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(args.socket)
    for e in events:
        offset = (parse_time(e["time"]) - start_old) / args.speed
        due = start_new + offset
        wait = (due - datetime.datetime.now(datetime.timezone.utc))
        if wait.total_seconds() > 0:
            time.sleep(wait.total_seconds())
        e["time"] = format_time(due)
        compress(e, args.speed)
        sock.sendall((json.dumps(e, separators=(",", ":")) + "\n").encode())
    sock.close()
    print(f"demo_feed: sent {len(events)} events", file=sys.stderr)


if __name__ == "__main__":
    main()
