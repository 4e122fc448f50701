#include "server/threadpool_refusals.h"

namespace goodput::server {
namespace {

using grpc::experimental::InterceptionHookPoints;

// gRPC's status for a call refused for want of threads (server_cc.cc).
constexpr char kThreadpoolExhausted[] = "Server Threadpool Exhausted";

class StatusWatch final : public grpc::experimental::Interceptor {
 public:
  explicit StatusWatch(const std::function<void()>* on_refused)
      : on_refused_(on_refused) {}

  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::PRE_SEND_STATUS)) {
      const grpc::Status status = methods->GetSendStatus();
      if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED &&
          status.error_message() == kThreadpoolExhausted) {
        (*on_refused_)();
      }
    }
    methods->Proceed();
  }

 private:
  const std::function<void()>* on_refused_;
};

}  // namespace

grpc::experimental::Interceptor* ThreadpoolRefusals::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* /*info*/) {
  return new StatusWatch(&on_refused_);
}

}  // namespace goodput::server
