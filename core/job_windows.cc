#include "core/job_windows.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/event_order.h"

namespace goodput::core {
namespace {

// The multiple of `step` at or before `t` (floor division).
int64_t FloorTo(int64_t t, int64_t step) {
  int64_t q = t / step;
  if (t % step != 0 && t < 0) --q;
  return q * step;
}

}  // namespace

std::optional<int64_t> WindowGrid::Snap(int64_t since_ns,
                                        int64_t newest_ns) const {
  const int64_t fine = FloorTo(since_ns, grid_ns);
  if (Fine(fine, newest_ns)) return fine;
  const int64_t coarse = FloorTo(since_ns, coarse_grid_ns);
  if (newest_ns - coarse <= horizon_ns) return coarse;
  return std::nullopt;
}

bool WindowGrid::Keeps(int64_t edge_ns, int64_t newest_ns) const {
  if (Fine(edge_ns, newest_ns)) return true;
  return edge_ns % coarse_grid_ns == 0 && newest_ns - edge_ns <= horizon_ns;
}

absl::Status WindowGrid::Validate() const {
  if (grid_ns <= 0) return absl::InvalidArgumentError("window grid <= 0");
  if (coarse_grid_ns <= 0 || coarse_grid_ns % grid_ns != 0) {
    return absl::InvalidArgumentError(
        "window coarse grid is not a positive multiple of the grid");
  }
  if (fine_horizon_ns < 0 || horizon_ns < fine_horizon_ns) {
    return absl::InvalidArgumentError(
        "window horizon is below the fine horizon");
  }
  return absl::OkStatus();
}

JobWindows::JobWindows(std::string job_id, const Config* config,
                       WindowGrid grid)
    : config_(config), grid_(grid), live_(std::move(job_id), config) {
  live_.resolutions_.on = true;
}

JobWindows::JobWindows(JobTracker live, const Config* config, WindowGrid grid)
    : config_(config), grid_(grid), live_(std::move(live)) {
  live_.resolutions_.on = true;
  if (live_.started_) {
    next_edge_ns_ = FloorTo(live_.cursor_ns(), grid_.grid_ns) + grid_.grid_ns;
  }
}

JobWindows::JobWindows(const JobWindows& other)
    : config_(other.config_),
      grid_(other.grid_),
      live_(other.live_),
      next_edge_ns_(other.next_edge_ns_),
      shadows_(other.shadows_) {
  live_.resolutions_.on = true;
  edges_.reserve(other.edges_.size());
  for (const Edge& e : other.edges_) {
    Edge copy{e.edge_ns, nullptr, nullptr, e.offset};
    if (e.shadow) {
      copy.config = std::make_unique<Config>(*e.config);
      copy.shadow = std::make_unique<JobTracker>(*e.shadow);
      copy.shadow->config_ = copy.config.get();
    }
    edges_.push_back(std::move(copy));
  }
}

JobWindows& JobWindows::operator=(const JobWindows& other) {
  if (this != &other) *this = JobWindows(other);
  return *this;
}

size_t JobWindows::shadow_count() const {
  return std::count_if(edges_.begin(), edges_.end(),
                       [](const Edge& e) { return e.shadow != nullptr; });
}

// The live tracker under the window since `edge_ns` (at or after its
// cursor): as JobTracker::FromState's ClipToWindow, without the proto.
JobWindows::Edge JobWindows::Open(int64_t edge_ns) const {
  Edge edge{edge_ns, std::make_unique<Config>(*config_),
            std::make_unique<JobTracker>(live_), Offset{}};
  edge.config->since_ns = edge_ns;
  JobTracker* t = edge.shadow.get();
  t->config_ = edge.config.get();
  t->sink_.nanos = {};
  t->sink_.chip_s = {};
  for (auto& [name, nanos] : t->sink_.custom) nanos = 0;
  t->sink_.open_prefix_ns = t->sink_.open_ns;
  t->sink_.gap_prefix_ns = t->sink_.gap_ns;
  t->costed_productive_ns_ = 0;
  t->costed_productive_cs_ = 0;
  t->ideal_s_ = 0;
  for (JobTracker::Completion& c : t->pending_) {
    c.rest_window_ns = 0;
    if (c.first_ref < 0) c.ideal_s = 0;
  }
  for (JobTracker::FirstStep& f : t->first_steps_) f.prefix_ns = f.time_ns;
  t->recog_.pending_ns = t->recog_.pending_costed_ns = 0;
  t->recog_.pending_ideal_s = 0;
  t->recog_.pending_cs = t->recog_.pending_costed_cs = 0;
  return edge;
}

void JobWindows::OpenBefore(int64_t t) {
  int64_t g =
      std::max(*next_edge_ns_, FloorTo(t - grid_.horizon_ns, grid_.grid_ns));
  for (; g < t; g += grid_.grid_ns) {
    if (!grid_.Keeps(g, t)) continue;
    edges_.push_back(Open(g));
    ++shadows_;
  }
  next_edge_ns_ = std::max(*next_edge_ns_, g);
}

// Whether every instant before the edge is attributed (the cursor is at or
// after it: an exclusion event does not move it) and no open step or start
// gap straddles the edge: then the shadow and the live tracker change
// alike, but for the fates of the completions pending from before the edge
// (Defer). The pending lists match (the shadow took the same events).
bool JobWindows::Settled(const JobTracker& shadow, int64_t edge_ns) const {
  if (shadow.cursor_ns() < edge_ns) return false;
  if (shadow.sink_.open_prefix_ns != 0 || shadow.sink_.gap_prefix_ns != 0) {
    return false;
  }
  return shadow.pending_.size() == live_.pending_.size();
}

// The pending non-first completions whose window share differs from the
// live tracker's: a run of those wholly before the edge (no window time,
// no ideal time: Open cleared them), then the one straddling it.
void JobWindows::Defer(const JobTracker& shadow, Offset* o) const {
  for (size_t i = 0; i < shadow.pending_.size(); ++i) {
    const JobTracker::Completion& w = shadow.pending_[i];
    const JobTracker::Completion& l = live_.pending_[i];
    if (w.first_ref >= 0) continue;
    if (w.rest_window_ns == 0 && w.ideal_s == 0 && o->partial.empty()) {
      ++o->excluded_count;
      o->excluded_through = w.last_step;
      continue;
    }
    if (w.rest_window_ns == l.rest_window_ns && w.ideal_s == l.ideal_s) {
      continue;
    }
    o->partial.push_back(w);
  }
}

void JobWindows::Collapse(Edge* edge) const {
  const JobTracker& w = *edge->shadow;
  Offset& o = edge->offset;
  for (size_t c = 0; c < o.nanos.size(); ++c) {
    o.nanos[c] = live_.sink_.nanos[c] - w.sink_.nanos[c];
    o.chip_s[c] = live_.sink_.chip_s[c] - w.sink_.chip_s[c];
  }
  for (const auto& [name, nanos] : live_.sink_.custom) {
    auto it = w.sink_.custom.find(name);
    const int64_t d = nanos - (it == w.sink_.custom.end() ? 0 : it->second);
    if (d != 0) o.custom[name] = d;
  }
  o.costed_ns = live_.costed_productive_ns_ - w.costed_productive_ns_;
  o.costed_cs = live_.costed_productive_cs_ - w.costed_productive_cs_;
  o.ideal_s = live_.ideal_s_ - w.ideal_s_;
  for (size_t i = 0; i < w.first_steps_.size(); ++i) {
    if (w.first_steps_[i].prefix_ns != live_.first_steps_[i].prefix_ns) {
      o.first_prefix.emplace_back(i, w.first_steps_[i].prefix_ns);
    }
  }
  Defer(w, &o);
  edge->shadow.reset();
  edge->config.reset();
}

// What a lost completion `c` (as the live tracker held it) moves from
// productive to lost in the live tracker beyond the shadow's
// `window_ns` and `window_ideal_s` of it (JobTracker::Lose in both).
void JobWindows::TakeLoss(const JobTracker::Completion& c, int64_t window_ns,
                          double window_ideal_s, Offset* o) {
  const int64_t d = c.rest_window_ns - window_ns;
  const double dcs = JobTracker::ChipSeconds(c.rest_window_ns, c.chips) -
                     JobTracker::ChipSeconds(window_ns, c.chips);
  o->nanos[Index(Category::kProductive)] -= d;
  o->nanos[Index(Category::kLost)] += d;
  o->chip_s[Index(Category::kProductive)] -= dcs;
  o->chip_s[Index(Category::kLost)] += dcs;
  if (!c.costed) return;
  o->costed_ns -= d;
  o->costed_cs -= dcs;
  o->ideal_s -= c.ideal_s - window_ideal_s;
}

void JobWindows::Resolve(const JobTracker::Resolution& r, Offset* o) {
  const JobTracker::Completion& c = r.completion;
  if (o->excluded_count > 0 && c.last_step <= o->excluded_through) {
    // Wholly before the edge: the shadow holds it with no window time.
    if (r.kind == JobTracker::Resolution::kSplit) {
      ++o->excluded_count;
      return;
    }
    if (--o->excluded_count == 0) o->excluded_through = 0;
    if (r.kind == JobTracker::Resolution::kLost) TakeLoss(c, 0, 0, o);
    return;
  }
  auto it = std::find_if(o->partial.begin(), o->partial.end(),
                         [&](const JobTracker::Completion& p) {
                           return p.first_step == c.first_step &&
                                  p.last_step == c.last_step;
                         });
  if (it == o->partial.end()) return;  // the same in the window
  if (r.kind == JobTracker::Resolution::kSplit) {
    JobTracker::Completion upper = JobTracker::SplitOff(&*it, r.through_step);
    o->partial.insert(it + 1, upper);
    return;
  }
  if (r.kind == JobTracker::Resolution::kLost) {
    TakeLoss(c, it->rest_window_ns, it->ideal_s, o);
  }
  o->partial.erase(it);
  if (o->partial.empty()) o->partial.shrink_to_fit();
}

// Only the edges with deferred completions (those opened since about the
// last checkpoint) look at the log; it is then emptied and, after a
// checkpoint of many completions, given back.
void JobWindows::ResolveEdges() {
  std::vector<JobTracker::Resolution>& log = live_.resolutions_.entries;
  if (log.empty()) return;
  for (Edge& edge : edges_) {
    Offset& o = edge.offset;
    if (edge.shadow || (o.excluded_count == 0 && o.partial.empty())) continue;
    for (const JobTracker::Resolution& r : log) Resolve(r, &o);
  }
  log.clear();
  if (log.capacity() > 64) log.shrink_to_fit();
}

// Newest first: shadows are mostly the newest edges (an edge collapses as
// soon as nothing straddles it), so the walk stops after a few.
absl::StatusOr<ApplyResult> JobWindows::ApplyShadows(const v1::Event& e,
                                                     ApplyResult want) {
  size_t left = shadows_;
  for (auto it = edges_.rbegin(); left > 0 && it != edges_.rend(); ++it) {
    Edge& edge = *it;
    if (!edge.shadow) continue;
    --left;
    absl::StatusOr<ApplyResult> r = edge.shadow->Apply(e);
    if (!r.ok() || *r != want) {
      return absl::InternalError(absl::StrCat(
          "window since ", FormatTimeNanos(edge.edge_ns), " of job ",
          live_.job_id(), " diverged from the live tracker"));
    }
    if (!Settled(*edge.shadow, edge.edge_ns)) continue;
    Collapse(&edge);
    --shadows_;
  }
  return want;
}

absl::StatusOr<ApplyResult> JobWindows::Apply(const v1::Event& e) {
  const int64_t t = EventTimeNanos(e);
  if (next_edge_ns_) OpenBefore(t);
  absl::StatusOr<ApplyResult> result = live_.Apply(e);
  if (!result.ok()) return result;
  ResolveEdges();  // before ApplyShadows collapses more edges
  result = ApplyShadows(e, *result);
  if (!result.ok()) return result;
  if (!next_edge_ns_) next_edge_ns_ = FloorTo(t, grid_.grid_ns) + grid_.grid_ns;
  Prune(t);
  return result;
}

absl::Status JobWindows::Exclude(int64_t start_ns, int64_t until_ns) {
  if (absl::Status s = live_.Exclude(start_ns, until_ns); !s.ok()) return s;
  for (Edge& edge : edges_) {
    if (!edge.shadow) continue;
    if (absl::Status s = edge.shadow->Exclude(start_ns, until_ns); !s.ok()) {
      return absl::InternalError(absl::StrCat(
          "window since ", FormatTimeNanos(edge.edge_ns), ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

void JobWindows::Prune(int64_t newest_ns) {
  // Edges within the fine horizon stay: a suffix (edges_ is in time order),
  // so only the older ones before it are looked at.
  auto fine = std::find_if(edges_.begin(), edges_.end(), [&](const Edge& e) {
    return grid_.Fine(e.edge_ns, newest_ns);
  });
  edges_.erase(std::remove_if(edges_.begin(), fine,
                              [&](const Edge& e) {
                                if (grid_.Keeps(e.edge_ns, newest_ns)) {
                                  return false;
                                }
                                if (e.shadow) --shadows_;
                                return true;
                              }),
               fine);
}

const JobWindows::Edge* JobWindows::Find(int64_t edge_ns) const {
  auto it = std::lower_bound(
      edges_.begin(), edges_.end(), edge_ns,
      [](const Edge& e, int64_t edge) { return e.edge_ns < edge; });
  return it != edges_.end() && it->edge_ns == edge_ns ? &*it : nullptr;
}

// The live tracker with a collapsed edge's offset taken out, under
// `windowed`: what the shadow would be now.
JobTracker JobWindows::Windowed(const Edge& edge,
                                const Config* windowed) const {
  JobTracker t = live_;
  t.config_ = windowed;
  const Offset& o = edge.offset;
  for (size_t c = 0; c < o.nanos.size(); ++c) {
    t.sink_.nanos[c] -= o.nanos[c];
    t.sink_.chip_s[c] -= o.chip_s[c];
  }
  for (const auto& [name, d] : o.custom) t.sink_.custom[name] -= d;
  t.costed_productive_ns_ -= o.costed_ns;
  t.costed_productive_cs_ -= o.costed_cs;
  t.ideal_s_ -= o.ideal_s;
  for (const auto& [i, prefix] : o.first_prefix) {
    t.first_steps_[i].prefix_ns = prefix;
  }
  return t;
}

absl::StatusOr<JobReport> JobWindows::Report(int64_t as_of_ns,
                                             const Config* windowed) const {
  const int64_t edge_ns = windowed->since_ns;
  // A window from the job's first event or before covers all its time.
  if (!next_edge_ns_ || edge_ns <= live_.first_event_ns()) {
    return live_.Report(as_of_ns);
  }
  if (edge_ns >= live_.cursor_ns()) {
    Edge e = Open(edge_ns);
    e.shadow->config_ = windowed;
    return e.shadow->Report(as_of_ns);
  }
  const Edge* e = Find(edge_ns);
  if (e == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", live_.job_id(), " keeps no window since ",
                     FormatTimeNanos(edge_ns)));
  }
  if (e->shadow) return e->shadow->Report(as_of_ns);
  return Windowed(*e, windowed).Report(as_of_ns);
}

absl::StatusOr<JobReport> JobWindows::Report(int64_t as_of_ns,
                                             int64_t edge_ns) const {
  Config windowed = *config_;
  windowed.since_ns = edge_ns;
  return Report(as_of_ns, &windowed);
}

}  // namespace goodput::core
