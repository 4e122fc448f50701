#include "agent/client_spool_reader.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace goodput::agent {
namespace {

bool ProcessAlive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

// The <pid> of "spool-<pid>-<hex>.<ext>", or -1.
pid_t WriterPid(const std::string& name) {
  if (!absl::StartsWith(name, "spool-")) return -1;
  size_t dash = name.find('-', 6);
  int pid = -1;
  if (dash == std::string::npos ||
      !absl::SimpleAtoi(name.substr(6, dash - 6), &pid)) {
    return -1;
  }
  return pid;
}

}  // namespace

ClientSpoolReader::ClientSpoolReader(
    Options options, std::function<void(v1::Event, uint64_t)> add,
    std::function<void()> flush, Clock* clock)
    : options_(std::move(options)),
      add_(std::move(add)),
      flush_(std::move(flush)),
      clock_(clock) {
  if (!options_.pid_alive) options_.pid_alive = ProcessAlive;
}

absl::Status ClientSpoolReader::Init() {
  std::error_code ec;
  if (std::filesystem::is_directory(options_.dir, ec)) return absl::OkStatus();
  if (!std::filesystem::create_directories(options_.dir, ec) ||
      ::chmod(options_.dir.c_str(), 01777) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--client_spool_dir: cannot create ", options_.dir, ": ",
                     ec ? ec.message() : strerror(errno)));
  }
  return absl::OkStatus();
}

bool ClientSpoolReader::Ready(const std::string& name) const {
  const pid_t pid = WriterPid(name);
  if (pid <= 0) return false;
  if (absl::EndsWith(name, ".jsonl")) return true;
  return absl::EndsWith(name, ".open") && !options_.pid_alive(pid);
}

ClientSpoolScan ClientSpoolReader::Scan() {
  ClientSpoolScan scan;
  std::vector<std::string> ready;
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::directory_iterator(options_.dir, ec)) {
    if (Ready(entry.path().filename().string())) {
      ready.push_back(entry.path().string());
    }
  }
  std::sort(ready.begin(), ready.end());
  for (const std::string& path : ready) ConsumeFile(path, &scan);
  return scan;
}

void ClientSpoolReader::ConsumeFile(const std::string& path,
                                    ClientSpoolScan* scan) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) {
    options_.log.Warning(absl::StrCat("client spool: cannot read ", path));
    return;
  }
  const std::string data = text.str();
  decoder_.limits().now_ns = clock_->NowNanos();
  size_t start = 0;
  int line_no = 0;
  for (size_t nl; (nl = data.find('\n', start)) != std::string::npos;
       start = nl + 1) {
    ConsumeLine(path, ++line_no, data.substr(start, nl - start), scan);
  }
  if (start < data.size()) {
    ++scan->rejected;
    options_.log.Warning(
        absl::StrCat("client spool: ", path, ": line ", line_no + 1,
                     ": no final newline (the writer died mid-line); "
                     "dropped"));
  }
  flush_();  // durable in the agent's spool before the file goes
  std::filesystem::remove(path);
  ++scan->files;
}

void ClientSpoolReader::ConsumeLine(const std::string& path, int line_no,
                                    const std::string& line,
                                    ClientSpoolScan* scan) {
  auto record =
      nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  std::string problem;
  v1::Event event;
  if (!record.is_object() || !record.contains("id") ||
      !record["id"].is_string() || !record.contains("event")) {
    problem = "want {\"id\":\"...\",\"event\":{...}}";
  } else {
    absl::Status s = decoder_.DecodeLine(record["event"].dump(), &event);
    if (!s.ok()) problem = std::string(s.message());
  }
  if (!problem.empty()) {
    ++scan->rejected;
    options_.log.Warning(absl::StrCat("client spool: ", path, ": line ",
                                      line_no, ": ", problem));
    return;
  }
  const std::string& id = record["id"].get_ref<const std::string&>();
  const uint64_t hash = EventIds::Hash(id);
  if (!Remember(id) ||
      (options_.ids != nullptr && !options_.ids->Claim(hash))) {
    ++scan->duplicates;
    return;
  }
  ++scan->events;
  add_(std::move(event), hash);
}

bool ClientSpoolReader::Remember(const std::string& id) {
  if (!ids_.insert(id).second) return false;
  id_order_.push_back(id);
  if (id_order_.size() > options_.max_ids) {
    ids_.erase(id_order_.front());
    id_order_.pop_front();
  }
  return true;
}

}  // namespace goodput::agent
