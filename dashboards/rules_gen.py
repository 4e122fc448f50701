"""Builds dashboards/rules/recording_*.yml: goodput's Prometheus recording rules.

The rules are regular (the same ratios at every level and window), so they are
generated rather than written by hand; generate.py writes the file and the
ctest `dashboards_generated_up_to_date` fails when the committed copy differs.

Naming is level:metric:operation. Numerators and denominators are summed
separately across goodputd instances (shards differ only in `instance`) and
segments, and every ratio is a quotient of those sums, never an average of
ratios (SPEC section 3 rule 10).
"""

DIMENSIONS = ("accelerator", "workload", "framework", "size")
# Windows the dashboards use; each gets every level.
DASHBOARD_WINDOWS = ("5m", "1h")
# Extra fleet-only windows for the error-budget burn alerts (SLO_WINDOWS) and
# the lost-work baseline (1d).
SLO_WINDOWS = ("30m", "2h", "6h", "1d", "3d")
HISTOGRAMS = ("time_to_recover_seconds", "startup_seconds",
              "time_between_interruptions_seconds")

# The objective and its minimum denominator: edit here (and regenerate) or
# override the two recording rules in your own rules file.
GOODPUT_SLO = 0.9
GOODPUT_SLO_MIN_CHIP_HOURS = 128


def _by(level, *extra):
    labels = ([] if level == "fleet" else [level]) + list(extra)
    return "sum by (%s) " % ", ".join(labels) if labels else "sum "


def _rule(record, expr):
    return (record, expr)


def _category_rules(level, window):
    """Per-category rates and the time sums built from them."""
    name = lambda m: "%s:goodput_%s:rate%s" % (level, m, window)
    by = _by(level)
    chip = name("chip_seconds")
    life = name("lifetime_chip_seconds")
    return [
        _rule(chip, "%s(rate(goodput_chip_seconds_total[%s]))" %
              (_by(level, "category"), window)),
        _rule(life, "%s(%s)" % (by, chip)),
        _rule(name("allocated_chip_seconds"),
              "%s(%s{category!~\"queued|recovery\"}) or %s * 0" %
              (by, chip, life)),
        _rule(name("productive_chip_seconds"),
              "%s(%s{category=\"productive\"}) or %s * 0" % (by, chip, life)),
        _rule(name("lost_chip_seconds"),
              "%s(%s{category=\"lost\"}) or %s * 0" % (by, chip, life)),
    ]


def _ratio_rules(level, window):
    """SG, RG, PG, MPG and goodput from the summed numerators/denominators."""
    name = lambda m: "%s:goodput_%s:rate%s" % (level, m, window)
    ratio = lambda m: "%s:goodput_%s:ratio_rate%s" % (level, m, window)
    by = _by(level)
    rules = [
        _rule(name("ideal_chip_seconds"),
              "%s(rate(goodput_ideal_chip_seconds_total[%s]))" % (by, window)),
        _rule(name("costed_productive_chip_seconds"),
              "%s(rate(goodput_costed_productive_chip_seconds_total[%s]))" %
              (by, window)),
        _rule(ratio("sg"), "%s / (%s > 0)" %
              (name("allocated_chip_seconds"), name("lifetime_chip_seconds"))),
        _rule(ratio("rg"), "%s / (%s > 0)" %
              (name("productive_chip_seconds"), name("allocated_chip_seconds"))),
        _rule(ratio("pg"), "%s / (%s > 0)" %
              (name("ideal_chip_seconds"),
               name("costed_productive_chip_seconds"))),
        _rule(ratio("mpg"), "%s * %s * %s" %
              (ratio("sg"), ratio("rg"), ratio("pg"))),
        _rule(ratio("goodput"), "%s / (%s > 0)" %
              (name("productive_chip_seconds"), name("lifetime_chip_seconds"))),
        _rule(ratio("badput"), "1 - %s" % ratio("goodput")),
    ]
    if level in ("fleet", "accelerator"):
        rules += [
            # A shard (goodputd --shard=I/N) exports its own hosts'
            # capacity, labelled capacity_shard="I/N": the max without
            # instance keeps the shards apart and the sum adds them up.
            # Cluster instances (and older shards) export every host's,
            # unlabelled: the max takes it once (docs/scaling.md).
            _rule(name("capacity_chip_seconds"),
                  "%s(max without (instance, goodputd_grpc) "
                  "(rate(goodput_capacity_chip_seconds_total[%s])))" %
                  (by, window)),
            _rule(ratio("capacity_sg"), "%s / (%s > 0)" %
                  (name("allocated_chip_seconds"),
                   name("capacity_chip_seconds"))),
            _rule(ratio("capacity_mpg"), "%s * %s * %s" %
                  (ratio("capacity_sg"), ratio("rg"), ratio("pg"))),
        ]
    return rules


def _fleet_window_group(window):
    rules = _category_rules("fleet", window) + _ratio_rules("fleet", window)
    rules.append(_rule("fleet:goodput_interruptions:rate%s" % window,
                       "sum by (reason) (rate(goodput_interruptions_total[%s]))"
                       % window))
    for h in HISTOGRAMS:
        rules.append(_rule(
            "fleet:goodput_%s_bucket:rate%s" % (h, window),
            "sum by (le) (rate(goodput_%s_bucket[%s]))" % (h, window)))
    return ("goodput_fleet_rate%s" % window, rules)


def _segment_window_group(window):
    rules = []
    for level in DIMENSIONS:
        rules += _category_rules(level, window)
        rules += _ratio_rules(level, window)
    rules.append(_rule(
        "accelerator:goodput_interruptions:rate%s" % window,
        "sum by (accelerator, reason) (rate(goodput_interruptions_total[%s]))"
        % window))
    return ("goodput_segment_rate%s" % window, rules)


def _slo_group():
    rules = []
    for window in SLO_WINDOWS:
        rules += _category_rules("fleet", window)
        goodput = "fleet:goodput_goodput:ratio_rate%s" % window
        rules.append(_rule(goodput, "%s / (%s > 0)" % (
            "fleet:goodput_productive_chip_seconds:rate%s" % window,
            "fleet:goodput_lifetime_chip_seconds:rate%s" % window)))
        rules.append(_rule("fleet:goodput_badput:ratio_rate%s" % window,
                           "1 - %s" % goodput))
    return ("goodput_slo_windows", rules)


def _baseline_rate(metric, selector=""):
    """Mean 1h rate at the same hour 1d and 1w ago (1d alone in week one)."""
    one = lambda off: "sum(rate(%s%s[1h] offset %s))" % (metric, selector, off)
    return "(%s + %s) / 2 or %s" % (one("1d"), one("1w"), one("1d"))


def _baseline_group():
    name = lambda m: "fleet:goodput_%s:rate1h_baseline" % m
    rules = [
        _rule(name("lifetime_chip_seconds"),
              _baseline_rate("goodput_chip_seconds_total")),
        _rule(name("productive_chip_seconds"),
              _baseline_rate("goodput_chip_seconds_total",
                             '{category="productive"}')),
        _rule(name("ideal_chip_seconds"),
              _baseline_rate("goodput_ideal_chip_seconds_total")),
        _rule(name("costed_productive_chip_seconds"),
              _baseline_rate("goodput_costed_productive_chip_seconds_total")),
        # SG x RG = productive / lifetime, so MPG needs only these four sums.
        _rule("fleet:goodput_mpg:ratio_rate1h_baseline",
              "%s / (%s > 0) * %s / (%s > 0)" %
              (name("productive_chip_seconds"), name("lifetime_chip_seconds"),
               name("ideal_chip_seconds"),
               name("costed_productive_chip_seconds"))),
    ]
    return ("goodput_baseline", rules)


def _constant_group():
    return ("goodput_slo", [
        _rule("goodput_slo", "vector(%s)" % GOODPUT_SLO),
        _rule("goodput_slo_min_chip_hours",
              "vector(%s)" % GOODPUT_SLO_MIN_CHIP_HOURS),
    ])


def _gauge_group(levels):
    rules = [
        _rule("%s:goodput_at_risk_chip_seconds:sum" % level,
              "%s(goodput_at_risk_chip_seconds)" % _by(level))
        for level in levels
    ]
    if "fleet" in levels:
        rules.append(_rule("fleet:goodput_jobs:sum",
                           "sum by (state) (goodput_jobs)"))
    return ("goodput_%s_gauges" % ("fleet" if "fleet" in levels else "segment"),
            rules)


def fleet_groups():
    """Fleet-level groups: what the alerts and the fleet headline need."""
    return ([_constant_group()] +
            [_fleet_window_group(w) for w in DASHBOARD_WINDOWS] +
            [_slo_group(), _baseline_group(), _gauge_group(("fleet",))])


def segment_groups():
    """Per-dimension groups (sum by accelerator, workload, ...)."""
    return ([_segment_window_group(w) for w in DASHBOARD_WINDOWS] +
            [_gauge_group(DIMENSIONS)])


# Issue 18 part 4: DCGM-exporter's per-GPU graphics-engine activity (labels
# gpu, UUID, device, modelName, Hostname, ...) joined to jobs through
# goodput_job_host_info{job_id, host}. DCGM's Hostname must equal the
# agents' --host (or rewrite it in DCGM_HOST_REGEX's capture group).
DCGM_ACTIVE = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
DCGM_HOST_REGEX = "(.*)"


def dcgm_groups():
    """GPU activity per host, then per job (GPU-weighted over its hosts)."""
    gpus = 'label_replace(%s, "host", "$1", "Hostname", "%s")' % (
        DCGM_ACTIVE, DCGM_HOST_REGEX)
    # One series per (job, host) whatever the number of goodputd instances.
    job_hosts = "max by (job_id, host) (goodput_job_host_info)"
    per_job = lambda host_rule: (
        "sum by (job_id) (%s * on (host) group_left () %s)" %
        (job_hosts, host_rule))
    return [("goodput_dcgm_join", [
        _rule("host:dcgm_gr_engine_active:sum", "sum by (host) (%s)" % gpus),
        _rule("host:dcgm_gpus:count", "count by (host) (%s)" % gpus),
        _rule("job_id:dcgm_gr_engine_active:avg", "%s / (%s > 0)" % (
            per_job("host:dcgm_gr_engine_active:sum"),
            per_job("host:dcgm_gpus:count"))),
    ])]


FILES = {"recording_fleet.yml": (fleet_groups, "the fleet (every goodputd "
                                 "instance and segment summed)"),
         "recording_segments.yml": (segment_groups, "one segment dimension "
                                    "(accelerator, workload, framework, size)"),
         "recording_dcgm.yml": (dcgm_groups, "jobs joined to DCGM-exporter's "
                                "per-GPU activity by host")}


def _quote(text):
    return "'" + text.replace("'", "''") + "'"


def render(file_name):
    """One recording rules file as YAML text."""
    build, what = FILES[file_name]
    out = [
        "# GENERATED by dashboards/generate.py from dashboards/rules_gen.py;",
        "# edit those and run: /usr/bin/python3 dashboards/generate.py",
        "# Recording rules for goodputd metrics (docs/metrics.md) at the level",
        "# of %s. Names are level:metric:operation. Ratios" % what,
        "# are quotients of summed numerators and denominators, never averages.",
        "groups:",
    ]
    for name, rules in build():
        out.append("  - name: %s" % name)
        out.append("    rules:")
        for record, expr in rules:
            out.append("      - record: %s" % record)
            out.append("        expr: %s" % _quote(expr))
    return "\n".join(out) + "\n"


def recorded_names():
    return {record for build, _ in FILES.values() for _, rules in build()
            for record, _ in rules}
