#!/usr/bin/python3
"""A stand-in for goodputd's /metrics, for testing the dashboards' queries.

Usage: fake_exporter.py [--port=N]   (0 picks one; prints "fake_exporter: port N")

Serves every family of docs/metrics.md (one segment, one job `job-1`, one
agent) in Prometheus text format, counters growing with the seconds since
start, so a real Prometheus can scrape it, evaluate the recording rules and
answer every dashboard query. queries_live_test.sh checks that FAMILIES and
the doc agree. Single-threaded; serves until killed.
"""
import argparse
import http.server
import sys
import time

SEGMENT = ('accelerator="tpu-v5e",workload="TRAINING",framework="jax",'
           'size="<=512"')
JOB = 'job_id="job-1"'
# Chips per category (chip-seconds per second).
CATEGORIES = {"queued": 8, "recovery": 4, "init": 1, "prep": 1, "compile": 2,
              "restore": 1, "data_wait": 3, "checkpoint": 2, "custom": 0,
              "idle": 4, "productive": 96, "lost": 6}
BUCKETS = (10, 30, 60, 120, 300, 600)


def _counter(rate):
    return lambda t: rate * t


def _const(value):
    return lambda t: value


def _seg(extra=""):
    return SEGMENT + extra


def _fleet_families():
    """Fleet and segment families: {name: (type, [(labels, f(t))])}."""
    return {
        "goodput_chip_seconds_total": ("counter", [
            (_seg(',category="%s"' % c), _counter(r))
            for c, r in CATEGORIES.items()]),
        # Issue 18: chips x the example tpu-v5e $1.2/chip-h and 200 W.
        "goodput_cost_usd_total": ("counter", [
            (_seg(',category="%s"' % c), _counter(r * 1.2 / 3600))
            for c, r in CATEGORIES.items()]),
        "goodput_energy_kwh_total": ("counter", [
            (_seg(',category="%s"' % c), _counter(r * 200 / 3.6e6))
            for c, r in CATEGORIES.items()
            if c not in ("queued", "recovery")]),
        "goodput_ideal_chip_seconds_total": ("counter",
                                             [(_seg(), _counter(60))]),
        "goodput_costed_productive_chip_seconds_total": (
            "counter", [(_seg(), _counter(90))]),
        "goodput_capacity_chip_seconds_total": (
            "counter", [('accelerator="tpu-v5e"', _counter(160))]),
        "goodput_at_risk_chip_seconds": ("gauge", [(_seg(), _const(5000))]),
        "goodput_interruptions_total": ("counter", [
            (_seg(',reason="PREEMPTED"'), _counter(0.01))]),
        "goodput_interruption_notices_total": ("counter", [
            (_seg(',reason="MAINTENANCE"'), _counter(0.01))]),
        "goodput_jobs": ("gauge", [('state="%s"' % s, _const(n)) for s, n in
                                   (("QUEUED", 1), ("RUNNING", 3),
                                    ("RECOVERING", 0), ("ENDED", 2))]),
        "goodput_jobs_without_chips": ("gauge", [("", _const(0))]),
        "goodput_pg_above_one_total": ("counter", [(_seg(), _counter(0))]),
        "goodput_duplicate_events_total": ("counter", [("", _counter(0.1))]),
    }


def _job_families():
    return {
        "goodput_job_info": ("gauge", [(JOB + "," + _seg(',state="RUNNING"'),
                                        _const(1))]),
        "goodput_job_chips": ("gauge", [(JOB, _const(64))]),
        "goodput_job_chip_seconds_total": ("counter", [
            (JOB + ',category="%s"' % c, _counter(r / 2))
            for c, r in CATEGORIES.items()]),
        "goodput_job_at_risk_seconds": ("gauge", [(JOB, _const(120))]),
        "goodput_job_steps_total": ("counter", [(JOB, _counter(0.5))]),
        "goodput_job_last_step_timestamp_seconds": (
            "gauge", [(JOB, lambda t: time.time() - 1)]),
        "goodput_job_last_checkpoint_timestamp_seconds": (
            "gauge", [(JOB, lambda t: time.time() - 60)]),
        "goodput_job_series_suppressed_total": ("counter", [("", _counter(0))]),
        "goodput_job_series": ("gauge", [("", _const(1))]),
        "goodput_job_step_time_baseline_seconds": ("gauge", [(JOB, _const(2))]),
        "goodput_job_step_time_baseline_mad_seconds": (
            "gauge", [(JOB, _const(0.1))]),
        "goodput_job_step_time_baseline_steps": (
            "gauge", [(JOB, _const(5000))]),
        "goodput_job_step_time_recent_seconds": ("gauge", [(JOB, _const(2.2))]),
        "goodput_job_step_time_recent_steps": ("gauge", [(JOB, _const(100))]),
        "goodput_job_checkpoint_interval_advised_seconds": (
            "gauge", [(JOB, _const(1610))]),
        "goodput_job_checkpoint_interval_actual_seconds": (
            "gauge", [(JOB, _const(3600))]),
        "goodput_job_host_info": ("gauge", [
            (JOB + ',host="node-%d"' % n, _const(1)) for n in (1, 2)]),
    }


def _ingest_families():
    return {
        "goodput_ingest_batches_total": ("counter", [
            ('result="%s"' % r, _counter(1)) for r in
            ("stored", "duplicate", "failed")]),
        "goodput_ingest_events_total": ("counter", [
            ('result="accepted"', _counter(100)),
            ('result="rejected"', _counter(0.5))]),
        "goodput_ingest_store_writes_total": ("counter", [("", _counter(1))]),
        "goodput_ingest_busy_seconds_total": ("counter", [
            ("", _counter(0.2))]),
        "goodput_ingest_late_events_total": ("counter", [("", _counter(0))]),
        "goodput_dead_letters_total": ("counter", [("", _counter(0.5))]),
        "goodput_agent_last_seen_timestamp_seconds": (
            "gauge", [('agent_id="agent-1"', lambda t: time.time())]),
        "goodput_agent_last_heartbeat_timestamp_seconds": (
            "gauge", [('agent_id="agent-1"', lambda t: time.time())]),
        "goodput_ingest_lag_seconds": ("gauge", [("", _const(0.5))]),
        "goodput_limit_rejected_total": ("counter", [
            ('limit="%s"' % limit, _counter(0.1 if limit == "agent_rate"
                                            else 0)) for limit in
            ("max_batch_events", "max_batch_bytes", "agent_rate", "max_jobs",
             "max_labels", "max_string_bytes", "max_streams",
             "max_concurrent_queries")]),
        "goodput_auth_refused_total": ("counter", [
            ('reason="%s"' % reason, _counter(0)) for reason in
            ("missing_token", "malformed_token", "unknown_token")]),
        "goodput_agent_refused_total": ("counter", [
            ('reason="%s"' % reason, _counter(0)) for reason in
            ("id_too_long", "identity_mismatch", "id_in_use",
             "sequence_jump")]),
        "goodput_store_maintenance_failures_total": ("counter", [
            ('op="%s"' % op, _counter(0)) for op in
            ("evict", "snapshot", "retire", "retire_evicted",
             "retire_heartbeats")]),
        # Cluster mode (docs/scaling.md): a healthy cluster.
        "goodput_cluster_partitions_unowned": ("gauge", [("", _const(0))]),
    }


def _ratio_families():
    """The exporter's ratio gauges (all 0.5 or 0.4) and histograms."""
    f = {}
    segment = ',dimension="accelerator",value="tpu-v5e"'
    for r in ("sg", "rg", "pg", "mpg", "goodput"):
        f["goodput_fleet_%s_ratio" % r] = ("gauge", [
            ('window="%s"' % w, _const(0.5)) for w in ("5m", "1h", "24h")])
        f["goodput_job_%s_ratio" % r] = ("gauge", [
            (JOB + ',window="%s"' % w, _const(0.5)) for w in ("5m", "1h")])
        if r != "goodput":
            f["goodput_segment_%s_ratio" % r] = ("gauge", [
                ('window="1h"' + segment, _const(0.5))])
    for r in ("capacity_sg", "capacity_mpg"):
        f["goodput_fleet_%s_ratio" % r] = ("gauge", [('window="1h"',
                                                      _const(0.4))])
    for h in ("time_to_recover_seconds", "startup_seconds",
              "time_between_interruptions_seconds"):
        f["goodput_" + h] = ("histogram", [(_seg(), _counter(0.01))])
    return f


def _elastic_families():
    """Issue 14: the slice-efficiency gauges of elastic jobs (0.75)."""
    segment = ',dimension="accelerator",value="tpu-v5e"'
    return {
        "goodput_fleet_slice_efficiency_ratio": ("gauge", [
            ('window="%s"' % w, _const(0.75)) for w in ("5m", "1h", "24h")]),
        "goodput_segment_slice_efficiency_ratio": ("gauge", [
            ('window="1h"' + segment, _const(0.75))]),
        "goodput_job_slice_efficiency_ratio": ("gauge", [
            (JOB + ',window="%s"' % w, _const(0.75)) for w in ("5m", "1h")]),
    }


def _dcgm_families():
    """DCGM-exporter's series in its own names and labels (the join of
    rules/recording_dcgm.yml); served here for the live query check only."""
    gpu = ('gpu="%d",UUID="GPU-%d%d",device="nvidia%d",'
           'modelName="NVIDIA H100 80GB HBM3",Hostname="node-%d"')
    return {"DCGM_FI_PROF_GR_ENGINE_ACTIVE": ("gauge", [
        (gpu % (g, n, g, g, n), _const(0.9 - 0.1 * g)) for n in (1, 2)
        for g in (0, 1)])}


def _families():
    f = {}
    for part in (_fleet_families, _job_families, _ingest_families,
                 _ratio_families, _elastic_families, _dcgm_families):
        f.update(part())
    return f


FAMILIES = _families()


def _histogram(name, labels, count):
    lines = []
    for i, le in enumerate(BUCKETS + ("+Inf",)):
        share = count * (i + 1) / (len(BUCKETS) + 1)
        lines.append('%s_bucket{%s,le="%s"} %s' % (name, labels, le, share))
    lines.append("%s_sum{%s} %s" % (name, labels, count * 90))
    lines.append("%s_count{%s} %s" % (name, labels, count))
    return lines


def exposition(t):
    """The text format at t seconds after start."""
    out = []
    for name, (kind, samples) in sorted(FAMILIES.items()):
        out.append("# TYPE %s %s" % (name, kind))
        for labels, value in samples:
            if kind == "histogram":
                out += _histogram(name, labels, value(t))
            else:
                out.append("%s%s %r" % (name, "{%s}" % labels if labels
                                        else "", float(value(t))))
    return "\n".join(out) + "\n"


class _Handler(http.server.BaseHTTPRequestHandler):
    start = time.time()

    def do_GET(self):
        if self.path != "/metrics":
            self.send_error(404)
            return
        body = exposition(time.time() - self.start + 60).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = http.server.HTTPServer(("127.0.0.1", args.port), _Handler)
    print("fake_exporter: port %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
