// What a worker asks of the coordinator's Worker service (collatz.v1.Worker), as an
// interface: WorkerClient (client/worker_client.h) speaks it over gRPC, and tests put a
// fake in its place to drive a worker's lease loop without a server. Also the lease as
// the worker sees it.
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <string>

#include "core/unit.h"
#include "proto/collatz.pb.h"

namespace collatz::client {

struct Lease {
  uint64_t worker_id = 0;  // the id the lease was granted to
  uint64_t unit_id = 0;
  UnitSpec spec;           // for a stats unit: begin and end only
  // The sieve width to search the unit with (Unit.sieve_bits); 0 (servers before it): the
  // width the worker registered with.
  int sieve_bits = 0;
  std::string token;
  uint64_t deadline_ms = 0;  // Unix milliseconds when the server lets the lease expire
  bool audit = false;
  bool stats = false;      // a unit of a stats job: every batch of [spec.begin, spec.end)
  uint64_t stats_job_id = 0;
  uint32_t stats_batch = 0;
};

// Whether a failed call may succeed when repeated later (server down, restarting,
// draining, overloaded) rather than being refused for good.
bool IsTransient(const grpc::Status& status);
std::string Describe(const grpc::Status& status);

// The CompleteRequest for `lease` with its ids and token; the caller adds the result.
v1::CompleteRequest CompletionFor(const Lease& lease);

class WorkerConnection {
 public:
  virtual ~WorkerConnection() = default;

  virtual uint64_t worker_id() const = 0;
  virtual uint64_t lease_duration_ms() const = 0;
  // Registers again only if `stale_id` is still the current id (lanes that find the id
  // unknown at the same time register once).
  virtual grpc::Status RegisterAgainIfStill(uint64_t stale_id) = 0;
  // *has_unit false and *retry_after_ms set when there is no work now.
  virtual grpc::Status LeaseUnit(Lease* out, bool* has_unit, uint64_t* retry_after_ms) = 0;
  virtual grpc::Status Heartbeat(const Lease& lease, uint64_t numbers_done, bool* stop) = 0;
  // Sends a (possibly spooled) request exactly as it was written. disposition may be null.
  virtual grpc::Status Complete(const v1::CompleteRequest& request, v1::Disposition* disposition) = 0;
  virtual grpc::Status Release(const Lease& lease, bool failed, const std::string& reason, int timeout_ms) = 0;
};

}  // namespace collatz::client
