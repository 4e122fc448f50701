#!/usr/bin/python3
"""A small PyTorch job on CPU that reports to goodput with the recorder.

It trains an MLP on synthetic data, saves a checkpoint every
--checkpoint_every steps (atomically: step-N.pt.tmp, then rename), and on
start resumes from the newest checkpoint in --checkpoint_dir (a RESTORE
activity with the step). Independently of the recorder it appends its own
truth log (--truth, JSON Lines): the process start time from the kernel,
each activity's wall-clock start and end, every step's completion time and
every checkpoint, so tests can check the service's report against it.

    goodput-run --job_id=mlp --chips=1 --accelerator=cpu --max_restarts=3 -- \\
        /usr/bin/python3 examples/pytorch/train.py --steps=200 \\
        --checkpoint_dir=/tmp/mlp-ckpt --truth=/tmp/mlp-truth.jsonl

--world_size=2 runs two processes (torch.multiprocessing, gloo backend,
DistributedDataParallel); only rank 0 reports (the recorder's default).
Run it with Debian's /usr/bin/python3 (python3-torch).
"""

import argparse
import json
import os
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python"))

import goodput  # noqa: E402  (stdlib only: cheap to import first)


def process_start_time():
    """This process's start (fork) time as Unix seconds, from the kernel.

    /proc/self/stat gives it in clock ticks (10 ms) of CLOCK_BOOTTIME; the
    process's age is converted with the current wall clock (not /proc/stat's
    btime, which is whole seconds and drifts with clock adjustments)."""
    with open("/proc/self/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    start = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22 of stat(5)
    age = time.clock_gettime(time.CLOCK_BOOTTIME) - start
    return time.time() - age


class Truth(object):
    """The job's own log: one JSON object per line, flushed at once."""

    def __init__(self, path):
        self._f = open(path, "a") if path else None

    def write(self, kind, **fields):
        if self._f:
            fields["e"] = kind
            self._f.write(json.dumps(fields) + "\n")
            self._f.flush()

    def span(self, kind, **fields):
        return _TruthSpan(self, kind, fields)


class _TruthSpan(object):
    def __init__(self, truth, kind, fields):
        self.truth, self.kind, self.fields = truth, kind, fields

    def __enter__(self):
        self.t0 = time.time()
        return self

    def __exit__(self, *exc):
        self.truth.write(self.kind, t0=self.t0, t1=time.time(), **self.fields)


def newest_checkpoint(directory):
    """(step, path) of the newest complete checkpoint, or (0, None)."""
    best = (0, None)
    for name in os.listdir(directory):
        if name.startswith("step-") and name.endswith(".pt"):
            step = int(name[len("step-"):-len(".pt")])
            best = max(best, (step, os.path.join(directory, name)))
    return best


def batch(torch, step, rank, args):
    """Deterministic synthetic data for (step, rank)."""
    g = torch.Generator().manual_seed(step * 1000 + rank)
    x = torch.randn(args.batch, args.features, generator=g)
    y = (x[:, :4].sum(dim=1) > 0).long()
    return x, y


def train(rank, args):
    truth = Truth(args.truth if rank == 0 else None)
    rec = goodput.Recorder(job_id=args.job_id, chips=args.world_size,
                           accelerator="cpu", framework="pytorch",
                           rank=rank)
    with truth.span("init"), rec.activity("INIT"):
        import torch
        import torch.distributed as dist
        torch.set_num_threads(1)
        if args.world_size > 1:
            dist.init_process_group("gloo", rank=rank,
                                    world_size=args.world_size)
    with truth.span("prep"), rec.activity("PREP"):
        torch.manual_seed(0)
        model = torch.nn.Sequential(
            torch.nn.Linear(args.features, args.hidden), torch.nn.ReLU(),
            torch.nn.Linear(args.hidden, 2))
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        os.makedirs(args.checkpoint_dir, exist_ok=True)
    start, path = newest_checkpoint(args.checkpoint_dir)
    if path:
        with truth.span("restore", step=start), \
                rec.activity("RESTORE", step=start):
            state = torch.load(path)
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["opt"])
    if args.world_size > 1:
        model = torch.nn.parallel.DistributedDataParallel(model)
    with truth.span("compile"), rec.activity("COMPILE"):
        x, y = batch(torch, 0, rank, args)  # warm-up: allocations, kernels
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.zero_grad()
    truth.write("ready", t=time.time())
    for step in range(start + 1, args.steps + 1):
        x, y = batch(torch, step, rank, args)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        truth.write("step", step=step, t=time.time(), loss=float(loss))
        rec.step(step)
        if step % args.checkpoint_every == 0 and rank == 0:
            with truth.span("checkpoint", step=step), \
                    rec.activity("CHECKPOINT"):
                save(torch, model, opt, step, args.checkpoint_dir)
                rec.checkpoint(step)
        if step % args.checkpoint_every == 0 and args.world_size > 1:
            dist.barrier()
    truth.write("end", t=time.time())
    if "GOODPUT_ATTEMPT" not in os.environ:
        rec.ended("SUCCEEDED")  # no launcher: the job reports its own end
    rec.close()


def save(torch, model, opt, step, directory):
    module = getattr(model, "module", model)
    path = os.path.join(directory, "step-%d.pt" % step)
    torch.save({"model": module.state_dict(), "opt": opt.state_dict()},
               path + ".tmp")
    os.rename(path + ".tmp", path)


def spawned(rank, args):
    os.environ["RANK"] = str(rank)
    train(rank, args)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--job_id", default=os.environ.get("GOODPUT_JOB_ID",
                                                      "pytorch-mlp"))
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--checkpoint_every", type=int, default=10)
    p.add_argument("--checkpoint_dir", required=True)
    p.add_argument("--truth", help="the job's own JSON Lines log")
    p.add_argument("--world_size", type=int, default=1)
    p.add_argument("--features", type=int, default=128)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--batch", type=int, default=128)
    args = p.parse_args()
    Truth(args.truth).write("process", t=process_start_time(),
                            pid=os.getpid(),
                            attempt=os.environ.get("GOODPUT_ATTEMPT"))
    if args.world_size == 1:
        train(0, args)
        return
    import torch.multiprocessing as mp
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = str(s.getsockname()[1])
    mp.spawn(spawned, args=(args,), nprocs=args.world_size)


if __name__ == "__main__":
    main()
