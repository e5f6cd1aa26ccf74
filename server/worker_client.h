// The client side of the Worker service, for worker daemons (and the tests' workers):
// register, lease, heartbeat, complete and release, with core types in and out.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "core/unit.h"
#include "proto/collatz.grpc.pb.h"

namespace collatz::server {

struct WorkerIdentity {
  std::string host = "localhost";
  std::vector<std::pair<std::string, std::string>> gpus;
  std::string driver, binary_version = "dev", backend = "cpu";
  int sieve_bits = 19;
  std::string instance_id;  // stable id of the installation (RegisterRequest.instance_id)
};

struct WorkerLease {
  bool has_unit = false;
  uint64_t unit_id = 0;
  UnitSpec spec;
  std::string token;
  uint64_t deadline_ms = 0;
  bool audit = false;
  uint64_t retry_after_ms = 0;
};

class WorkerClient {
 public:
  WorkerClient(std::shared_ptr<grpc::Channel> channel, std::string token, int timeout_ms = 30000);

  grpc::Status Register(const WorkerIdentity& id);
  uint64_t worker_id() const { return worker_id_; }
  void set_worker_id(uint64_t id) { worker_id_ = id; }
  grpc::Status Lease(WorkerLease* out);
  grpc::Status Heartbeat(const WorkerLease& lease, uint64_t done, bool* stop);
  grpc::Status Complete(const WorkerLease& lease, const UnitResult& result, double seconds, const std::string& engine,
                        v1::Disposition* disposition);
  grpc::Status Release(const WorkerLease& lease, bool failed, const std::string& reason);

 private:
  void Prepare(grpc::ClientContext* ctx) const;
  std::unique_ptr<v1::Worker::Stub> stub_;
  std::string token_;
  int timeout_ms_;
  uint64_t worker_id_ = 0;
};

}  // namespace collatz::server
