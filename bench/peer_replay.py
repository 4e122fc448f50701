#!/usr/bin/python3
"""goodputctl replay against the peer library, whole process, in one run.

Builds one job timeline of N steps (1 s each, a checkpoint every 100 steps)
twice: as goodput JSON Lines for `goodputctl replay`, and as the log entries
of ml-goodput-measurement (job_start_time, step_start_time per step,
job_end_time) for the peer's GoodputCalculator.get_job_goodput. Then times
both as fresh processes (cold: interpreter, imports and all), alternating,
and prints wall and CPU time per tool and their ratio.

The peer runs from its source, unmodified, with Debian's python3-numpy,
python3-scipy, python3-requests and python3-urllib3; its Cloud imports
(google.cloud.logging, google.cloud.storage) are empty stub modules, which
only its cloud paths use. Its logger is an in-memory list (as in its own
tests' MockCloudLogger). Nothing of the peer is kept in this repository:
its source is exported from a git directory at run time, e.g. the one
`fetch github:AI-Hypercomputer/ml-goodput-measurement` gives.

Usage:
  bench/peer_replay.py --goodputctl=build-rel/cli/goodputctl \\
      --peer_git=/work/.mirror/AI-Hypercomputer+ml-goodput-measurement/repo \\
      [--goodputctl_before=OLD_GOODPUTCTL] [--steps=100000] [--runs=7] \\
      [--workdir=/tmp/gp_peer]
"""

import argparse
import datetime
import json
import os
import resource
import statistics
import subprocess
import sys
import time

T0 = datetime.datetime(2026, 11, 22, 10, 0, 0, tzinfo=datetime.timezone.utc)

PEER_MAIN = r'''
import json, sys
from cloud_goodput.ml_goodput_measurement.src import goodput

class ListLogger:
  def __init__(self, entries):
    self.entries = entries
  def read_cloud_logging_entries(self, start_time=None, end_time=None,
                                 last_entry_info=None):
    return self.entries, None
  def write_cloud_logging_entry(self, entry):
    self.entries.append(entry)

with open(sys.argv[1]) as f:
  entries = [json.loads(line) for line in f]
calc = goodput.GoodputCalculator('job-0', 'bench', cloud_logger=ListLogger(entries),
                                 cache_dir=sys.argv[2])
value, badput, step = calc.get_job_goodput(include_badput_breakdown=True)
print('goodput %.6f%% last step %d' % (value, step))
'''


def Rfc3339(seconds):
  t = T0 + datetime.timedelta(seconds=seconds)
  return t.strftime('%Y-%m-%dT%H:%M:%SZ')


def WriteGoodput(path, steps):
  with open(path, 'w') as f:
    def Line(seconds, body):
      f.write(json.dumps({'time': Rfc3339(seconds), 'job_id': 'job-0', **body},
                         separators=(',', ':')) + '\n')
    Line(0, {'job_submitted': {'chips': 256, 'accelerator': 'tpu-v5p',
                               'workload': 'TRAINING', 'step_flops': 1e17}})
    Line(0, {'started': {}})
    for i in range(1, steps + 1):
      Line(i, {'step': {'step': i}})
      if i % 100 == 0:
        Line(i, {'checkpoint': {'step': i}})
    Line(steps, {'job_ended': {'outcome': 'SUCCEEDED'}})


def WritePeer(path, steps):
  start = T0.timestamp()
  with open(path, 'w') as f:
    def Entry(d):
      f.write(json.dumps({'job_name': 'job-0', **d}) + '\n')
    Entry({'job_start_time': start})
    for i in range(1, steps + 1):  # step i runs from i-1 to i seconds
      Entry({'step_count': i, 'step_start_time': start + i - 1})
    Entry({'job_end_time': start + steps})


def ExportPeer(peer_git, root):
  """The peer's src/ as cloud_goodput.ml_goodput_measurement.src, plus stubs."""
  pkg = os.path.join(root, 'cloud_goodput', 'ml_goodput_measurement')
  os.makedirs(pkg, exist_ok=True)
  archive = subprocess.run(
      ['git', '--git-dir=' + peer_git, 'archive', 'HEAD',
       'ml_goodput_measurement/src'], check=True, capture_output=True).stdout
  subprocess.run(['tar', '-x', '--strip-components=1', '-C', pkg],
                 input=archive, check=True)
  for d in ['cloud_goodput', 'cloud_goodput/ml_goodput_measurement',
            'cloud_goodput/ml_goodput_measurement/src', 'google',
            'google/cloud']:
    os.makedirs(os.path.join(root, d), exist_ok=True)
    open(os.path.join(root, d, '__init__.py'), 'a').close()
  for stub in ['logging', 'storage']:  # only the peer's cloud paths use them
    with open(os.path.join(root, 'google', 'cloud', stub + '.py'), 'w') as f:
      f.write('# stub: the benchmark uses no Google Cloud service\n'
              'class Client:\n  pass\n')
  with open(os.path.join(root, 'peer_main.py'), 'w') as f:
    f.write(PEER_MAIN)


def Timed(cmd, env):
  """(wall seconds, child CPU seconds, stdout) of one run of `cmd`."""
  before = resource.getrusage(resource.RUSAGE_CHILDREN)
  start = time.perf_counter()
  out = subprocess.run(cmd, env=env, check=True, capture_output=True,
                       text=True).stdout
  wall = time.perf_counter() - start
  after = resource.getrusage(resource.RUSAGE_CHILDREN)
  cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
  return wall, cpu, out


def main():
  p = argparse.ArgumentParser()
  p.add_argument('--goodputctl', required=True)
  p.add_argument('--goodputctl_before', default='',
                 help='optional: an older goodputctl, timed in the same run')
  p.add_argument('--peer_git', required=True)
  p.add_argument('--steps', type=int, default=100000)
  p.add_argument('--runs', type=int, default=7)
  p.add_argument('--workdir', default='/tmp/gp_peer')
  a = p.parse_args()
  os.makedirs(a.workdir, exist_ok=True)
  ours = os.path.join(a.workdir, 'job.jsonl')
  theirs = os.path.join(a.workdir, 'peer_entries.jsonl')
  WriteGoodput(ours, a.steps)
  WritePeer(theirs, a.steps)
  ExportPeer(a.peer_git, a.workdir)
  env = dict(os.environ, PYTHONPATH=a.workdir, PYTHONDONTWRITEBYTECODE='1')
  cmds = {
      'goodputctl': [a.goodputctl, 'replay', ours, '--json'],
      'peer': ['/usr/bin/python3', os.path.join(a.workdir, 'peer_main.py'),
               theirs, a.workdir],
  }
  if a.goodputctl_before:
    cmds['before'] = [a.goodputctl_before, 'replay', ours, '--json']
  times = {name: [] for name in cmds}
  for run in range(a.runs):
    for name, cmd in cmds.items():
      wall, cpu, out = Timed(cmd, env)
      times[name].append((wall, cpu))
      if run == 0:
        print('%s: %s' % (name, out.strip().splitlines()[0][:100]))
  print('load average (1, 5, 15 min): %.2f %.2f %.2f' % os.getloadavg())
  med = {}
  for name, t in times.items():
    walls, cpus = [w for w, _ in t], [c for _, c in t]
    med[name] = (statistics.median(walls), statistics.median(cpus))
    print('%-10s wall median %7.1f ms (min %7.1f)  cpu median %7.1f ms'
          % (name, 1e3 * med[name][0], 1e3 * min(walls), 1e3 * med[name][1]))
  for other in [n for n in med if n != 'goodputctl']:
    print('%s / goodputctl: wall %.1fx, cpu %.1fx'
          % (other, med[other][0] / med['goodputctl'][0],
             med[other][1] / med['goodputctl'][1]))


if __name__ == '__main__':
  sys.exit(main())
