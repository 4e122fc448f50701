#!/usr/bin/env python3
"""Inclusive time shares from a `perf record --call-graph=dwarf` profile.

Reads `perf script` output on stdin. Of the samples whose stack contains
ROOT (a substring of a frame), prints the share of each category: a sample
goes to the first category (in the order given) whose regex matches any
frame of its stack, else to "other". Template arguments are stripped from
frame names before matching. Used for the profiles in BENCHMARKS.md, e.g.

  perf record -F 300 --call-graph=dwarf,16384 -o ing.data -- \\
      ingest_bench throughput --reps=1
  perf script -i ing.data | bench/perf_shares.py IngestService::Stream \\
      'memtable_insert=MemTable::Add' 'live_apply=LiveState::ApplyBatch'
"""
import collections
import re
import sys


def frames(lines):
    """Yields the stack (list of frame names, innermost first) per sample."""
    stack = []
    for line in lines:
        line = line.rstrip('\n')
        if not line.strip():
            if stack:
                yield stack
            stack = []
            continue
        if line[0] in ' \t':
            parts = line.strip().split(None, 1)
            if len(parts) == 2:
                f = re.sub(r'\+0x[0-9a-f]+ \(.*\)$|\s\(.*\)$', '', parts[1])
                prev = None
                while prev != f:
                    prev, f = f, re.sub(r'<[^<>]*>', '', f)
                stack.append(f)
        else:
            if stack:
                yield stack
            stack = []
    if stack:
        yield stack


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    cats = [(c.split('=', 1)[0], re.compile(c.split('=', 1)[1]))
            for c in sys.argv[2:]]
    total = under = 0
    count = collections.Counter()
    for stack in frames(sys.stdin):
        total += 1
        if not any(root in f for f in stack):
            continue
        under += 1
        for label, rx in cats:
            if any(rx.search(f) for f in stack):
                count[label] += 1
                break
        else:
            count['other'] += 1
    print(f'samples: {total}, under {root}: {under} '
          f'({100.0 * under / max(total, 1):.1f}%)')
    for label in [c[0] for c in cats] + ['other']:
        print(f'  {label:40s} {100.0 * count[label] / max(under, 1):5.1f}%')


if __name__ == '__main__':
    main()
