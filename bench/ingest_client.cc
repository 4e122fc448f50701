#include "bench/ingest_client.h"

#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "bench/bench_util.h"
#include "clients/cpp/query_client.h"

namespace goodput::bench {

std::vector<v1::Batch> MakeBatches(const std::vector<v1::Event>& events,
                                   size_t batch_events,
                                   const std::string& agent_id,
                                   uint64_t first_sequence) {
  std::vector<v1::Batch> out;
  for (size_t i = 0; i < events.size(); i += batch_events) {
    v1::Batch& b = out.emplace_back();
    b.set_agent_id(agent_id);
    b.set_sequence(first_sequence++);
    const size_t end = std::min(events.size(), i + batch_events);
    b.mutable_events()->Reserve(static_cast<int>(end - i));
    for (size_t j = i; j < end; ++j) *b.add_events() = events[j];
  }
  return out;
}

std::vector<std::vector<v1::Batch>> MakeAgentBatches(
    const std::vector<v1::Event>& events, size_t batch_events, int agents,
    const std::string& agent_prefix) {
  if (agents <= 1) return {MakeBatches(events, batch_events, agent_prefix)};
  std::unordered_map<std::string, int> agent_of;
  std::vector<std::vector<v1::Event>> split(static_cast<size_t>(agents));
  for (const v1::Event& e : events) {
    auto [it, fresh] = agent_of.try_emplace(
        e.job_id(), static_cast<int>(agent_of.size()) % agents);
    split[static_cast<size_t>(it->second)].push_back(e);
  }
  std::vector<std::vector<v1::Batch>> out;
  for (int a = 0; a < agents; ++a) {
    out.push_back(MakeBatches(split[static_cast<size_t>(a)], batch_events,
                              absl::StrCat(agent_prefix, "-", a)));
  }
  return out;
}

absl::StatusOr<StreamResult> StreamAgents(
    const std::string& target,
    const std::vector<std::vector<v1::Batch>>& per_agent, size_t in_flight) {
  std::vector<absl::StatusOr<StreamResult>> results(per_agent.size());
  std::vector<std::thread> threads;
  const auto start = SteadyClock::now();
  for (size_t a = 0; a < per_agent.size(); ++a) {
    threads.emplace_back([&, a] {
      results[a] = StreamBatches(NewChannel(target), per_agent[a], in_flight);
    });
  }
  for (std::thread& t : threads) t.join();
  StreamResult sum;
  for (absl::StatusOr<StreamResult>& r : results) {
    if (!r.ok()) return r.status();
    sum.batches += r->batches;
    sum.events_sent += r->events_sent;
    sum.accepted += r->accepted;
    sum.rejected += r->rejected;
    sum.duplicates += r->duplicates;
    sum.ack_latency_s.insert(sum.ack_latency_s.end(), r->ack_latency_s.begin(),
                             r->ack_latency_s.end());
  }
  sum.seconds = SecondsSince(start);
  return sum;
}

absl::StatusOr<StreamResult> StreamBatches(
    const std::shared_ptr<grpc::Channel>& channel,
    const std::vector<v1::Batch>& batches, size_t in_flight) {
  auto stub = v1::Ingest::NewStub(channel);
  grpc::ClientContext context;
  auto stream = stub->Stream(&context);
  StreamResult result;
  result.batches = static_cast<int64_t>(batches.size());
  result.ack_latency_s.resize(batches.size());
  std::vector<SteadyClock::time_point> sent(batches.size());

  std::mutex mu;
  std::condition_variable cv;
  size_t acked = 0;
  bool failed = false;
  std::string error;

  const auto start = SteadyClock::now();
  std::thread reader([&] {
    v1::Ack ack;
    for (size_t i = 0; i < batches.size(); ++i) {
      const bool ok = stream->Read(&ack);
      const auto now = SteadyClock::now();
      std::lock_guard<std::mutex> lock(mu);
      if (!ok || ack.sequence() != batches[i].sequence()) {
        failed = true;
        error = ok ? absl::StrCat("ack ", ack.sequence(), " for batch ",
                                  batches[i].sequence())
                   : absl::StrCat("stream ended after ", i, " acks");
        cv.notify_all();
        return;
      }
      result.ack_latency_s[i] =
          std::chrono::duration<double>(now - sent[i]).count();
      result.accepted += ack.accepted();
      result.rejected += ack.rejections_size();
      result.duplicates += ack.duplicate();
      ++acked;
      cv.notify_all();
    }
  });
  for (size_t i = 0; i < batches.size(); ++i) {
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return failed || i - acked < in_flight; });
      if (failed) break;
      sent[i] = SteadyClock::now();
    }
    result.events_sent += batches[i].events_size();
    if (!stream->Write(batches[i])) break;
  }
  stream->WritesDone();
  reader.join();
  result.seconds = SecondsSince(start);
  grpc::Status status = stream->Finish();
  if (failed) {
    return absl::UnavailableError(
        absl::StrCat(error, "; grpc: ", status.error_message()));
  }
  if (!status.ok()) {
    return absl::UnavailableError(
        absl::StrCat("grpc: ", status.error_message()));
  }
  return result;
}

grpc::Status DiscardingIngest::Stream(
    grpc::ServerContext*,
    grpc::ServerReaderWriter<v1::Ack, v1::Batch>* stream) {
  v1::Batch batch;
  v1::Ack ack;
  while (stream->Read(&batch)) {
    ack.Clear();
    ack.set_sequence(batch.sequence());
    ack.set_accepted(static_cast<uint32_t>(batch.events_size()));
    if (!stream->Write(ack)) break;
    batches_.fetch_add(1, std::memory_order_relaxed);
    events_.fetch_add(batch.events_size(), std::memory_order_relaxed);
  }
  return grpc::Status::OK;
}

std::shared_ptr<grpc::Channel> NewChannel(const std::string& target) {
  static int unique = 0;
  grpc::ChannelArguments args;
  args.SetInt("goodput.bench.channel", ++unique);  // no subchannel sharing
  args.SetMaxReceiveMessageSize(64 << 20);
  args.SetMaxSendMessageSize(64 << 20);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(),
                                   args);
}

absl::StatusOr<double> TimeReport(v1::Query::Stub* stub, v1::ShardReport* out) {
  grpc::ClientContext context;
  const auto start = SteadyClock::now();
  absl::StatusOr<FetchedReport> report =
      ReadReport(stub, &context, v1::ReportRequest());
  const double took = SecondsSince(start);
  if (!report.ok()) {
    return absl::UnavailableError(
        absl::StrCat("Report: ", report.status().message()));
  }
  if (out != nullptr) *out = std::move(report->shard);
  return took;
}

}  // namespace goodput::bench
