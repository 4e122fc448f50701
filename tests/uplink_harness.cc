#include "tests/uplink_harness.h"

#include "gtest/gtest.h"

namespace goodput::testing {

std::vector<v1::Event> StepEvents(int n, const std::string& job, int first,
                                  int64_t time_s) {
  std::vector<v1::Event> events(n);
  for (int i = 0; i < n; ++i) {
    events[i].mutable_time()->set_seconds(time_s + i);
    events[i].set_job_id(job);
    events[i].set_host("h1");
    events[i].mutable_step()->set_step(first + i);
  }
  return events;
}

UplinkHarness::UplinkHarness() {
  auto spool = agent::Spool::Open({dir_.path(), uint64_t{1} << 30});
  EXPECT_TRUE(spool.ok()) << spool.status();
  if (spool.ok()) spool_ = *std::move(spool);
}

UplinkHarness::~UplinkHarness() { Stop(); }

void UplinkHarness::Spool(std::vector<v1::Event> events) {
  ASSERT_TRUE(spool_->Append(std::move(events), 0).ok());
}

void UplinkHarness::Start(agent::Uplink::Options options) {
  options.seed = 1;
  uplink_ = std::make_unique<agent::Uplink>(std::move(options), spool_.get(),
                                            &clock_, &sleeper_);
  spool_->SetAppendListener([u = uplink_.get()] { u->Notify(); });
  uplink_->Start();
}

void UplinkHarness::Stop() {
  if (uplink_) uplink_->Stop();
}

}  // namespace goodput::testing
