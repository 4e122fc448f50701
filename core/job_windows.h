#ifndef GOODPUT_CORE_JOB_WINDOWS_H_
#define GOODPUT_CORE_JOB_WINDOWS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/config.h"
#include "core/job_tracker.h"
#include "core/report.h"
#include "proto/event.pb.h"
#include "proto/tracker_state.pb.h"

namespace goodput::core {

// The JobWindowsState layout that JobWindows::SaveEdges writes and
// RestoreEdges reads (proto/tracker_state.proto).
// Version 2 adds a collapsed edge's deferred completions; RestoreEdges
// reads versions 1 and 2.
inline constexpr uint32_t kJobWindowsStateVersion = 2;

// The grid of window starts that a live `--since` answers from
// (docs/semantics.md, "Windows as of now"): edges every `grid_ns` of event
// time within `fine_horizon_ns` of the newest event, every `coarse_grid_ns`
// (a multiple of grid_ns) within `horizon_ns`.
struct WindowGrid {
  int64_t grid_ns = 60 * kNanosPerSecond;
  int64_t fine_horizon_ns = 2 * 3600 * kNanosPerSecond;
  int64_t coarse_grid_ns = 3600 * kNanosPerSecond;
  int64_t horizon_ns = 25 * 3600 * kNanosPerSecond;

  // The edge at or before `since_ns` that a window as of `newest_ns` (the
  // newest applied event time of the fleet) starts at: the fine edge if
  // within fine_horizon_ns of newest_ns (or after it), else the coarse
  // one if within horizon_ns; nullopt outside the horizon.
  std::optional<int64_t> Snap(int64_t since_ns, int64_t newest_ns) const;
  // Whether an edge is kept while the job's newest event is at `newest_ns`.
  bool Keeps(int64_t edge_ns, int64_t newest_ns) const;
  // Whether `edge_ns` is within fine_horizon_ns of `newest_ns` (or after
  // it): on the fine grid, and always kept.
  bool Fine(int64_t edge_ns, int64_t newest_ns) const {
    return newest_ns - edge_ns <= fine_horizon_ns;
  }
  bool operator==(const WindowGrid& o) const {
    return grid_ns == o.grid_ns && fine_horizon_ns == o.fine_horizon_ns &&
           coarse_grid_ns == o.coarse_grid_ns && horizon_ns == o.horizon_ns;
  }
  // An error naming the field unless the grid is usable.
  absl::Status Validate() const;
};

// One job's JobTracker (no window) plus, for every grid edge g it has
// passed within the horizon, what a replay under since_ns = g differs by.
// At the crossing of g an edge opens as a shadow JobTracker under that
// window (the live one with its window parts cleared, as
// JobTracker::FromState does) fed the same events; once no open step or
// start gap begun before g straddles it, the edge collapses to its
// difference from the live tracker (category, custom, costed and ideal
// sums, and the window prefix of each first step, whose compile share is
// recomputed at each report, rule 4). What can still change that
// difference is the fate of the completions pending from before g (a
// checkpoint keeps them, an interruption loses them): the edge keeps how
// many lie wholly before g and the window share of the one that straddles
// it, and follows the live tracker's resolutions of them
// (JobTracker::Resolution), so a job holds about one shadow at a time
// however far apart its checkpoints are. A window's report
// is then the live tracker with the difference taken out: integer nanos
// exactly a replay's, chip-seconds and ideal seconds up to floating-point
// rounding. Owns its trackers and the shadows' configs; `config` (the
// base, without a window) must outlive it. Not thread-safe: one caller at
// a time, const calls included (its trackers keep caches).
class JobWindows {
 public:
  JobWindows(std::string job_id, const Config* config, WindowGrid grid);
  // Adopts `live` (e.g. loaded from a snapshot, under `config`): it keeps
  // no edge at or before its cursor; the events applied next open those
  // after it.
  JobWindows(JobTracker live, const Config* config, WindowGrid grid);
  JobWindows(const JobWindows& other);
  JobWindows& operator=(const JobWindows& other);
  JobWindows(JobWindows&&) = default;
  JobWindows& operator=(JobWindows&&) = default;

  // As JobTracker::Apply, to the live tracker and every shadow; first
  // opens the edges before the event's time.
  absl::StatusOr<ApplyResult> Apply(const v1::Event& e);
  // As JobTracker::Exclude, to the live tracker and every shadow.
  absl::Status Exclude(int64_t start_ns, int64_t until_ns);
  // Drops the edges the grid no longer keeps as of `newest_ns` (e.g. the
  // fleet's newest event: an ended job's edges age out with it).
  void Prune(int64_t newest_ns);

  // The job as of `as_of_ns` (not before its last event) within the window
  // since `windowed->since_ns` (an edge; `windowed` is the base config with
  // that window, and outlives the call). FailedPrecondition if that edge
  // was not kept (the caller replays instead).
  absl::StatusOr<JobReport> Report(int64_t as_of_ns,
                                   const Config* windowed) const;
  // The same, making the windowed config.
  absl::StatusOr<JobReport> Report(int64_t as_of_ns, int64_t edge_ns) const;

  // --- Persistence (core/job_windows_state.cc), beside the live tracker's
  // own state (JobTracker::SaveState).
  // Writes the kept edges (shadows as their JobTrackerState, collapsed
  // edges as their offsets), the next edge to open and the grid; not the
  // live tracker. Replaces `*state`.
  void SaveEdges(internal::v1::JobWindowsState* state) const;
  // Replaces the edges by those SaveEdges wrote when the live tracker was
  // the one this was made with (JobWindows(JobTracker, ...) on the tracker
  // loaded from the state saved beside them): applying the remaining
  // events then gives exactly what an uninterrupted JobWindows gives. On an
  // error the edges are left as they were: InvalidArgument for another
  // version or grid, DataLoss naming the field for an inconsistent record
  // (edges out of order or off the grid, a shadow of another job or that
  // does not load under its window, an index out of range).
  absl::Status RestoreEdges(const internal::v1::JobWindowsState& state);

  const JobTracker& live() const { return live_; }
  size_t window_count() const { return edges_.size(); }
  // Edges still held as shadow trackers (not collapsed).
  size_t shadow_count() const;

 private:
  // What the live tracker's window-dependent sums exceed a shadow's by.
  struct Offset {
    CategoryNanos nanos{};
    CategoryChipSeconds chip_s{};
    std::map<std::string, int64_t> custom;
    int64_t costed_ns = 0;
    double costed_cs = 0, ideal_s = 0;
    std::vector<std::pair<size_t, int64_t>> first_prefix;  // index, prefix
    // The live tracker's pending non-first completions whose window share
    // differs: the first `excluded_count` (through step `excluded_through`)
    // lie wholly before the edge; `partial` as the shadow held them (their
    // window share, straddling the edge).
    int64_t excluded_count = 0;
    int64_t excluded_through = 0;
    std::vector<JobTracker::Completion> partial;
  };
  struct Edge {
    int64_t edge_ns;
    std::unique_ptr<Config> config;      // set while a shadow
    std::unique_ptr<JobTracker> shadow;  // set until collapsed
    Offset offset;                       // once collapsed
  };

  Edge Open(int64_t edge_ns) const;
  void OpenBefore(int64_t t);
  bool Settled(const JobTracker& shadow, int64_t edge_ns) const;
  void Collapse(Edge* edge) const;
  void Defer(const JobTracker& shadow, Offset* o) const;
  // Follows the live tracker's last Apply's resolutions on every collapsed
  // edge.
  void ResolveEdges();
  static void Resolve(const JobTracker::Resolution& r, Offset* o);
  static void TakeLoss(const JobTracker::Completion& c, int64_t window_ns,
                       double window_ideal_s, Offset* o);
  absl::StatusOr<ApplyResult> ApplyShadows(const v1::Event& e,
                                           ApplyResult want);
  JobTracker Windowed(const Edge& edge, const Config* windowed) const;
  const Edge* Find(int64_t edge_ns) const;
  // The live tracker's pending non-first completions, in step order.
  using Pending = std::vector<const JobTracker::Completion*>;
  absl::StatusOr<Edge> LoadEdge(
      const internal::v1::JobWindowsState::Edge& saved,
      const Pending& pending) const;
  absl::Status LoadOffset(const internal::v1::JobWindowsState::Offset& saved,
                          const Pending& pending, Offset* offset) const;
  static void SaveDeferred(const Offset& o,
                           internal::v1::JobWindowsState::Offset* out);
  absl::Status LoadDeferred(const internal::v1::JobWindowsState::Offset& saved,
                            const Pending& pending, Offset* o) const;

  const Config* config_;
  WindowGrid grid_;
  JobTracker live_;
  std::vector<Edge> edges_;              // ascending edge_ns
  std::optional<int64_t> next_edge_ns_;  // the next edge to open
  size_t shadows_ = 0;  // edges_ with a shadow: ApplyShadows stops there
};

}  // namespace goodput::core

#endif  // GOODPUT_CORE_JOB_WINDOWS_H_
