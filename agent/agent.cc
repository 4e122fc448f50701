#include "agent/agent.h"

#include <unistd.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "logs/builtin_profiles.h"
#include "nlohmann/json.hpp"
#include "util/prometheus_text.h"

namespace goodput::agent {
namespace {

std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

// Client ids remembered for deduplication (docs/delivery.md, "The ack
// mode"): 16 MB of hashes in memory, 8 MB of journal at most twice.
constexpr size_t kMaxEventIds = 1000000;

}  // namespace

absl::StatusOr<std::unique_ptr<Agent>> Agent::Start(const AgentFlags& flags,
                                                    Clock* clock,
                                                    Sleeper* sleeper,
                                                    FileSystem* fs) {
  std::unique_ptr<Agent> agent(new Agent(flags, clock, sleeper, fs));
  absl::Status s = agent->Init();
  if (!s.ok()) {
    agent->Stop();
    return s;
  }
  return agent;
}

Agent::Agent(const AgentFlags& flags, Clock* clock, Sleeper* sleeper,
             FileSystem* fs)
    : flags_(flags),
      clock_(clock),
      log_("goodput-agent", flags.log_format, clock),
      own_sleeper_(sleeper ? nullptr : std::make_unique<RealSleeper>()),
      sleeper_(sleeper ? sleeper : own_sleeper_.get()),
      fs_(fs) {}

Agent::~Agent() { Stop(); }

absl::Status Agent::Init() {
  auto credentials = MakeChannelCredentials(flags_.tls);
  if (!credentials.ok()) return credentials.status();
  credentials_ = *std::move(credentials);
  if (absl::Status s = OpenSpools(); !s.ok()) return s;
  if (!flags_.client_spool_dir.empty()) {
    ClientSpoolReader::Options reading{flags_.client_spool_dir};
    reading.log = log_;
    reading.ids = event_ids_.get();
    client_spool_ = std::make_unique<ClientSpoolReader>(
        std::move(reading),
        [this](v1::Event e, uint64_t id) {
          sink_->AddWithId(std::move(e), id);
        },
        [this] { FlushBatchers(); }, clock_);
    absl::Status s = client_spool_->Init();
    if (!s.ok()) return s;
  }
  if (!flags_.tail.empty()) {
    if (absl::Status s = StartTail(); !s.ok()) return s;
  }
  StartPipeline(flags_.host.empty() ? HostName() : flags_.host);
  Intake::Options intake_options;
  intake_options.socket_path = flags_.socket_path;
  intake_options.max_line_bytes = flags_.max_line_bytes;
  intake_options.max_connections = flags_.max_connections;
  intake_options.idle_timeout = flags_.client_idle_timeout;
  intake_options.log = log_;
  intake_options.ids = event_ids_.get();
  auto intake = Intake::Start(intake_options, sink_, clock_);
  if (!intake.ok()) return intake.status();
  intake_ = *std::move(intake);
  return StartHttp();
}

absl::Status Agent::OpenSpools() {
  absl::StatusOr<ShardMap> map = ShardMap::Parse(flags_.server, "--server");
  if (!map.ok()) return map.status();
  for (size_t i = 0; i < map->size(); ++i) {
    auto spool = Spool::Open({ShardSpoolDir(flags_.spool_dir, i, map->size()),
                              flags_.max_spool_bytes, fs_});
    if (!spool.ok()) return spool.status();
    lanes_.push_back({*std::move(spool), nullptr, nullptr});
  }
  shard_map_ = *std::move(map);
  // Opened once the spools hold their locks: one agent uses the journal.
  auto ids = EventIds::Open(absl::StrCat(flags_.spool_dir, "/event_ids"),
                            kMaxEventIds);
  if (!ids.ok()) return ids.status();
  event_ids_ = *std::move(ids);
  for (Lane& lane : lanes_) lane.spool->SetEventIds(event_ids_.get());
  return absl::OkStatus();
}

Uplink::Options Agent::UplinkOptions(size_t i) const {
  Uplink::Options uplink;
  uplink.server = shard_map_->address(i);
  uplink.credentials = credentials_;
  uplink.tls_server_name = flags_.tls.server_name;
  uplink.max_in_flight = flags_.max_in_flight;
  uplink.log = log_;
  return uplink;
}

void Agent::StartPipeline(const std::string& host) {
  std::vector<EventSink*> sinks;
  for (size_t i = 0; i < lanes_.size(); ++i) {
    Lane& lane = lanes_[i];
    Batcher::Options batching{flags_.batch_events, flags_.batch_delay, host,
                              [this] { Kick(); }};
    batching.batch_bytes = flags_.batch_bytes;
    batching.log = log_;
    batching.ids = event_ids_.get();
    lane.batcher =
        std::make_unique<Batcher>(batching, lane.spool.get(), clock_);
    lane.uplink = std::make_unique<Uplink>(UplinkOptions(i), lane.spool.get(),
                                           clock_, sleeper_);
    lane.spool->SetAppendListener([u = lane.uplink.get()] { u->Notify(); });
    lane.uplink->Start();
    sinks.push_back(lane.batcher.get());
  }
  sink_ = sinks[0];
  if (sinks.size() > 1) {
    router_ = std::make_unique<ShardRouter>(*shard_map_, std::move(sinks));
    sink_ = router_.get();
  }
  if (flags_.chips > 0) {
    heartbeat_ = std::make_unique<Heartbeat>(
        Heartbeat::Options{flags_.chips, flags_.accelerator, host,
                           flags_.heartbeat_interval},
        sink_, clock_);
  }
  ticker_ = std::thread([this] { Tick(); });
}

absl::Status Agent::StartHttp() {
  if (flags_.metrics_address.empty()) return absl::OkStatus();
  std::shared_ptr<const BasicAuth> auth;
  if (!flags_.metrics_basic_auth_file.empty()) {
    auto loaded = BasicAuth::Load("--metrics_basic_auth_file",
                                  flags_.metrics_basic_auth_file);
    if (!loaded.ok()) return loaded.status();
    auth = *std::move(loaded);
  }
  auto http = HttpServer::Start(
      flags_.metrics_address,
      [this](absl::string_view method, absl::string_view path) {
        return HandleHttp(method, path);
      },
      std::move(auth));
  if (!http.ok()) {
    return absl::Status(
        http.status().code(),
        absl::StrCat("--metrics_address: ", http.status().message()));
  }
  http_ = *std::move(http);
  return absl::OkStatus();
}

void Agent::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  if (intake_) intake_->Stop();  // no more lines reach the batcher
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (ticker_.joinable()) ticker_.join();
  FlushBatchers();
  for (Lane& lane : lanes_) {
    if (lane.uplink) lane.uplink->Stop();
  }
  FlushSuppressedLogs(/*all=*/true);
  if (http_) http_->Stop();
}

void Agent::FlushSuppressedLogs(bool all) {
  if (intake_) intake_->FlushSuppressedLogs(all);
  for (Lane& lane : lanes_) {
    if (lane.batcher) lane.batcher->FlushSuppressedLogs(all);
    if (lane.uplink) lane.uplink->FlushSuppressedLogs(all);
  }
}

void Agent::FlushBatchers() {
  for (Lane& lane : lanes_) {
    if (lane.batcher) lane.batcher->Flush();
  }
}

void Agent::Kick() {
  absl::MutexLock lock(&mu_);
  kicked_ = true;
}

void Agent::Tick() {
  while (true) {
    if (heartbeat_) heartbeat_->Poll();
    ScanClientSpool();
    PollTail();
    for (Lane& lane : lanes_) lane.batcher->Poll();
    FlushSuppressedLogs(/*all=*/false);
    const int64_t now = clock_->NowNanos();
    int64_t next = now + absl::ToInt64Nanoseconds(absl::Seconds(1));
    if (auto deadline = BatchDeadline()) next = std::min(next, *deadline);
    if (heartbeat_) next = std::min(next, heartbeat_->NextDueNanos());
    // At least 1 ms, at most 1 s: a FakeClock moved by a test is seen.
    const absl::Duration wait = std::clamp(
        absl::Nanoseconds(next - now), absl::Milliseconds(1), absl::Seconds(1));
    absl::MutexLock lock(&mu_);
    auto woken = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stopping_ || kicked_;
    };
    mu_.AwaitWithTimeout(absl::Condition(&woken), wait);
    if (stopping_) return;
    kicked_ = false;
  }
}

void Agent::ScanClientSpool() {
  const int64_t now = clock_->NowNanos();
  if (!client_spool_ || now < next_client_scan_ns_) return;
  next_client_scan_ns_ =
      now + absl::ToInt64Nanoseconds(absl::Milliseconds(500));
  const ClientSpoolScan scan = client_spool_->Scan();
  if (scan.files == 0) return;
  log_.Info(
      absl::StrCat("client spool: ingested ", scan.events, " events from ",
                   scan.files, " files (", scan.duplicates, " duplicates, ",
                   scan.rejected, " bad lines)"),
      {{"events", absl::StrCat(scan.events)},
       {"files", absl::StrCat(scan.files)}});
}

absl::Status Agent::StartTail() {
  absl::StatusOr<logs::LogProfile> profile =
      logs::LoadLogProfile(flags_.log_profile);
  if (!profile.ok()) return profile.status();
  tail_profile_ = std::make_unique<logs::LogProfile>(*std::move(profile));
  logs::TailOptions options;
  options.glob = flags_.tail;
  options.job_id_pattern = flags_.tail_job_id;
  options.state_path = flags_.tail_state.empty()
                           ? flags_.spool_dir + "/tail-state"
                           : flags_.tail_state;
  options.cri = flags_.tail_format == "cri";
  // Delivered = in the batchers and flushed into the spool.
  tailer_ = std::make_unique<logs::LogTailer>(
      tail_profile_.get(), options, clock_,
      [this](const std::vector<v1::Event>& events) {
        for (const v1::Event& e : events) sink_->Add(e);
        FlushBatchers();
        return absl::OkStatus();
      });
  return tailer_->Init();
}

void Agent::PollTail() {
  const int64_t now = clock_->NowNanos();
  if (!tailer_ || now < next_tail_ns_) return;
  next_tail_ns_ = now + absl::ToInt64Nanoseconds(absl::Milliseconds(250));
  absl::StatusOr<logs::TailStats> stats = tailer_->Poll();
  if (!stats.ok()) {
    log_.Warning(absl::StrCat("tail: ", stats.status().message()));
  } else if (stats->bad > 0 || stats->truncations > 0 || stats->unnamed > 0) {
    log_.Warning(absl::StrCat("tail: ", stats->bad, " lines not used, ",
                              stats->truncations, " truncated files, ",
                              stats->unnamed, " files without a job id"));
  }
}

std::optional<int64_t> Agent::BatchDeadline() const {
  std::optional<int64_t> first;
  for (const Lane& lane : lanes_) {
    std::optional<int64_t> d = lane.batcher->DeadlineNanos();
    if (d && (!first || *d < *first)) first = d;
  }
  return first;
}

SpoolStats Agent::SpoolTotals() const {
  SpoolStats total;
  for (const Lane& lane : lanes_) {
    const SpoolStats s = lane.spool->Stats();
    total.bytes += s.bytes;
    total.pending_batches += s.pending_batches;
    if (s.oldest_received_ns &&
        (!total.oldest_received_ns ||
         *s.oldest_received_ns < *total.oldest_received_ns)) {
      total.oldest_received_ns = s.oldest_received_ns;
    }
    total.full = total.full || s.full;
    total.failing = total.failing || s.failing;
    if (total.last_error.empty()) total.last_error = s.last_error;
    // A failed group commit is a failed write too (healthz, like the
    // metric's reason="io").
    total.write_errors += s.write_errors + s.sync_errors;
    total.sync_errors += s.sync_errors;
    total.no_space += s.no_space;
    total.dead_letters += s.dead_letters;
  }
  return total;
}

bool Agent::AllConnected() const {
  for (const Lane& lane : lanes_) {
    if (!lane.uplink->connected()) return false;
  }
  return true;
}

AgentSnapshot Agent::Snapshot() const {
  AgentSnapshot a;
  if (intake_) a.intake = intake_->stats();
  for (const Lane& lane : lanes_) {
    a.batcher.Add(lane.batcher->stats());
    a.uplink.Add(lane.uplink->stats());
  }
  a.spool = SpoolTotals();
  if (heartbeat_) a.heartbeats = heartbeat_->sent();
  a.connected = AllConnected();
  if (a.spool.oldest_received_ns) {
    const int64_t age = clock_->NowNanos() - *a.spool.oldest_received_ns;
    a.oldest_unsent_age_seconds = std::max<int64_t>(0, age) / 1e9;
  }
  return a;
}

std::string Agent::HealthJson(const AgentSnapshot& a) const {
  nlohmann::json j = {
      {"agent_id", agent_id()},
      {"spool_bytes", a.spool.bytes},
      {"pending_batches", a.spool.pending_batches},
      {"oldest_unsent_age_seconds", a.oldest_unsent_age_seconds},
      {"rejected_lines", a.intake.rejected_lines()},
      {"dropped_events", a.batcher.dropped_events},
      {"connected", a.connected},
      {"spool_full", a.spool.full},
      {"spool_failing", a.spool.failing},
      {"spool_write_errors", a.spool.write_errors},
      {"spool_last_error", a.spool.last_error},
      {"dead_letter_batches", a.spool.dead_letters},
  };
  return j.dump();
}

HttpResponse Agent::HandleHttp(absl::string_view method,
                               absl::string_view path) {
  if (method != "GET") return {405, "text/plain", "only GET\n"};
  if (path == "/metrics") {
    absl::StatusOr<std::string> text =
        PrometheusText(AgentFamilies(Snapshot()));
    if (!text.ok()) {
      log_.Error(
          absl::StrCat("metrics scrape failed: ", text.status().message()));
      return {500, "text/plain", "metrics scrape failed\n"};
    }
    return {200, kPrometheusTextType, *std::move(text)};
  }
  if (path == "/healthz") return Health(Snapshot());
  return {404, "text/plain", "not found: try /metrics or /healthz\n"};
}

HttpResponse Agent::Health(const AgentSnapshot& a) const {
  const std::string json = HealthJson(a);
  if (a.spool.full) {
    return {503, "text/plain", absl::StrCat("spool full\n", json, "\n")};
  }
  if (a.spool.failing) {
    return {503, "text/plain", absl::StrCat("spool failing\n", json, "\n")};
  }
  return {200, "text/plain", absl::StrCat("ok\n", json, "\n")};
}

absl::Status RunAgent(const AgentFlags& flags, absl::Notification* stop,
                      const std::function<void(Agent*)>& on_started) {
  RealClock clock;
  auto agent = Agent::Start(flags, &clock, nullptr);
  if (!agent.ok()) return agent.status();
  const SpoolStats spool = (*agent)->SpoolTotals();
  const Logger log("goodput-agent", flags.log_format, &clock);
  log.Info(
      absl::StrCat("agent ", (*agent)->agent_id(), " started: socket ",
                   flags.socket_path, ", spool ", flags.spool_dir, " (",
                   spool.pending_batches, " batches pending), server ",
                   flags.server, ", metrics port ", (*agent)->metrics_port()),
      {{"agent_id", (*agent)->agent_id()},
       {"metrics_port", absl::StrCat((*agent)->metrics_port())}});
  if (on_started) on_started(agent->get());
  stop->WaitForNotification();
  (*agent)->Stop();
  const SpoolStats left = (*agent)->SpoolTotals();
  log.Info(absl::StrCat("stopped; ", left.pending_batches,
                        " batches left in the spool for the next run"));
  return absl::OkStatus();
}

}  // namespace goodput::agent
