#ifndef GOODPUT_IMPORTER_IMPORT_MLGM_H_
#define GOODPUT_IMPORTER_IMPORT_MLGM_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "importer/import_mlgm_entry.h"
#include "importer/import_mlgm_job.h"
#include "nlohmann/json.hpp"
#include "proto/event.pb.h"

namespace goodput::importer {

struct MlgmResult {
  // Every job's events in time order; jobs in order of first appearance.
  std::vector<v1::Event> events;
  // "WHERE: reason" per bad entry, in input order.
  std::vector<std::string> errors;
  int64_t entries = 0;  // entries read (blank lines not counted)
  int64_t bad = 0;      // entries with an error (errors above)
  // Marks equal in every field to another of the same job (e.g. overlapping
  // exports): applied once.
  int64_t duplicates = 0;
  // Elastic slice-count records that became allocations, and those
  // dropped, by reason (docs/migrating.md, "Elastic jobs").
  int64_t slice_allocations = 0;
  std::map<std::string, int64_t> dropped;
};

// Converts ml-goodput-measurement log entries of any number of jobs into
// goodput events (goodputctl import-mlgm): AddLine/AddEntry decode each
// entry (ParseMlgmEntry) and group its marks by job; Finish() sorts each
// job's marks by time (at one instant: job starts first, job ends last,
// the rest in input order), drops repeated marks, and runs the rest
// through a MlgmJobConverter. Pure: no I/O, no clock. Owns its copies of
// the marks. Not thread-safe; single use.
class MlgmConverter {
 public:
  explicit MlgmConverter(MlgmOptions options);

  // Adds one JSON Lines line; `where` (e.g. "run.jsonl:12") names it in
  // errors. Lines holding only whitespace are ignored.
  void AddLine(absl::string_view line, std::string where);

  // Adds one already parsed entry (e.g. an element of a JSON array).
  void AddEntry(const nlohmann::json& entry, std::string where);

  // Records an entry that could not be read as JSON, with `reason`.
  void AddBadEntry(std::string where, absl::string_view reason);

  // Converts everything added. Fails only when --job_id is set and the
  // entries name more than one job.
  absl::StatusOr<MlgmResult> Finish();

 private:
  struct Pending {
    MlgmMark mark;
    int64_t entry;  // index into wheres_
  };

  void AddError(int64_t entry, absl::string_view reason);
  void AddMark(MlgmMark mark, int64_t entry);
  std::vector<v1::Event> ConvertJob(const std::string& job,
                                    std::vector<Pending>& marks);
  int64_t MinChips(const std::vector<Pending>& marks) const;
  std::vector<v1::Event> WithExclusions(const std::string& job,
                                        std::vector<v1::Event> events) const;
  // Whether marks[i] repeats a mark at the same instant before it.
  static bool Repeats(const std::vector<Pending>& marks, size_t i);
  std::vector<std::string> SortedErrors();

  MlgmOptions options_;
  std::vector<std::string> wheres_;                      // per entry
  std::vector<std::pair<int64_t, std::string>> errors_;  // (entry, reason)
  std::vector<std::string> job_order_;
  std::map<std::string, std::vector<Pending>> marks_;  // by job id
  std::set<std::string> job_names_;  // distinct job_name values seen
  int64_t duplicates_ = 0;
  int64_t slice_allocations_ = 0;
  std::map<std::string, int64_t> dropped_;
};

}  // namespace goodput::importer

#endif  // GOODPUT_IMPORTER_IMPORT_MLGM_H_
