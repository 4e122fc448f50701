// ThreadpoolRefusals: a gRPC server interceptor factory that sees the calls
// gRPC itself refuses because every thread of goodputd's ResourceQuota
// (--max_streams) is busy: gRPC answers them RESOURCE_EXHAUSTED "Server
// Threadpool Exhausted" before any handler runs, and its status still passes
// the interceptors. Calls `on_refused` once per such call. Owns only
// `on_refused`; thread-safe if `on_refused` is.
#ifndef GOODPUT_SERVER_THREADPOOL_REFUSALS_H_
#define GOODPUT_SERVER_THREADPOOL_REFUSALS_H_

#include <functional>

#include "grpcpp/support/server_interceptor.h"

namespace goodput::server {

class ThreadpoolRefusals final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit ThreadpoolRefusals(std::function<void()> on_refused)
      : on_refused_(std::move(on_refused)) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  std::function<void()> on_refused_;
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_THREADPOOL_REFUSALS_H_
