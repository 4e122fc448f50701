#!/usr/bin/python3
"""Checks the Grafana dashboards and the rules beyond what tsc can.

Usage: check_dashboards.py [--promtool=PATH] [--metrics_doc=PATH]
                           [--ts_out=DIR] [--skip_promtool]

For every dashboard in dashboards/grafana/:
  - panel ids are unique (rows included) and panels fit the 24-column grid;
  - every non-row panel has targets, each with a refId (unique in the panel)
    and a non-empty PromQL `expr`;
  - every $variable an expr uses is defined in templating or is Grafana's;
  - every expr parses: all of them go, with variables replaced by sample
    values, into one temporary rules file for `promtool check rules`;
  - every metric an expr names is in docs/metrics.md (histogram families
    with _bucket/_sum/_count), is recorded by dashboards/rules/, or is
    Prometheus's own per-target `up`.
The same metric-name check runs on every expr of the rules files, and every
alert must have a `severity` label, `summary`, `description`, `runbook` and a
goodputctl `command`, and a promtool test case where it fires and one where
it does not (tests/*_test.yml). A panel that shows what an alert judges
(PANEL_ALERTS) reads the same metrics as the alert's expr.
With --ts_out=DIR it also writes DIR/<dashboard>.ts for check/typecheck.sh.
With --prometheus=URL it also runs every panel query (instant, variables
replaced by sample values) against that Prometheus and requires series with
every label the panel's legend names (queries_live_test.sh; the end-to-end
test can point it at a Prometheus scraping the real exporter).
Exits 1 with one line per problem.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
GRAFANA_VARIABLES = {"__range": "1h", "__rate_interval": "5m",
                     "__interval": "1m", "__range_s": "3600"}
SAMPLE_VALUES = {"job_id": "job-1", "window": "1h"}
KEYWORDS = {"and", "or", "unless", "offset", "bool", "by", "without", "on",
            "ignoring", "group_left", "group_right", "inf", "nan"}
# Series Prometheus itself writes for every target.
PROMETHEUS_SERIES = {"up", "scrape_duration_seconds", "scrape_samples_scraped"}
# Other exporters' series the rules join with (docs/metrics.md, "Joining
# with GPU telemetry").
EXTERNAL_SERIES = {"DCGM_FI_PROF_GR_ENGINE_ACTIVE"}
# Recorded from them (rules/recording_dcgm.yml): a panel that reads one may
# be empty against a Prometheus that scrapes no DCGM-exporter (the goodputd
# end-to-end test); fake_exporter.py serves DCGM, so there it must not be.
EXTERNAL_RECORDS = {"host:dcgm_gr_engine_active:sum", "host:dcgm_gpus:count",
                    "job_id:dcgm_gr_engine_active:avg"}
# Exported only for elastic jobs (SPEC rule 14): a panel that reads one may
# be empty against a goodputd whose fleet has none (the end-to-end test);
# fake_exporter.py serves them, so there it must not be.
ELASTIC_SERIES = {"goodput_fleet_slice_efficiency_ratio",
                  "goodput_segment_slice_efficiency_ratio",
                  "goodput_job_slice_efficiency_ratio"}
# Exported only for TRAINING jobs with checkpoint advice (at least three
# interruptions; docs/semantics.md "Checkpoint advice"): the same.
ADVICE_SERIES = {"goodput_job_checkpoint_interval_advised_seconds",
                 "goodput_job_checkpoint_interval_actual_seconds"}
# Panels that show what an alert judges, by (dashboard, title): they read
# the metrics of its expr and no others. Issue 16: a sharded agent's
# pipelines to the shards other than its host's capacity shard send no
# heartbeats and are idle while the host is; its last batch is no liveness.
PANEL_ALERTS = {("fleet_overview", "Agents: time since last heartbeat"):
                "GoodputAgentSilent"}
VARIABLE = re.compile(r"\$(?:\{(\w+)(?::\w+)?\}|(\w+))")


def metric_names(expr):
    """Metric names an expr selects (a PromQL tokenizer good enough here)."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', '""', expr)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)"
                  r"\s*\([^)]*\)", " ", text)
    names = set()
    for m in re.finditer(r"(?<![\w.:])([A-Za-z_:][\w:]*)(\s*\()?", text):
        if not m.group(2) and m.group(1).lower() not in KEYWORDS:
            names.add(m.group(1))
    return names


def documented_metrics(path):
    """Metric names from docs/metrics.md tables (histograms expanded)."""
    names = set()
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[0].startswith("`goodput_"):
            continue
        for name in re.findall(r"`(goodput_\w+)`", cells[0]):
            names.add(name)
            if cells[1] == "histogram":
                names.update(name + s for s in ("_bucket", "_sum", "_count"))
    return names


def rules_files():
    return sorted(glob.glob(os.path.join(HERE, "rules", "*.yml")))


def rule_exprs():
    """(file, record names, [(rule name, expr)]) read from the rules files.

    The files are simple block YAML (generated or hand-written here), so the
    `expr:` values are read as text: one line, a quoted line, or a block.
    """
    records, exprs = set(), []
    for path in rules_files():
        lines = open(path).read().split("\n")
        name = None
        for i, line in enumerate(lines):
            m = re.match(r"\s*- (?:record|alert): (\S+)", line)
            if m:
                name = m.group(1)
                if "record:" in line:
                    records.add(name)
                continue
            m = re.match(r"(\s*)expr: (.*)$", line)
            if not m:
                continue
            value = m.group(2)
            if value in ("|", "|-", ">", ">-"):
                block = []
                for nxt in lines[i + 1:]:
                    if nxt.strip() and (len(nxt) - len(nxt.lstrip()) <=
                                        len(m.group(1))):
                        break
                    block.append(nxt)
                value = "\n".join(block)
            elif value.startswith("'"):
                value = value[1:-1].replace("''", "'")
            exprs.append((os.path.basename(path) + ": " + name, value))
    return records, exprs


ALERT_FIELDS = ("severity:", "summary:", "description:", "runbook:",
                "command:")


def check_alerts(problems):
    """Alert annotations, and a firing and a quiet test case per alert."""
    text = open(os.path.join(HERE, "rules", "alerts.yml")).read()
    blocks = re.split(r"\n\s*- alert: ", text)[1:]
    tests = "".join(open(p).read() for p in
                    glob.glob(os.path.join(HERE, "tests", "*_test.yml")))
    cases = re.findall(r"alertname: (\w+)\n\s*exp_alerts:( \[\])?", tests)
    for block in blocks:
        name = block.split()[0]
        for field in ALERT_FIELDS:
            if field not in block:
                problems.append("alerts.yml: %s has no %s" % (name, field))
        if not re.search(r"command: .*goodputctl", block, re.S):
            problems.append("alerts.yml: %s: command names no goodputctl "
                            "query" % name)
        if (name, "") not in cases:
            problems.append("tests: no case where %s fires" % name)
        if (name, " []") not in cases:
            problems.append("tests: no case where %s does not fire" % name)
    return len(blocks)


def check_panel_alerts(dashboards, rule_list, problems):
    """Each PANEL_ALERTS panel reads exactly its alert's metrics."""
    alerts = {label.split(": ", 1)[1]: metric_names(expr)
              for label, expr in rule_list
              if label.startswith("alerts.yml: ")}
    for (name, title), alert in sorted(PANEL_ALERTS.items()):
        panels = [p for p in all_panels(dashboards.get(name, {}))
                  if p.get("title") == title]
        if len(panels) != 1 or alert not in alerts:
            problems.append("%s: panel %r or alert %s not found (once)" %
                            (name, title, alert))
            continue
        got = set().union(*[metric_names(t.get("expr", ""))
                            for t in panels[0].get("targets", [])])
        if got != alerts[alert]:
            problems.append("%s: panel %r reads %s, but %s judges %s" %
                            (name, title, sorted(got), alert,
                             sorted(alerts[alert])))


def all_panels(dashboard):
    for p in dashboard.get("panels", []):
        yield p
        for inner in p.get("panels", []):
            yield inner


def defined_variables(dashboard):
    return {v["name"] for v in dashboard.get("templating", {}).get("list", [])}


def check_layout(name, dashboard, problems):
    seen = set()
    for p in all_panels(dashboard):
        pid = p.get("id")
        if not isinstance(pid, int) or pid in seen:
            problems.append("%s: panel %r (%s): id missing or duplicate" %
                            (name, pid, p.get("title")))
        seen.add(pid)
        pos = p.get("gridPos", {})
        if pos.get("x", 0) + pos.get("w", 0) > 24:
            problems.append("%s: panel %s: gridPos x + w > 24" % (name, pid))


def check_targets(name, dashboard, problems):
    """Per-target checks; returns [(label, expr with sample values)]."""
    variables = defined_variables(dashboard)
    out = []
    for p in all_panels(dashboard):
        if p.get("type") == "row":
            continue
        targets = p.get("targets") or []
        if not targets:
            problems.append("%s: panel %s (%s): no targets" %
                            (name, p.get("id"), p.get("title")))
        refs = set()
        for t in targets:
            where = "%s: panel %s target %s" % (name, p.get("id"),
                                                t.get("refId"))
            if not t.get("refId") or t["refId"] in refs:
                problems.append(where + ": refId missing or duplicate")
            refs.add(t.get("refId"))
            expr = t.get("expr")
            if not isinstance(expr, str) or not expr.strip():
                problems.append(where + ": no PromQL expr")
                continue
            out.append((where, substitute(expr, variables, where, problems),
                        t.get("legendFormat", "")))
    return out


def substitute(expr, variables, where, problems):
    def value(m):
        var = m.group(1) or m.group(2)
        if var in GRAFANA_VARIABLES:
            return GRAFANA_VARIABLES[var]
        if var not in variables:
            problems.append("%s: $%s is not a dashboard variable" %
                            (where, var))
        return SAMPLE_VALUES.get(var, "x")
    return VARIABLE.sub(value, expr)


def check_names(exprs, known, problems):
    for where, expr in [e[:2] for e in exprs]:
        for metric in sorted(metric_names(expr) - known):
            problems.append("%s: metric %s is neither in docs/metrics.md nor "
                            "recorded by dashboards/rules/" % (where, metric))


def check_parse(exprs, promtool, problems):
    """All exprs in one rules file through `promtool check rules`."""
    if not exprs:
        return
    lines = ["groups:", "  - name: dashboard_exprs", "    rules:"]
    for i, (where, expr, _) in enumerate(exprs):
        lines.append("      # " + where)
        lines.append("      - record: dashboard_expr_%d" % i)
        lines.append("        expr: " + json.dumps(expr))
    with tempfile.NamedTemporaryFile("w", suffix=".yml") as f:
        f.write("\n".join(lines) + "\n")
        f.flush()
        run = subprocess.run([promtool, "check", "rules", f.name],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             universal_newlines=True)
    if run.returncode != 0:
        for m in re.finditer(r"dashboard_expr_(\d+)", run.stdout):
            problems.append("%s: promtool cannot parse the expr" %
                            exprs[int(m.group(1))][0])
        problems.append("promtool check rules: " + run.stdout.strip())


def _query(url, expr):
    query = urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen("%s/api/v1/query?%s" % (url, query),
                                timeout=30) as r:
        return json.load(r)


def _has_any(url, names):
    """Whether the Prometheus at `url` has a series of one of `names`."""
    try:
        body = _query(url, "count(%s)" % " or ".join(sorted(names)))
    except OSError:
        return False
    return bool(body.get("data", {}).get("result"))


def _has_external(url):
    return _has_any(url, EXTERNAL_SERIES)


def check_live(exprs, url, problems):
    """Each expr returns series carrying its legend's {{labels}}."""
    external = EXTERNAL_SERIES | EXTERNAL_RECORDS
    skip_external = not _has_external(url)
    skip_elastic = not _has_any(url, ELASTIC_SERIES)
    skip_advice = not _has_any(url, ADVICE_SERIES)
    for where, expr, legend in exprs:
        if skip_external and metric_names(expr) & external:
            continue
        if skip_elastic and metric_names(expr) & ELASTIC_SERIES:
            continue
        if skip_advice and metric_names(expr) & ADVICE_SERIES:
            continue
        query = urllib.parse.urlencode({"query": expr})
        try:
            with urllib.request.urlopen("%s/api/v1/query?%s" % (url, query),
                                        timeout=30) as r:
                body = json.load(r)
        except OSError as e:
            problems.append("%s: query failed: %s" % (where, e))
            continue
        result = body.get("data", {}).get("result", [])
        if body.get("status") != "success" or not result:
            problems.append("%s: no series for %s" % (where, expr))
            continue
        for label in re.findall(r"\{\{\s*(\w+)\s*\}\}", legend or ""):
            if any(label not in s["metric"] for s in result):
                problems.append("%s: legend {{%s}} but a series lacks it" %
                                (where, label))


def live_problems(exprs, url, wait_seconds):
    """check_live, retried every 0.5 s until clean or wait_seconds pass."""
    deadline = time.monotonic() + wait_seconds
    while True:
        problems = []
        check_live(exprs, url, problems)
        if not problems or time.monotonic() >= deadline:
            return problems
        time.sleep(0.5)  # poll interval of the wait for the queries


def typescript(name, dashboard, problems):
    """gen/<name>.ts: the dashboard and each panel's options as literals."""
    out = ["// GENERATED by check_dashboards.py from grafana/%s.json." % name,
           "import type { Dashboard, Loose, PanelFieldConfig, PanelOptions }"
           " from '../check';",
           "export const dashboard: Loose<Dashboard> = %s;" %
           json.dumps(dashboard, indent=2)]
    kinds = {"stat", "state-timeline", "table", "timeseries"}
    for p in all_panels(dashboard):
        kind = p.get("type")
        if kind == "row":
            continue
        if kind not in kinds:
            problems.append("%s: panel %s: type %r has no types in "
                            "check/check.ts" % (name, p.get("id"), kind))
            continue
        out.append("export const options_%d: Loose<PanelOptions['%s']> = %s;"
                   % (p["id"], kind, json.dumps(p.get("options", {}))))
        custom = p.get("fieldConfig", {}).get("defaults", {}).get("custom")
        if custom is not None:
            out.append("export const custom_%d: Loose<PanelFieldConfig['%s']>"
                       " = %s;" % (p["id"], kind, json.dumps(custom)))
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--promtool", default="promtool")
    parser.add_argument("--metrics_doc", default=os.path.join(
        HERE, "..", "docs", "metrics.md"))
    parser.add_argument("--ts_out")
    parser.add_argument("--skip_promtool", action="store_true")
    parser.add_argument("--prometheus", help="also run the queries here")
    parser.add_argument("--wait_seconds", type=float, default=0,
                        help="retry the live queries until they pass or "
                        "this long has passed (rule groups start at random "
                        "offsets)")
    args = parser.parse_args()
    problems = []
    records, rule_list = rule_exprs()
    known = (documented_metrics(args.metrics_doc) | records |
             PROMETHEUS_SERIES | EXTERNAL_SERIES)
    check_names(rule_list, known, problems)
    alerts = check_alerts(problems)
    paths = sorted(glob.glob(os.path.join(HERE, "grafana", "*.json")))
    if not paths:
        problems.append("no dashboards in dashboards/grafana/")
    exprs = []
    dashboards = {}
    for path in paths:
        name = os.path.splitext(os.path.basename(path))[0]
        dashboard = dashboards[name] = json.load(open(path))
        check_layout(name, dashboard, problems)
        exprs += check_targets(name, dashboard, problems)
        if args.ts_out:
            os.makedirs(args.ts_out, exist_ok=True)
            with open(os.path.join(args.ts_out, name + ".ts"), "w") as f:
                f.write(typescript(name, dashboard, problems))
    check_names(exprs, known, problems)
    check_panel_alerts(dashboards, rule_list, problems)
    if not args.skip_promtool:
        check_parse(exprs, args.promtool, problems)
    if args.prometheus:
        problems += live_problems(exprs, args.prometheus.rstrip("/"),
                                  args.wait_seconds)
    for p in problems:
        print("check_dashboards: " + p, file=sys.stderr)
    print("check_dashboards: %d dashboards, %d panel queries, %d rule exprs, "
          "%d alerts, %d problems" % (len(paths), len(exprs), len(rule_list),
                                      alerts, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
