// The one client of the collatz.v1.Worker service, on the generated stubs: for the worker
// daemon and for the coordinator's tests and benchmark. It returns the server's lease
// duration and sieve width from Register, refuses a server of another work hash version,
// sends a spooled CompleteRequest exactly as it was written (with the worker id that held
// the lease, which may be an earlier process's), and uses short deadlines for heartbeats
// and releases. Thread-safe: lanes share one client.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "client/worker_connection.h"
#include "core/unit.h"
#include "core/unit_search.h"
#include "proto/collatz.grpc.pb.h"

namespace collatz::client {

struct WorkerIdentity {
  std::string host = "localhost";
  std::vector<std::pair<std::string, std::string>> gpus;  // (model, uuid)
  std::string driver, binary_version = "dev", backend = "cpu";
  int sieve_bits = kDefaultSieveBits;
  std::string instance_id;  // Spool::InstanceId: a flag stays with it (docs/PROTOCOL.md)
  // Whether the worker searches each unit with the width its lease names (Lease::sieve_bits);
  // a server whose units have several widths refuses workers that do not.
  bool unit_sieve_bits = false;
  // What makes the binary unfit for a real campaign (worker/build_flavour.h): "" for a
  // release build; a coordinator refuses others unless started with --allow-test-builds.
  std::string build_flavour;
};

struct Registration {
  uint64_t worker_id = 0;
  int server_sieve_bits = 0;
  int server_class_sieve_bits = 0;  // the width of wide delay+class units; 0 from older servers
  int server_delay_sieve_bits = 0;  // the width of wide delay-only units; 0 from older servers
  uint64_t lease_duration_ms = 0;
};

class WorkerClient final : public WorkerConnection {
 public:
  // timeout_ms: the deadline of every call (heartbeats and releases: at most 10 s and 5 s).
  WorkerClient(std::shared_ptr<grpc::Channel> channel, std::string token, WorkerIdentity identity,
               int timeout_ms = 30000);

  // Registers (again): a new worker id. Used at start and when the server no longer
  // knows our id (NOT_FOUND: its database was replaced). out may be null.
  grpc::Status Register(Registration* out = nullptr);
  grpc::Status RegisterAgainIfStill(uint64_t stale_id) override;
  uint64_t worker_id() const override { return worker_id_.load(); }
  uint64_t lease_duration_ms() const override { return lease_duration_ms_.load(); }
  // Whether leases may be units of stats jobs (every real worker; the tests' search-only
  // workers say no).
  void set_accepts_stats(bool accepts) { accepts_stats_ = accepts; }
  // The largest search unit or audit to lease (0: any; LeaseRequest.max_unit_numbers).
  void set_max_unit_numbers(u128 numbers) { max_unit_numbers_ = numbers; }

  grpc::Status LeaseUnit(Lease* out, bool* has_unit, uint64_t* retry_after_ms) override;
  grpc::Status Heartbeat(const Lease& lease, uint64_t numbers_done, bool* stop) override;
  grpc::Status Complete(const v1::CompleteRequest& request, v1::Disposition* disposition) override;
  // A search unit's result, sent directly (the tests' workers; the daemon spools first).
  grpc::Status Complete(const Lease& lease, const UnitResult& result, double seconds, const std::string& engine,
                        v1::Disposition* disposition);
  grpc::Status Release(const Lease& lease, bool failed, const std::string& reason, int timeout_ms) override;
  grpc::Status Release(const Lease& lease, bool failed, const std::string& reason) {
    return Release(lease, failed, reason, 5000);
  }

 private:
  void Prepare(grpc::ClientContext* ctx, int timeout_ms) const;

  std::unique_ptr<v1::Worker::Stub> stub_;
  std::string token_;
  WorkerIdentity identity_;
  int timeout_ms_;
  bool accepts_stats_ = true;
  u128 max_unit_numbers_ = 0;
  std::mutex register_mu_;
  std::atomic<uint64_t> worker_id_{0};
  std::atomic<uint64_t> lease_duration_ms_{600000};
};

}  // namespace collatz::client
