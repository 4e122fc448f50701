#include "cli/top_view.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"

namespace goodput::cli {
namespace {

using Json = nlohmann::json;

constexpr const char* kBadput[] = {
    "queued",    "recovery",   "init",    "prep",   "compile", "restore",
    "data_wait", "checkpoint", "reshard", "custom", "idle",    "lost"};
constexpr const char* kStates[] = {"RUNNING", "QUEUED", "RECOVERING", "ENDED"};

std::string Ratio(const Json& v) {
  return v.is_number() ? absl::StrFormat("%.3f", v.get<double>()) : "-";
}

std::string Percent(const Json& v) {
  return v.is_number() ? absl::StrFormat("%.1f%%", 100 * v.get<double>()) : "-";
}

// The member `key` of `object`, or null (never throws, never inserts).
const Json& At(const Json& object, const char* key) {
  static const Json* const kNull = new Json();
  if (!object.is_object()) return *kNull;
  auto it = object.find(key);
  return it == object.end() ? *kNull : *it;
}

std::string Str(const Json& object, const char* key, const char* otherwise) {
  const Json& v = At(object, key);
  return v.is_string() ? v.get<std::string>() : otherwise;
}

double Number(const Json& v) { return v.is_number() ? v.get<double>() : 0; }

// One job's badput: chip-hours outside productive, and its largest part.
struct Worst {
  std::string job_id, state, accelerator, workload, top;
  int64_t chips = 0;
  double badput_h = 0, lost_h = 0, top_share = 0;
  Json goodput, mpg;
};

Worst MakeWorst(const Json& job) {
  Worst w;
  w.job_id = Str(job, "job_id", "");
  w.state = Str(job, "state", "");
  w.accelerator = Str(job, "accelerator", "");
  w.workload = Str(job, "workload", "");
  w.chips = At(job, "chips").is_number() ? At(job, "chips").get<int64_t>() : 0;
  const Json& s = At(job, "seconds");
  const double total = Number(At(s, "total"));
  w.badput_h = w.chips * (total - Number(At(s, "productive"))) / 3600;
  w.lost_h = w.chips * Number(At(s, "lost")) / 3600;
  for (const char* c : kBadput) {
    if (Number(At(s, c)) > w.top_share) {
      w.top_share = Number(At(s, c));
      w.top = c;
    }
  }
  if (total > 0) w.top_share /= total;
  w.goodput = At(job, "goodput");
  w.mpg = At(job, "mpg");
  return w;
}

void AppendFleet(const Json& report, std::string* out) {
  const Json& fleet = At(report, "fleet");
  double total = Number(At(At(fleet, "chip_seconds"), "total"));
  std::map<std::string, int> states;
  for (const Json& job : At(report, "jobs")) states[Str(job, "state", "")]++;
  absl::StrAppendFormat(out, "FLEET  %d jobs:", At(report, "jobs").size());
  for (const char* s : kStates)
    absl::StrAppendFormat(out, " %d %s", states[s], s);
  absl::StrAppendFormat(out, "   %.1f chip-hours\n", total / 3600);
  absl::StrAppendFormat(out, "  MPG %s   SG %s   RG %s   PG %s   goodput %s",
                        Ratio(At(fleet, "mpg")), Ratio(At(fleet, "sg")),
                        Ratio(At(fleet, "rg")), Ratio(At(fleet, "pg")),
                        Percent(At(fleet, "goodput")));
  if (At(fleet, "sg_capacity").is_number()) {
    absl::StrAppendFormat(out, "   capacity: SG %s MPG %s",
                          Ratio(At(fleet, "sg_capacity")),
                          Ratio(At(fleet, "mpg_capacity")));
  }
  out->append("\n\n");
}

void AppendBadput(const Json& fleet, std::string* out) {
  const Json& cs = At(fleet, "chip_seconds");
  const double total = Number(At(cs, "total"));
  std::vector<std::pair<double, const char*>> rows;
  for (const char* c : kBadput) {
    if (Number(At(cs, c)) > 0) rows.push_back({Number(At(cs, c)), c});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.first > b.first;
  });
  absl::StrAppendFormat(out, "%-12s %12s %7s\n", "BADPUT", "chip-hours",
                        "share");
  for (const auto& [seconds, name] : rows) {
    absl::StrAppendFormat(out, "  %-10s %12.1f %6.1f%%\n", name, seconds / 3600,
                          total > 0 ? 100 * seconds / total : 0.0);
  }
  out->append("\n");
}

void AppendWorst(const Json& report, size_t limit, std::string* out) {
  std::vector<Worst> jobs;
  for (const Json& job : At(report, "jobs")) jobs.push_back(MakeWorst(job));
  std::stable_sort(
      jobs.begin(), jobs.end(),
      [](const Worst& a, const Worst& b) { return a.badput_h > b.badput_h; });
  if (jobs.size() > limit) jobs.resize(limit);
  absl::StrAppendFormat(out, "%-16s %6s %-10s %-8s %-14s %9s %8s %7s %6s  %s\n",
                        "WORST JOBS", "CHIPS", "STATE", "ACCEL", "WORKLOAD",
                        "BADPUT ch", "LOST ch", "GOODPUT", "MPG", "TOP BADPUT");
  for (const Worst& w : jobs) {
    absl::StrAppendFormat(
        out, "%-16s %6d %-10s %-8s %-14s %9.1f %8.1f %7s %6s  %s\n",
        w.job_id.substr(0, 16), w.chips, w.state, w.accelerator.substr(0, 8),
        w.workload.substr(0, 14), w.badput_h, w.lost_h, Percent(w.goodput),
        Ratio(w.mpg),
        w.top.empty() ? "-"
                      : absl::StrFormat("%s %.1f%%", w.top, 100 * w.top_share));
  }
}

void AppendCounters(const TopContext& context, std::string* out) {
  out->append("\nINGEST ");
  if (!context.counters) {
    out->append(" (metrics not reachable)\n");
    return;
  }
  for (const auto& [name, value] : *context.counters) {
    absl::StrAppendFormat(out, "  %s %.0f", name, value);
  }
  out->append("\n");
}

}  // namespace

absl::StatusOr<std::string> RenderTop(const std::string& report_json,
                                      const TopContext& context) {
  const Json report =
      Json::parse(report_json, nullptr, /*allow_exceptions=*/false);
  if (report.is_discarded() || !report.is_object() ||
      !report.contains("fleet") || !At(report, "jobs").is_array()) {
    return absl::InvalidArgumentError(
        "the server's report is not a report object (no \"fleet\" or "
        "\"jobs\")");
  }
  std::string out = absl::StrFormat(
      "goodput top  %s  as of %s  every %gs  (Ctrl-C quits)\nmetrics: %s\n\n",
      context.server, Str(report, "as_of", "?"), context.interval_ns / 1e9,
      context.metrics_url.empty() ? "-" : context.metrics_url);
  AppendFleet(report, &out);
  AppendBadput(At(report, "fleet"), &out);
  AppendWorst(report, context.worst_jobs, &out);
  AppendCounters(context, &out);
  return out;
}

}  // namespace goodput::cli
