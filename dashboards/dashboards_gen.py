"""Builds the two Grafana dashboards (grafana/*.json) from panel lists.

Panels are described once here, so ids, layout, data source and option
defaults are consistent; generate.py writes the JSON and check_dashboards.py
checks it (ids, queries, metric names) and, through check/, its types.
"""

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
GRID_WIDTH = 24
SCHEMA_VERSION = 39
CHIPS = "suffix: chips"  # chip-seconds per second
CHIP_HOURS = "suffix: chip-h"


def target(expr, legend="", instant=False, table=False):
    """One Prometheus query of a panel (refId is set by the panel)."""
    t = {"datasource": DATASOURCE, "expr": expr, "legendFormat": legend}
    if instant:
        t.update({"instant": True, "range": False})
    if table:
        t["format"] = "table"
    return t


def _thresholds(steps):
    return {"mode": "absolute",
            "steps": [{"color": c, "value": v} for v, c in steps]}


RATIO_STEPS = [(None, "red"), (0.5, "orange"), (0.8, "green")]


class Builder:
    """Appends panels left to right, top to bottom, with unique ids."""

    def __init__(self):
        self.panels = []
        self._x = 0
        self._y = 0
        self._row_h = 0

    def _place(self, w, h):
        if self._x + w > GRID_WIDTH:
            self._x, self._y, self._row_h = 0, self._y + self._row_h, 0
        pos = {"h": h, "w": w, "x": self._x, "y": self._y}
        self._x += w
        self._row_h = max(self._row_h, h)
        return pos

    def row(self, title):
        if self._x:
            self._x, self._y, self._row_h = 0, self._y + self._row_h, 0
        self.panels.append({"collapsed": False, "gridPos": self._place(24, 1),
                            "id": len(self.panels) + 1, "panels": [],
                            "title": title, "type": "row"})
        self._x, self._y, self._row_h = 0, self._y + 1, 0

    def panel(self, kind, title, description, targets, w, h, defaults,
              options, **extra):
        for i, t in enumerate(targets):
            t["refId"] = chr(ord("A") + i)
        p = {"datasource": DATASOURCE, "description": description,
             "fieldConfig": {"defaults": defaults, "overrides": []},
             "gridPos": self._place(w, h), "id": len(self.panels) + 1,
             "options": options, "targets": targets, "title": title,
             "type": kind}
        p.update(extra)
        self.panels.append(p)

    def timeseries(self, title, description, targets, unit, w=12, h=8,
                   stacked=False, ratio=False, bars=False):
        custom = {"drawStyle": "bars" if bars else "line",
                  "fillOpacity": 60 if stacked else 10,
                  "lineWidth": 1, "showPoints": "never",
                  "stacking": {"group": "A",
                               "mode": "normal" if stacked else "none"}}
        defaults = {"custom": custom, "unit": unit}
        if ratio:
            defaults.update({"min": 0, "max": 1})
        options = {"legend": {"calcs": ["lastNotNull"], "displayMode": "table",
                              "placement": "right", "showLegend": True},
                   "tooltip": {"mode": "multi", "sort": "desc"}}
        self.panel("timeseries", title, description, targets, w, h, defaults,
                   options)

    def stat(self, title, description, targets, unit, w=4, h=4,
             steps=RATIO_STEPS):
        defaults = {"thresholds": _thresholds(steps), "unit": unit}
        options = {"colorMode": "value", "graphMode": "area",
                   "justifyMode": "auto", "orientation": "auto",
                   "percentChangeColorMode": "standard",
                   "reduceOptions": {"calcs": ["lastNotNull"], "fields": "",
                                     "values": False},
                   "showPercentChange": False, "textMode": "auto",
                   "wideLayout": True}
        self.panel("stat", title, description, targets, w, h, defaults,
                   options)

    def table(self, title, description, targets, unit, w=12, h=8,
              links=None, transformations=None):
        defaults = {"unit": unit}
        if links:
            defaults["links"] = links
        options = {"frameIndex": 0, "showHeader": True,
                   "sortBy": [{"desc": True, "displayName": "Value #A"}]}
        self.panel("table", title, description, targets, w, h, defaults,
                   options, transformations=transformations or [])

    def state_timeline(self, title, description, targets, w=24, h=5):
        defaults = {"custom": {"fillOpacity": 80, "lineWidth": 0}}
        options = {"legend": {"calcs": [], "displayMode": "list",
                              "placement": "bottom", "showLegend": True},
                   "mergeValues": True, "rowHeight": 0.9,
                   "showValue": "never",
                   "tooltip": {"mode": "single", "sort": "none"}}
        self.panel("state-timeline", title, description, targets, w, h,
                   defaults, options)


def _datasource_variable():
    return {"name": "datasource", "label": "Prometheus", "type": "datasource",
            "query": "prometheus", "hide": 0}


def dashboard(uid, title, description, builder, variables, tags):
    return {
        "annotations": {"list": []},
        "description": description,
        "editable": True,
        "graphTooltip": 1,
        "links": [],
        "panels": builder.panels,
        "refresh": "1m",
        "schemaVersion": SCHEMA_VERSION,
        "tags": ["goodput"] + tags,
        "templating": {"list": [_datasource_variable()] + variables},
        "time": {"from": "now-6h", "to": "now"},
        "timezone": "utc",
        "title": title,
        "uid": uid,
        "version": 1,
    }


# ---------------------------------------------------------------- fleet ----

def _fleet_headline(b):
    b.row("Fleet goodput (recording rules, counters in recognition time)")
    for name, label in (("mpg", "MPG"), ("sg", "SG"), ("rg", "RG"),
                        ("pg", "PG")):
        b.stat("%s (1h)" % label, "Fleet %s over the last hour, from summed "
               "chip-second counters." % label,
               [target("fleet:goodput_%s:ratio_rate1h" % name)],
               "percentunit")
    b.stat("Budget burn rate (1h)", "Badput share over the last hour divided "
           "by the error budget 1 - goodput_slo; 1 spends the budget exactly "
           "over the SLO period (see dashboards/README.md).",
           [target("fleet:goodput_badput:ratio_rate1h / on () group_left () "
                   "(1 - goodput_slo)")],
           "x", steps=[(None, "green"), (1, "orange"), (4, "red")])
    b.stat("Capacity MPG (1h)", "mpg_capacity: allocated chip-time over host "
           "capacity from heartbeats, times RG and PG.",
           [target("fleet:goodput_capacity_mpg:ratio_rate1h")], "percentunit")
    b.timeseries("MPG, SG, RG, PG (5m)", "Fleet ratios over 5-minute windows.",
                 [target("fleet:goodput_%s:ratio_rate5m" % r, r.upper())
                  for r in ("mpg", "sg", "rg", "pg")], "percentunit",
                 ratio=True)
    b.timeseries("Badput breakdown (5m)", "Chip-seconds per second (chips) "
                 "in every category but productive, stacked.",
                 [target('fleet:goodput_chip_seconds:rate5m'
                         '{category!="productive"}', "{{category}}")],
                 CHIPS, stacked=True)


def _fleet_segments(b):
    b.row("By segment (1h)")
    for dim in ("accelerator", "workload", "framework", "size"):
        b.timeseries("MPG by %s" % dim, "MPG per %s value over the last hour."
                     % dim, [target("%s:goodput_mpg:ratio_rate1h" % dim,
                                    "{{%s}}" % dim)], "percentunit",
                     w=6, ratio=True)
    b.timeseries("Badput by accelerator (5m)", "Chips not productive, per "
                 "accelerator, stacked.",
                 [target("accelerator:goodput_lifetime_chip_seconds:rate5m - "
                         "accelerator:goodput_productive_chip_seconds:rate5m",
                         "{{accelerator}}")], CHIPS, stacked=True)
    b.timeseries("Goodput by workload (1h)", "productive / lifetime per "
                 "workload (SG x RG).",
                 [target("workload:goodput_goodput:ratio_rate1h",
                         "{{workload}}")], "percentunit", ratio=True)


JOB_LINK = [{"title": "Job drill-down",
             "url": "/d/goodput-job?var-job_id=${__data.fields.job_id}"
                    "&${__url_time_range}"}]


def _fleet_jobs(b):
    b.row("Jobs")
    b.table("Worst jobs (chip-hours over the dashboard range)",
            "Badput (every category but productive) and lost chip-hours per "
            "job over the range; only jobs with series (--max_job_series). "
            "Click a job for its drill-down; on call: goodputctl "
            "--server=HOST:PORT job JOB_ID.",
            [target('topk(20, sum by (job_id) (increase('
                    'goodput_job_chip_seconds_total{category!="productive"}'
                    '[$__range]))) / 3600', instant=True, table=True),
             target('sum by (job_id) (increase(goodput_job_chip_seconds_total'
                    '{category="lost"}[$__range])) / 3600', instant=True,
                    table=True)],
            CHIP_HOURS, w=12, h=10, links=JOB_LINK,
            transformations=[{"id": "merge", "options": {}}])
    b.timeseries("Jobs by state", "goodput_jobs summed over instances.",
                 [target("fleet:goodput_jobs:sum", "{{state}}")], "short",
                 w=6, h=10)
    b.timeseries("At-risk work", "Productive chip-hours not durable yet: what "
                 "the fleet loses if every job dies now.",
                 [target("fleet:goodput_at_risk_chip_seconds:sum / 3600",
                         "fleet")], CHIP_HOURS, w=6, h=10)


def _fleet_busy(b):
    b.row("Busy but not productive (needs DCGM-exporter and "
          "rules/recording_dcgm.yml)")
    b.table("Busy but not productive (1h)", "Per job with series: mean GPU "
            "graphics-engine activity over its hosts (DCGM "
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE joined through "
            "goodput_job_host_info), its RG (productive share of allocated "
            "time) and activity minus RG, largest first. Busy GPUs with a "
            "low RG: work that does not advance the job (recompute after "
            "restarts, hung collectives spinning, data-wait loops). A host "
            "shared by jobs counts for each of them.",
            [target("sort_desc(job_id:dcgm_gr_engine_active:avg - on "
                    "(job_id) max by (job_id) (goodput_job_rg_ratio"
                    '{window="1h"}))', instant=True, table=True),
             target("job_id:dcgm_gr_engine_active:avg", instant=True,
                    table=True),
             target('max by (job_id) (goodput_job_rg_ratio{window="1h"})',
                    instant=True, table=True)],
            "percentunit", w=24, h=8, links=JOB_LINK,
            transformations=[{"id": "merge", "options": {}}])


def _fleet_cost(b):
    b.row("Badput in $ and kWh (catalog price and power per chip)")
    note = (" Priced at the catalog's $ per chip-hour and W per chip "
            "(built-in values are examples: set yours with goodputd "
            "--catalog); accelerators without a price have no series.")
    b.stat("Badput this week in $", "Every category but productive over "
           "the last 7 days, in dollars." + note,
           [target('sum(increase(goodput_cost_usd_total'
                   '{category!="productive"}[7d]))')],
           "currencyUSD", w=6, h=6, steps=[(None, "blue")])
    b.stat("Badput this week in kWh", "Energy drawn by chips held in every "
           "category but productive over the last 7 days (queued and "
           "recovery draw none)." + note,
           [target('sum(increase(goodput_energy_kwh_total'
                   '{category!="productive"}[7d]))')],
           "kwatth", w=6, h=6, steps=[(None, "blue")])
    b.timeseries("Badput $ per hour by category", "Dollars per hour spent "
                 "on each category but productive, stacked." + note,
                 [target('sum by (category) (rate(goodput_cost_usd_total'
                         '{category!="productive"}[1h])) * 3600',
                         "{{category}}")], "currencyUSD", w=12, h=6,
                 stacked=True)


def _fleet_capacity(b):
    b.row("Capacity and interruptions")
    b.timeseries("Capacity SG", "Allocated chip-time over host capacity "
                 "(sg_capacity), fleet (5m) and per accelerator (1h).",
                 [target("fleet:goodput_capacity_sg:ratio_rate5m", "fleet"),
                  target("accelerator:goodput_capacity_sg:ratio_rate1h",
                         "{{accelerator}}")], "percentunit", w=8, ratio=True)
    b.timeseries("Interruptions per hour", "Attempts ended by an "
                 "interruption, by reason.",
                 [target("fleet:goodput_interruptions:rate1h * 3600",
                         "{{reason}}")], "short", w=8, stacked=True,
                 bars=True)
    b.timeseries("Recovery and startup (p50, p90, 1h)",
                 "Interruption to the next first step; started to first step.",
                 [target("histogram_quantile(%s, fleet:goodput_%s_bucket:"
                         "rate1h)" % (q, h), "%s p%s" % (label, int(q * 100)))
                  for h, label in (("time_to_recover_seconds", "recover"),
                                   ("startup_seconds", "startup"))
                  for q in (0.5, 0.9)], "s", w=8)


def _fleet_slices(b):
    """Issue 14, elastic jobs (SPEC rule 14): slice efficiency."""
    b.row("Elastic jobs: slice efficiency (SPEC rule 14)")
    note = (" Held / requested chip-seconds while all-allocated (at or "
            "above min_chips); absent while no elastic job was "
            "all-allocated in the window. Per goodputd instance.")
    b.timeseries("Slice efficiency (1h)", "The fleet's elastic jobs and "
                 "each accelerator's." + note,
                 [target('goodput_fleet_slice_efficiency_ratio{window="1h"}',
                         "fleet {{instance}}"),
                  target('goodput_segment_slice_efficiency_ratio{dimension='
                         '"accelerator", window="1h"}',
                         "{{value}} {{instance}}")],
                 "percentunit", w=12, ratio=True)
    b.table("Least efficient elastic jobs (1h)", "The 20 elastic jobs with "
            "the lowest slice efficiency over the last hour (jobs with "
            "series only). Click a job for its drill-down." + note,
            [target('bottomk(20, goodput_job_slice_efficiency_ratio'
                    '{window="1h"})', instant=True, table=True)],
            "percentunit", w=12, h=8, links=JOB_LINK)


def _fleet_ingest(b):
    b.row("Ingest health")
    b.timeseries("Ingest events", "Events judged per second by result, and "
                 "dead letters.",
                 [target("sum by (result) (rate(goodput_ingest_events_total"
                         "[5m]))", "{{result}}"),
                  target("sum(rate(goodput_dead_letters_total[5m]))",
                         "dead letters")], "ops", w=8)
    b.timeseries("Agents: time since last heartbeat", "Per agent, since "
                 "the newest heartbeat any goodputd instance stored from it: "
                 "what GoodputAgentSilent watches (above 600 s for 5m). "
                 "Agents with --chips send one every 60 s; with a shard "
                 "list only the pipeline to the host's capacity shard does, "
                 "so the pipelines to other shards (idle while the host "
                 "runs none of their jobs) are not shown, nor are agents "
                 "without --chips.",
                 [target("time() - max by (agent_id) "
                         "(goodput_agent_last_heartbeat_timestamp_seconds)",
                         "{{agent_id}}")], "s", w=8)
    b.timeseries("Ingest lag and capped job series", "Server time minus the "
                 "newest applied event time; job series the cap suppressed.",
                 [target("max by (instance) (goodput_ingest_lag_seconds)",
                         "lag {{instance}}"),
                  target("sum(rate(goodput_job_series_suppressed_total[5m]))",
                         "suppressed/s")], "short", w=8)
    b.timeseries("Refusals: limits and tokens", "What goodputd's limits "
                 "refused per second (batches, events or calls, by limit; "
                 "docs/security.md) and gRPC calls refused for their bearer "
                 "token, by reason.",
                 [target("sum by (limit) (rate(goodput_limit_rejected_total"
                         "[5m]))", "{{limit}}"),
                  target("sum by (reason) (rate(goodput_auth_refused_total"
                         "[5m]))", "token: {{reason}}")], "ops", w=24, h=6)


def fleet_overview():
    b = Builder()
    _fleet_headline(b)
    _fleet_segments(b)
    _fleet_jobs(b)
    _fleet_cost(b)
    _fleet_busy(b)
    _fleet_capacity(b)
    _fleet_slices(b)
    _fleet_ingest(b)
    return dashboard("goodput-fleet", "goodput: Fleet overview",
                     "ML Productivity Goodput of the fleet: MPG = SG x RG x "
                     "PG, badput, segments, worst jobs, capacity, ingest.",
                     b, [], ["fleet"])


# ------------------------------------------------------------------ job ----

JOB = 'job_id="$job_id"'


def _job_variables():
    return [
        {"name": "job_id", "label": "job_id", "type": "query",
         "datasource": DATASOURCE,
         "query": "label_values(goodput_job_info, job_id)", "refresh": 2,
         "sort": 1, "hide": 0},
        {"name": "window", "label": "ratio window", "type": "custom",
         "query": "5m,1h,24h", "hide": 0,
         "current": {"text": "1h", "value": "1h"},
         "options": [{"selected": w == "1h", "text": w, "value": w}
                     for w in ("5m", "1h", "24h")]},
    ]


def _job_headline(b):
    b.row("Job $job_id")
    b.table("Job", "Segment, state and goodputd instance of the job; chips.",
            [target("goodput_job_info{%s}" % JOB, instant=True, table=True),
             target("goodput_job_chips{%s}" % JOB, instant=True, table=True)],
            "short", w=12, h=4,
            transformations=[{"id": "merge", "options": {}}])
    for name, label in (("mpg", "MPG"), ("sg", "SG"), ("rg", "RG")):
        b.stat("%s ($window)" % label, "The exporter's per-job %s over the "
               "selected window." % label,
               [target('goodput_job_%s_ratio{%s, window="$window"}' %
                       (name, JOB))], "percentunit", w=4)
    b.timeseries("Ratios ($window)", "SG, RG, PG, MPG and goodput of the job.",
                 [target('goodput_job_%s_ratio{%s, window="$window"}' %
                         (r, JOB), r.upper())
                  for r in ("mpg", "sg", "rg", "pg", "goodput")],
                 "percentunit", ratio=True)
    b.timeseries("Chip time by category", "Chip-seconds per second by "
                 "category (recognition time: a step counts when it "
                 "completes, lost when decided).",
                 [target("sum by (category) (rate(goodput_job_chip_seconds_total"
                         "{%s}[$__rate_interval]))" % JOB, "{{category}}")],
                 CHIPS, stacked=True)


def _job_progress(b):
    b.row("Progress and risk")
    b.timeseries("Step progress", "Highest completed step not lost.",
                 [target("goodput_job_steps_total{%s}" % JOB, "step")],
                 "short", w=8)
    b.timeseries("Time since last step and checkpoint", "Prometheus time "
                 "minus the event time of the last step / checkpoint.",
                 [target("time() - goodput_job_last_step_timestamp_seconds{%s}"
                         % JOB, "since step"),
                  target("time() - goodput_job_last_checkpoint_timestamp_"
                         "seconds{%s}" % JOB, "since checkpoint")], "s", w=8)
    b.timeseries("At-risk work", "Productive seconds not durable yet (lost "
                 "if the job died now), and the same in chip-hours.",
                 [target("goodput_job_at_risk_seconds{%s}" % JOB, "seconds"),
                  target("goodput_job_at_risk_seconds{%s} * on (instance, "
                         "job_id) goodput_job_chips / 3600" % JOB,
                         "chip-hours")], "short", w=8)
    _job_step_time(b)


def _job_step_time(b):
    """Issue 18, slow steps: recent against baseline step time."""
    b.timeseries("Step time", "Median per-step time of the job's recent "
                 "steps (last 100, at most 15 min) and of all its steps "
                 "(baseline; first steps of attempts left out). "
                 "GoodputJobSlowSteps fires above 1.5x the baseline for 15m.",
                 [target("goodput_job_step_time_recent_seconds{%s}" % JOB,
                         "recent"),
                  target("goodput_job_step_time_baseline_seconds{%s}" % JOB,
                         "baseline"),
                  target("1.5 * goodput_job_step_time_baseline_seconds{%s}"
                         % JOB, "alert threshold")], "s", w=16)
    b.stat("Step time, recent / baseline", "Above 1.5 for 15 minutes "
           "(with >= 100 baseline and >= 5 recent steps): "
           "GoodputJobSlowSteps.",
           [target("goodput_job_step_time_recent_seconds{%s} / "
                   "goodput_job_step_time_baseline_seconds{%s}"
                   % (JOB, JOB))], "short", w=8, h=8,
           steps=[(None, "green"), (1.2, "orange"), (1.5, "red")])


def _job_interruptions(b):
    b.row("Interruptions")
    b.state_timeline("State", "RECOVERING marks an interruption until the "
                     "next attempt is allocated.",
                     [target("max by (state) (goodput_job_info{%s})" % JOB,
                             "{{state}}")])
    b.timeseries("Cost of interruptions", "Recovery and lost chip-seconds per "
                 "second; lost jumps when a resume point decides it.",
                 [target('sum by (category) (rate(goodput_job_chip_seconds_'
                         'total{%s, category=~"recovery|lost"}'
                         '[$__rate_interval]))' % JOB, "{{category}}")],
                 CHIPS, stacked=True, bars=True)
    b.stat("Chip-hours by category (so far)", "Cumulative chip-hours per "
           "category; goodputctl --server=HOST:PORT job $job_id has the "
           "timeline.",
           [target("sum by (category) (goodput_job_chip_seconds_total{%s}) / "
                   "3600" % JOB, "{{category}}")], CHIP_HOURS, w=12, h=8,
           steps=[(None, "blue")])


def _job_slices(b):
    """Issue 14, elastic jobs (SPEC rule 14): the job's slice efficiency."""
    b.row("Elastic job: slice efficiency")
    desc = ("Chips held / chips requested while all-allocated (at or above "
            "min_chips), over the selected window; no data for a "
            "fixed-size job.")
    b.stat("Slice efficiency ($window)", desc,
           [target('goodput_job_slice_efficiency_ratio{%s, window="$window"}'
                   % JOB)], "percentunit", w=6, h=6)
    b.timeseries("Slice efficiency over time ($window)", desc,
                 [target('goodput_job_slice_efficiency_ratio{%s, window='
                         '"$window"}' % JOB, "slice efficiency")],
                 "percentunit", w=18, h=6, ratio=True)


def _job_checkpoint_advice(b):
    """Issue 18 part 2: advised against actual checkpoint interval."""
    b.timeseries("Checkpoint interval, advised and actual", "Young/Daly "
                 "sqrt(2 C M) from the job's own interruptions (TRAINING, "
                 ">= 3 interruptions; docs/semantics.md \"Checkpoint "
                 "advice\") beside its running time per save; "
                 "goodputctl job $job_id shows the expected loss at each.",
                 [target("goodput_job_checkpoint_interval_advised_seconds{%s}"
                         % JOB, "advised"),
                  target("goodput_job_checkpoint_interval_actual_seconds{%s}"
                         % JOB, "actual")], "s", w=16)
    b.stat("Checkpoint interval, actual / advised", "Above 1: saving less "
           "often than advised (more lost work per interruption); below 1: "
           "more often (more time saving). Within 0.5-2 costs little.",
           [target("goodput_job_checkpoint_interval_actual_seconds{%s} / "
                   "goodput_job_checkpoint_interval_advised_seconds{%s}"
                   % (JOB, JOB))], "short", w=8, h=8,
           steps=[(None, "orange"), (0.5, "green"), (2, "orange")])


def job_drilldown():
    b = Builder()
    _job_headline(b)
    _job_progress(b)
    _job_interruptions(b)
    _job_checkpoint_advice(b)
    _job_slices(b)
    return dashboard("goodput-job", "goodput: Job drill-down",
                     "One job: ratios, chip time by category, steps, "
                     "checkpoints, at-risk work, step time, interruptions, "
                     "checkpoint advice.",
                     b, _job_variables(), ["job"])


DASHBOARDS = {"fleet_overview": fleet_overview, "job_drilldown": job_drilldown}
