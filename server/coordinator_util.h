// Small helpers shared by the coordinator's files (server/coordinator*.cc).
#pragma once

#include <grpcpp/support/status.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"
#include "storage/coordinator_store.h"

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

// How many numbers a unit covers.
inline u128 Size(const StoredUnit& u) { return u.end - u.begin; }
inline u128 Size(const StoredStatsUnit& u) { return u.end - u.begin; }

// Search and stats units and leases (StoredLease / StoredStatsLease, UnitMem / StatsUnitMem)
// follow the same rules; what those rules share without touching the store is here.

// The tokens of active leases whose deadline is at or before `now`, and in *next_deadline
// the earliest deadline of the others (INT64_MAX: none). Only tokens in active_tokens are
// looked at; those whose lease is gone or no longer active leave it here.
template <typename LeaseMap>
std::vector<std::string> DueLeases(int64_t now, const LeaseMap& leases, std::set<std::string>* active_tokens,
                                   int64_t* next_deadline) {
  std::vector<std::string> due;
  *next_deadline = INT64_MAX;
  for (auto it = active_tokens->begin(); it != active_tokens->end();) {
    auto lit = leases.find(*it);
    if (lit == leases.end() || lit->second.state != LeaseState::kActive) {
      it = active_tokens->erase(it);
      continue;
    }
    if (lit->second.deadline_ms <= now) {
      due.push_back(*it);
    } else {
      *next_deadline = std::min(*next_deadline, lit->second.deadline_ms);
    }
    ++it;
  }
  return due;
}

// A failed attempt in memory: failures + 1, the last error, quarantine at max_failures.
// True when this attempt quarantined the unit.
template <typename Unit>
bool CountFailure(Unit* u, int max_failures, const std::string& kind, const std::string& error) {
  u->failures += 1;
  u->last_error = kind + ": " + error;
  if (u->failures < max_failures || u->quarantined) return false;
  u->quarantined = true;
  return true;
}

// A lease that the worker released or the server revoked or rejected: a call with its
// token is refused (an expired, superseded or completed lease may still deliver once).
inline bool LeaseClosed(LeaseState s) {
  return s == LeaseState::kReleased || s == LeaseState::kRevoked || s == LeaseState::kRejected;
}

// The refusal of a call with a stale token; `is_or_was` fits the call ("is" for a release).
inline grpc::Status StaleLeaseToken(const std::string& is_or_was, LeaseState s) {
  return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                      "stale lease token: the lease " + is_or_was + " " + LeaseStateName(s));
}

// What a failed attempt changed (CountFailure on a copy written to the store first).
template <typename Unit>
void CopyFailures(const Unit& from, Unit* to) {
  to->failures = from.failures;
  to->quarantined = from.quarantined;
  to->last_error = from.last_error;
}

}  // namespace collatz::server
