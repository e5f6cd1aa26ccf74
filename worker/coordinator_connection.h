// The worker's side of the collatz.v1.Worker service, on the generated stubs. Unlike
// server/worker_client.h it returns the server's lease duration and sieve width from
// Register, sends a spooled CompleteRequest exactly as it was written (with the worker
// id that held the lease, which may be an earlier process's), and uses short deadlines
// for heartbeats. Thread-safe: lanes share one connection.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/unit.h"
#include "proto/collatz.grpc.pb.h"

namespace collatz::worker {

struct WorkerIdentity {
  std::string host;
  std::vector<std::pair<std::string, std::string>> gpus;  // (model, uuid)
  std::string driver, binary_version, backend;
  int sieve_bits = 0;
  std::string instance_id;  // Spool::InstanceId: a flag stays with it (docs/PROTOCOL.md)
};

struct Registration {
  uint64_t worker_id = 0;
  int server_sieve_bits = 0;
  uint64_t lease_duration_ms = 0;
};

struct Lease {
  uint64_t worker_id = 0;  // the id the lease was granted to
  uint64_t unit_id = 0;
  UnitSpec spec;           // for a stats unit: begin and end only
  std::string token;
  bool audit = false;
  bool stats = false;      // a unit of a stats job: every batch of [spec.begin, spec.end)
  uint64_t stats_job_id = 0;
  uint32_t stats_batch = 0;
};

// Whether a failed call may succeed when repeated later (server down, restarting,
// draining, overloaded) rather than being refused for good.
bool IsTransient(const grpc::Status& status);
std::string Describe(const grpc::Status& status);

class CoordinatorConnection {
 public:
  CoordinatorConnection(std::shared_ptr<grpc::Channel> channel, std::string token, WorkerIdentity identity);

  // Registers (again): a new worker id. Used at start and when the server no longer
  // knows our id (NOT_FOUND: its database was replaced).
  grpc::Status Register(Registration* out);
  // Registers again only if `stale_id` is still the current id (lanes that find the id
  // unknown at the same time register once).
  grpc::Status RegisterAgainIfStill(uint64_t stale_id);
  uint64_t worker_id() const { return worker_id_.load(); }
  uint64_t lease_duration_ms() const { return lease_duration_ms_.load(); }

  // *has_unit false and *retry_after_ms set when there is no work now.
  grpc::Status LeaseUnit(Lease* out, bool* has_unit, uint64_t* retry_after_ms);
  grpc::Status Heartbeat(const Lease& lease, uint64_t numbers_done, bool* stop);
  grpc::Status Complete(const v1::CompleteRequest& request, v1::Disposition* disposition);
  grpc::Status Release(const Lease& lease, bool failed, const std::string& reason, int timeout_ms = 5000);

 private:
  void Prepare(grpc::ClientContext* ctx, int timeout_ms) const;

  std::unique_ptr<v1::Worker::Stub> stub_;
  std::string token_;
  WorkerIdentity identity_;
  std::mutex register_mu_;
  std::atomic<uint64_t> worker_id_{0};
  std::atomic<uint64_t> lease_duration_ms_{600000};
};

}  // namespace collatz::worker
