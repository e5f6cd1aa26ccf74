// Small helpers shared by the coordinator's files (coordinator.cc, coordinator_stats.cc).
#pragma once

#include <grpcpp/support/status.h>

#include <string>

#include "core/status.h"

namespace collatz::server {

// A core Status as a gRPC status with the matching code; `what` says which request failed.
inline grpc::Status FromCore(const Status& st, const std::string& what) {
  using grpc::StatusCode;
  if (st.ok()) return grpc::Status::OK;
  StatusCode code = StatusCode::INTERNAL;
  switch (st.code()) {
    case Status::Code::kInvalidArgument: code = StatusCode::INVALID_ARGUMENT; break;
    case Status::Code::kOutOfRange: code = StatusCode::OUT_OF_RANGE; break;
    case Status::Code::kNotFound: code = StatusCode::NOT_FOUND; break;
    case Status::Code::kFailedPrecondition: code = StatusCode::FAILED_PRECONDITION; break;
    case Status::Code::kUnavailable: code = StatusCode::UNAVAILABLE; break;
    case Status::Code::kCorruption: code = StatusCode::DATA_LOSS; break;
    default: break;
  }
  return grpc::Status(code, what + ": " + st.message());
}

#define RETURN_IF_DB_ERROR(expr, what)                            \
  do {                                                            \
    const ::collatz::Status _st = (expr);                         \
    if (!_st.ok()) return ::collatz::server::FromCore(_st, what); \
  } while (0)

// Token prefix for logs: enough to follow a lease, not enough to use it.
inline std::string ShortToken(const std::string& token) { return token.substr(0, 8); }

}  // namespace collatz::server
