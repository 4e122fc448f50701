#!/usr/bin/python3
"""Checkpoint advice against goodput-sim's own truth (issue 18 part 2).

Sweeps goodput-sim's --checkpoint_interval over a doubling grid at a fixed
--mtbi and several seeds. For each interval: the share of TRAINING jobs'
allocated chip-time (total - queued - recovery) that the simulator's truth
books as lost + checkpoint, summed over seeds. For each seed, the advice
from one run's events at --advice_interval: goodputctl replay --json gives
the TRAINING jobs' seconds and interruptions, the events give the number of
checkpoint saves, and the Young/Daly formula of core/checkpoint_advice.cc
(mirrored in advise() below, tested there by hand-computed cases) gives
sqrt(2 C M) over the TRAINING fleet: M = running seconds / interruptions,
C = CHECKPOINT seconds / saves. The advice passes when it lies within a
factor of 2 of the interval with the least lost + checkpoint share.

Usage: checkpoint_sweep.py --sim=PATH --goodputctl=PATH [--seeds=1,2,3]
         [--grid=450,900,1800,3600,7200] [--mtbi=4h] [--jobs=40]
         [--hosts=64] [--duration=12h] [--advice_interval=1800]
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

ALLOCATED_OUT = ("queued", "recovery")


def run_sim(args, seed, interval, work):
    events = os.path.join(work, "ev-%d-%d.jsonl" % (seed, interval))
    truth = os.path.join(work, "truth-%d-%d.json" % (seed, interval))
    subprocess.run([args.sim, "--seed=%d" % seed, "--jobs=%d" % args.jobs,
                    "--hosts=%d" % args.hosts, "--duration=" + args.duration,
                    "--mtbi=" + args.mtbi, "--mtbi_chips=0",
                    "--checkpoint_interval=%ds" % interval,
                    "--out=" + events, "--truth=" + truth], check=True)
    return events, truth


def training_jobs(events):
    """job_id -> number of checkpoint events, for TRAINING jobs."""
    workload, saves = {}, {}
    for line in open(events):
        e = json.loads(line)
        job = e.get("jobId", e.get("job_id"))
        sub = e.get("jobSubmitted", e.get("job_submitted"))
        if sub is not None:
            workload[job] = sub.get("workload", "TRAINING")
        if "checkpoint" in e:
            saves[job] = saves.get(job, 0) + 1
    return {j: saves.get(j, 0) for j, w in workload.items()
            if w == "TRAINING"}


def truth_share(truth, training):
    """(lost + checkpoint) / allocated chip-seconds of TRAINING jobs."""
    bad = alloc = 0.0
    for job in json.load(open(truth))["jobs"]:
        if job["job_id"] not in training:
            continue
        s, chips = job["seconds"], job["chips"]
        bad += chips * (s["lost"] + s["checkpoint"])
        alloc += chips * (s["total"] - sum(s[c] for c in ALLOCATED_OUT))
    return bad, alloc


def advise(run, interruptions, checkpoint_seconds, saves):
    """core::AdviseCheckpoint for a fleet aggregate: sqrt(2 C M)."""
    if interruptions <= 0 or saves <= 0:
        return None
    m = run / interruptions
    c = checkpoint_seconds / saves
    return math.sqrt(2 * c * m), m, c


def advice_of_run(args, events, training):
    out = subprocess.run([args.goodputctl, "replay", "--json", events],
                         check=True, capture_output=True, text=True).stdout
    run = interruptions = ckpt = 0.0
    saves = 0
    for job in json.loads(out)["jobs"]:
        if job["job_id"] not in training:
            continue
        s = job["seconds"]
        run += s["total"] - sum(s[c] for c in ALLOCATED_OUT)
        interruptions += job["interruptions"]
        ckpt += s["checkpoint"]
        saves += training[job["job_id"]]
    return advise(run, interruptions, ckpt, saves)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sim", required=True)
    p.add_argument("--goodputctl", required=True)
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--grid", default="450,900,1800,3600,7200")
    p.add_argument("--mtbi", default="4h")
    p.add_argument("--jobs", type=int, default=40)
    p.add_argument("--hosts", type=int, default=64)
    p.add_argument("--duration", default="12h")
    p.add_argument("--advice_interval", type=int, default=1800)
    args = p.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    grid = [int(g) for g in args.grid.split(",")]
    shares, advices = {}, []
    with tempfile.TemporaryDirectory() as work:
        for interval in grid:
            bad = alloc = 0.0
            for seed in seeds:
                events, truth = run_sim(args, seed, interval, work)
                training = training_jobs(events)
                b, a = truth_share(truth, training)
                bad, alloc = bad + b, alloc + a
                if interval == args.advice_interval:
                    advices.append((seed, advice_of_run(args, events,
                                                        training)))
            shares[interval] = bad / alloc
    best = min(grid, key=lambda g: shares[g])
    print("interval_s  lost+checkpoint share of TRAINING allocated time")
    for g in grid:
        print("%10d  %.4f%s" % (g, shares[g], "  <- least" if g == best
                                else ""))
    ok = True
    for seed, a in advices:
        if a is None:
            print("seed %d: no advice (no interruption or save)" % seed)
            ok = False
            continue
        tau, m, c = a
        within = best / 2 <= tau <= best * 2
        ok = ok and within
        print("seed %d: M %.0f s, C %.1f s, advised %.0f s (%.2fx the "
              "least-loss interval): %s" % (seed, m, c, tau, tau / best,
                                            "within 2x" if within else
                                            "OUTSIDE 2x"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
