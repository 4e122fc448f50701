#include "server/windows_store.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace goodput::server {
namespace {

using State = internal::v1::FleetMetricsState;

std::string PartName(uint64_t serial) {
  return absl::StrFormat("%s%020u", WindowsStore::kPartPrefix, serial);
}

// The serial in a part record's name; nullopt for another name.
std::optional<uint64_t> SerialOf(const std::string& name) {
  const std::string prefix = WindowsStore::kPartPrefix;
  uint64_t serial = 0;
  if (name.compare(0, prefix.size(), prefix) != 0 ||
      !absl::SimpleAtoi(name.substr(prefix.size()), &serial)) {
    return std::nullopt;
  }
  return serial;
}

absl::Status Named(const std::string& name, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat("meta/", name, ": ", s.message()));
}

}  // namespace

size_t WindowsStore::PartOf(const std::string& job_id) {
  uint64_t h = 14695981039346656037ULL;  // 64-bit FNV-1a
  for (const unsigned char c : job_id) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return static_cast<size_t>(h % kParts);
}

absl::StatusOr<std::optional<State>> WindowsStore::Load() {
  std::optional<std::string> bytes;
  if (absl::Status s = store_->ReadMeta(kRecord, &bytes); !s.ok()) {
    return Named(kRecord, s);
  }
  std::map<std::string, std::string> stored;  // every part record, read once
  absl::Status s = store_->ScanMeta(
      kPartPrefix, [&](const std::string& name, const std::string& value) {
        stored.emplace(name, value);
        return absl::OkStatus();
      });
  if (!s.ok()) return Named(kPartPrefix, s);
  std::optional<State> state;
  if (bytes && !state.emplace().ParseFromString(*bytes)) {
    DeleteUnnamed({}, stored);  // its parts are unknown: Save writes anew
    return Named(kRecord, absl::DataLossError("does not parse"));
  }
  loaded_.clear();
  if (state) {
    loaded_.assign(state->job_parts().begin(), state->job_parts().end());
  }
  DeleteUnnamed(loaded_, stored);
  if (!state) return state;
  if (s = ReadParts(&stored, &*state); !s.ok()) return s;
  record_ = *std::move(bytes);
  return state;
}

void WindowsStore::Refused() {
  unnamed_.insert(unnamed_.end(), loaded_.begin(), loaded_.end());
  loaded_.clear();
  parts_ = std::vector<Part>(kParts);
  record_.clear();
}

absl::Status WindowsStore::ReadParts(std::map<std::string, std::string>* stored,
                                     State* state) {
  std::vector<Part> parts(kParts);
  for (const std::string& name : state->job_parts()) {
    auto it = stored->find(name);
    State part;
    absl::Status s;
    if (it == stored->end()) s = absl::DataLossError("named but missing");
    if (s.ok() && (!part.ParseFromString(it->second) || part.jobs().empty())) {
      s = absl::DataLossError("does not parse, or has no job");
    }
    Part* p = s.ok() ? &parts[PartOf(part.jobs(0).id())] : nullptr;
    if (s.ok() && !p->name.empty()) {
      s = absl::DataLossError(absl::StrCat("a second part with ", p->name));
    }
    if (!s.ok()) return Named(name, s);
    *p = Part{name, std::move(it->second)};
    for (State::Job& job : *part.mutable_jobs()) state->add_jobs()->Swap(&job);
  }
  state->clear_job_parts();
  parts_ = std::move(parts);
  return absl::OkStatus();
}

void WindowsStore::DeleteUnnamed(
    const std::vector<std::string>& named,
    const std::map<std::string, std::string>& stored) {
  auto past = [&](const std::string& name) {
    if (auto serial = SerialOf(name)) {
      next_serial_ = std::max(next_serial_, *serial + 1);
    }
  };
  const std::set<std::string> keep(named.begin(), named.end());
  for (const std::string& name : named) past(name);
  std::vector<std::string> drop;
  for (const auto& [name, value] : stored) {
    past(name);
    if (!keep.count(name)) drop.push_back(name);
  }
  // Left over (a failed delete): deleted after the next commit.
  if (!drop.empty() && !store_->DeleteMeta(drop).ok()) {
    unnamed_.insert(unnamed_.end(), drop.begin(), drop.end());
  }
}

std::vector<std::string> WindowsStore::SplitJobs(State* state) {
  std::vector<State> parts(kParts);
  for (State::Job& job : *state->mutable_jobs()) {
    parts[PartOf(job.id())].add_jobs()->Swap(&job);
  }
  state->clear_jobs();
  std::vector<std::string> bytes(kParts);
  for (size_t p = 0; p < kParts; ++p) {
    if (!parts[p].jobs().empty()) parts[p].SerializeToString(&bytes[p]);
  }
  return bytes;
}

absl::Status WindowsStore::Save(State state) {
  std::vector<std::string> bytes = SplitJobs(&state);
  std::vector<std::string> names(kParts);
  if (absl::Status s = WriteParts(bytes, &names); !s.ok()) return s;
  for (const std::string& name : names) {
    if (!name.empty()) state.add_job_parts(name);
  }
  std::string record;
  if (!state.SerializeToString(&record)) {
    return absl::InternalError("meta/windows: does not serialize");
  }
  if (record == record_) return absl::OkStatus();  // no part changed either
  absl::Status s = store_->WriteMeta(kRecord, record);
  if (!s.ok()) {
    Uncommitted(names, kParts);
    return Named(kRecord, s);
  }
  record_ = std::move(record);
  Commit(std::move(names), std::move(bytes));
  return absl::OkStatus();
}

absl::Status WindowsStore::WriteParts(const std::vector<std::string>& bytes,
                                      std::vector<std::string>* names) {
  std::vector<std::pair<std::string, std::string>> write;
  size_t size = 0;
  for (size_t p = 0; p < kParts; ++p) {
    if (bytes[p].empty() || bytes[p] == parts_[p].bytes) {
      (*names)[p] = bytes[p].empty() ? "" : parts_[p].name;
    } else {
      (*names)[p] = PartName(next_serial_++);
      write.emplace_back((*names)[p], bytes[p]);
      size += bytes[p].size();
    }
    if (write.empty() || (size < max_write_bytes_ && p + 1 < kParts)) continue;
    if (absl::Status s = store_->WriteMetas(write); !s.ok()) {
      Uncommitted(*names, p + 1);  // the failed write's too: maybe written
      return Named(write.front().first, s);
    }
    write.clear();
    size = 0;
  }
  return absl::OkStatus();
}

void WindowsStore::Uncommitted(const std::vector<std::string>& names,
                               size_t n) {
  for (size_t p = 0; p < n; ++p) {
    if (!names[p].empty() && names[p] != parts_[p].name) {
      unnamed_.push_back(names[p]);
    }
  }
}

void WindowsStore::Commit(std::vector<std::string> names,
                          std::vector<std::string> bytes) {
  for (size_t p = 0; p < kParts; ++p) {
    if (!parts_[p].name.empty() && parts_[p].name != names[p]) {
      unnamed_.push_back(parts_[p].name);
    }
    parts_[p] = Part{std::move(names[p]), std::move(bytes[p])};
  }
  loaded_.clear();
  if (!unnamed_.empty() && store_->DeleteMeta(unnamed_).ok()) unnamed_.clear();
}

}  // namespace goodput::server
