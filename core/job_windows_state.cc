// JobWindows' edges as a JobWindowsState (proto/tracker_state.proto), and
// back (SaveEdges, RestoreEdges).
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/event_order.h"
#include "core/job_windows.h"

namespace goodput::core {
namespace {

using Proto = internal::v1::JobWindowsState;

absl::Status Bad(const std::string& job_id, const std::string& field,
                 const std::string& why) {
  return absl::DataLossError(
      absl::StrCat("windows of job ", job_id, ": ", field, ": ", why));
}

void SaveGrid(const WindowGrid& g, Proto* state) {
  state->set_grid_ns(g.grid_ns);
  state->set_fine_horizon_ns(g.fine_horizon_ns);
  state->set_coarse_grid_ns(g.coarse_grid_ns);
  state->set_horizon_ns(g.horizon_ns);
}

WindowGrid LoadGrid(const Proto& state) {
  return WindowGrid{state.grid_ns(), state.fine_horizon_ns(),
                    state.coarse_grid_ns(), state.horizon_ns()};
}

}  // namespace

void JobWindows::SaveEdges(Proto* state) const {
  state->Clear();
  state->set_version(kJobWindowsStateVersion);
  SaveGrid(grid_, state);
  if (next_edge_ns_) state->set_next_edge_ns(*next_edge_ns_);
  for (const Edge& edge : edges_) {
    Proto::Edge* e = state->add_edges();
    e->set_edge_ns(edge.edge_ns);
    if (edge.shadow) {
      edge.shadow->SaveState(e->mutable_shadow());
      continue;
    }
    const Offset& o = edge.offset;
    Proto::Offset* out = e->mutable_offset();
    out->mutable_nanos()->Add(o.nanos.begin(), o.nanos.end());
    if (std::any_of(o.chip_s.begin(), o.chip_s.end(),
                    [](double cs) { return cs != 0; })) {
      out->mutable_chip_s()->Add(o.chip_s.begin(), o.chip_s.end());
    }
    out->mutable_custom()->insert(o.custom.begin(), o.custom.end());
    out->set_costed_ns(o.costed_ns);
    out->set_costed_cs(o.costed_cs);
    out->set_ideal_s(o.ideal_s);
    for (const auto& [index, prefix] : o.first_prefix) {
      Proto::FirstPrefix* f = out->add_first_prefix();
      f->set_index(static_cast<int32_t>(index));
      f->set_prefix_ns(prefix);
    }
    SaveDeferred(o, out);
  }
}

void JobWindows::SaveDeferred(const Offset& o, Proto::Offset* out) {
  if (o.excluded_count > 0) {
    out->set_excluded_count(o.excluded_count);
    out->set_excluded_through(o.excluded_through);
  }
  for (const JobTracker::Completion& c : o.partial) {
    out->add_partial_first_step(c.first_step);
    out->add_partial_last_step(c.last_step);
    out->add_partial_rest_window_ns(c.rest_window_ns);
    out->add_partial_ideal_s(c.ideal_s);
  }
}

// The deferred completions of `saved`: the first `excluded_count` of the
// live tracker's pending non-first completions end at `excluded_through`,
// and each partial one is a later one, in step order; but for its window
// nanos and ideal seconds it is the live one's.
absl::Status JobWindows::LoadDeferred(const Proto::Offset& saved,
                                      const Pending& pending, Offset* o) const {
  const std::string& id = live_.job_id();
  const int n = saved.partial_first_step_size();
  if (saved.partial_last_step_size() != n ||
      saved.partial_rest_window_ns_size() != n ||
      saved.partial_ideal_s_size() != n) {
    return Bad(id, "offset.partial", "columns of different lengths");
  }
  const int64_t k = saved.excluded_count();
  if (k < 0 || k > static_cast<int64_t>(pending.size()) ||
      (k > 0 && pending[k - 1]->last_step != saved.excluded_through())) {
    return Bad(id, "offset.excluded_count",
               absl::StrCat(k, " completions through step ",
                            saved.excluded_through(), " are not the job's"));
  }
  o->excluded_count = k;
  o->excluded_through = k > 0 ? saved.excluded_through() : 0;
  auto next = pending.begin() + k;
  for (int i = 0; i < n; ++i) {
    const int64_t first = saved.partial_first_step(i);
    next = std::lower_bound(next, pending.end(), first,
                            [](const JobTracker::Completion* c, int64_t step) {
                              return c->first_step < step;
                            });
    if (next == pending.end() || (*next)->first_step != first ||
        (*next)->last_step != saved.partial_last_step(i)) {
      return Bad(id, "offset.partial_first_step",
                 absl::StrCat(first, " is not a later pending completion"));
    }
    JobTracker::Completion c = **next++;
    c.rest_window_ns = saved.partial_rest_window_ns(i);
    c.ideal_s = saved.partial_ideal_s(i);
    o->partial.push_back(c);
  }
  return absl::OkStatus();
}

absl::Status JobWindows::LoadOffset(const Proto::Offset& saved,
                                    const Pending& pending, Offset* o) const {
  const std::string& id = live_.job_id();
  if (saved.nanos_size() != kNumCategories) {
    return Bad(id, "offset.nanos",
               absl::StrCat(saved.nanos_size(), " of ", kNumCategories,
                            " categories"));
  }
  if (saved.chip_s_size() != 0 && saved.chip_s_size() != kNumCategories) {
    return Bad(id, "offset.chip_s",
               absl::StrCat(saved.chip_s_size(), " of ", kNumCategories,
                            " categories"));
  }
  std::copy(saved.nanos().begin(), saved.nanos().end(), o->nanos.begin());
  std::copy(saved.chip_s().begin(), saved.chip_s().end(), o->chip_s.begin());
  o->custom.insert(saved.custom().begin(), saved.custom().end());
  o->costed_ns = saved.costed_ns();
  o->costed_cs = saved.costed_cs();
  o->ideal_s = saved.ideal_s();
  for (const Proto::FirstPrefix& f : saved.first_prefix()) {
    if (f.index() < 0 ||
        static_cast<size_t>(f.index()) >= live_.first_steps_.size()) {
      return Bad(id, "offset.first_prefix.index",
                 absl::StrCat(f.index(), " is out of range"));
    }
    o->first_prefix.emplace_back(static_cast<size_t>(f.index()), f.prefix_ns());
  }
  return LoadDeferred(saved, pending, o);
}

absl::StatusOr<JobWindows::Edge> JobWindows::LoadEdge(
    const Proto::Edge& saved, const Pending& pending) const {
  Edge edge{saved.edge_ns(), nullptr, nullptr, Offset{}};
  if (saved.has_offset()) {
    absl::Status s = LoadOffset(saved.offset(), pending, &edge.offset);
    if (!s.ok()) return s;
    return std::move(edge);
  }
  const std::string& id = live_.job_id();
  if (!saved.has_shadow()) return Bad(id, "edge", "neither shadow nor offset");
  if (saved.shadow().job_id() != id) {
    return Bad(id, "edge.shadow.job_id", saved.shadow().job_id());
  }
  edge.config = std::make_unique<Config>(*config_);
  edge.config->since_ns = edge.edge_ns;
  absl::StatusOr<JobTracker> shadow =
      JobTracker::FromState(saved.shadow(), edge.config.get());
  if (!shadow.ok()) {
    return Bad(id, "edge.shadow", std::string(shadow.status().message()));
  }
  if (shadow->cursor_ns() != live_.cursor_ns()) {
    return Bad(id, "edge.shadow.cursor_ns", "not the live tracker's");
  }
  edge.shadow = std::make_unique<JobTracker>(*std::move(shadow));
  return std::move(edge);
}

absl::Status JobWindows::RestoreEdges(const Proto& state) {
  // Version 1 is version 2 without deferred completions (its edges
  // collapsed only once none was pending from before them).
  if (state.version() != 1 && state.version() != kJobWindowsStateVersion) {
    return absl::InvalidArgumentError(absl::StrCat("windows: version ",
                                                   state.version(), ", want ",
                                                   kJobWindowsStateVersion));
  }
  if (!(LoadGrid(state) == grid_)) {
    return absl::InvalidArgumentError("windows: saved under another grid");
  }
  Pending pending;
  for (const JobTracker::Completion& c : live_.pending_) {
    if (c.first_ref < 0) pending.push_back(&c);
  }
  std::vector<Edge> edges;
  edges.reserve(state.edges_size());
  for (const Proto::Edge& saved : state.edges()) {
    const int64_t g = saved.edge_ns();
    if (g % grid_.grid_ns != 0 ||
        (!edges.empty() && g <= edges.back().edge_ns)) {
      return Bad(live_.job_id(), "edge.edge_ns",
                 absl::StrCat(FormatTimeNanos(g), " is off the grid or order"));
    }
    absl::StatusOr<Edge> edge = LoadEdge(saved, pending);
    if (!edge.ok()) return edge.status();
    edges.push_back(*std::move(edge));
  }
  edges_ = std::move(edges);
  shadows_ = shadow_count();
  next_edge_ns_.reset();
  if (state.has_next_edge_ns()) next_edge_ns_ = state.next_edge_ns();
  return absl::OkStatus();
}

}  // namespace goodput::core
