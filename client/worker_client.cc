#include "client/worker_client.h"

#include <algorithm>
#include <chrono>

#include "core/batch_stats.h"
#include "core/work_hash.h"
#include "client/channel.h"
#include "proto/wire.h"

namespace collatz::client {

constexpr int kHeartbeatTimeoutMs = 10000;

bool IsTransient(const grpc::Status& status) {
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:         // down, restarting, draining
    case grpc::StatusCode::DEADLINE_EXCEEDED:   // slow or partitioned
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
    case grpc::StatusCode::ABORTED:
    case grpc::StatusCode::INTERNAL:            // the server's database had a bad moment
    case grpc::StatusCode::UNKNOWN:
    case grpc::StatusCode::CANCELLED:
    case grpc::StatusCode::UNAUTHENTICATED:     // an operator can fix the token without losing work
      return true;
    default:
      return false;
  }
}

std::string Describe(const grpc::Status& status) {
  static const char* const kNames[] = {"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
                                       "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
                                       "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
                                       "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};
  const int code = static_cast<int>(status.error_code());
  std::string name = code >= 0 && code <= 16 ? kNames[code] : "code " + std::to_string(code);
  return status.error_message().empty() ? name : name + ": " + status.error_message();
}

namespace {

// Every request about a lease names it by the worker it was granted to, its unit and token.
template <typename Request>
Request ForLease(const Lease& lease) {
  Request request;
  request.set_worker_id(lease.worker_id);
  request.set_unit_id(lease.unit_id);
  request.set_lease_token(lease.token);
  return request;
}

}  // namespace

v1::CompleteRequest CompletionFor(const Lease& lease) { return ForLease<v1::CompleteRequest>(lease); }

WorkerClient::WorkerClient(std::shared_ptr<grpc::Channel> channel, std::string token, WorkerIdentity identity,
                           int timeout_ms)
    : stub_(v1::Worker::NewStub(std::move(channel))),
      token_(std::move(token)),
      identity_(std::move(identity)),
      timeout_ms_(timeout_ms) {}

void WorkerClient::Prepare(grpc::ClientContext* ctx, int timeout_ms) const {
  PrepareCall(ctx, token_, std::chrono::milliseconds(std::min(timeout_ms, timeout_ms_)));
}

grpc::Status WorkerClient::Register(Registration* out) {
  grpc::ClientContext ctx;
  Prepare(&ctx, timeout_ms_);
  v1::RegisterRequest req;
  req.set_host(identity_.host);
  req.set_instance_id(identity_.instance_id);
  for (const auto& [model, uuid] : identity_.gpus) {
    v1::Gpu* g = req.add_gpus();
    g->set_model(model);
    g->set_uuid(uuid);
  }
  req.set_driver(identity_.driver);
  req.set_binary_version(identity_.binary_version);
  req.set_backend(identity_.backend);
  req.set_sieve_bits(static_cast<uint32_t>(identity_.sieve_bits));
  req.set_work_hash_version(kWorkHashVersion);
  req.set_instance_id(identity_.instance_id);
  req.set_unit_sieve_bits(identity_.unit_sieve_bits);
  req.set_build_flavour(identity_.build_flavour);
  v1::RegisterResponse resp;
  grpc::Status st = stub_->Register(&ctx, req, &resp);
  if (!st.ok()) return st;
  // An older server accepts this worker without looking at its version; results of
  // another hash version would fail its audits, so stop here (the spool is kept).
  if (resp.work_hash_version() != kWorkHashVersion) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "the server computes work hash version " + std::to_string(resp.work_hash_version()) +
                            " (0: a server from before versions), this worker version " +
                            std::to_string(kWorkHashVersion) + "; upgrade the server first");
  }
  worker_id_ = resp.worker_id();
  if (resp.lease_duration_ms() > 0) lease_duration_ms_ = resp.lease_duration_ms();
  if (out == nullptr) return st;
  out->worker_id = resp.worker_id();
  out->server_sieve_bits = static_cast<int>(resp.sieve_bits());
  out->server_class_sieve_bits = static_cast<int>(resp.class_sieve_bits());
  out->server_delay_sieve_bits = static_cast<int>(resp.delay_sieve_bits());
  out->lease_duration_ms = lease_duration_ms_;
  return st;
}

grpc::Status WorkerClient::RegisterAgainIfStill(uint64_t stale_id) {
  std::lock_guard<std::mutex> lock(register_mu_);
  if (worker_id_.load() != stale_id) return grpc::Status::OK;
  Registration r;
  return Register(&r);
}

grpc::Status WorkerClient::LeaseUnit(Lease* out, bool* has_unit, uint64_t* retry_after_ms) {
  *has_unit = false;
  *retry_after_ms = 0;
  grpc::ClientContext ctx;
  Prepare(&ctx, timeout_ms_);
  v1::LeaseRequest req;
  const uint64_t id = worker_id_.load();
  req.set_worker_id(id);
  req.set_accepts_stats(accepts_stats_);
  if (max_unit_numbers_ != 0) wire::ToWire(max_unit_numbers_, req.mutable_max_unit_numbers());
  v1::LeaseResponse resp;
  grpc::Status st = stub_->Lease(&ctx, req, &resp);
  if (!st.ok()) return st;
  *retry_after_ms = resp.retry_after_ms();
  if (resp.has_stats_unit()) {
    const v1::StatsUnit& u = resp.stats_unit();
    *out = Lease();
    out->stats = true;
    out->worker_id = id;
    out->unit_id = u.unit_id();
    out->stats_job_id = u.job_id();
    out->stats_batch = u.batch();
    out->spec.begin = wire::FromWire(u.begin());
    out->spec.end = wire::FromWire(u.end());
    out->token = resp.lease_token();
    out->deadline_ms = resp.deadline_unix_ms();
    Status vs = ValidateStatsRange(out->spec.begin, out->spec.end, out->stats_batch);
    if (!vs.ok()) return grpc::Status(grpc::StatusCode::INTERNAL, "server sent a bad stats unit: " + vs.message());
    *has_unit = true;
    return st;
  }
  if (!resp.has_unit()) return st;
  *out = Lease();
  Status cs = wire::SpecFromWire(resp.unit(), &out->spec);
  if (!cs.ok()) return grpc::Status(grpc::StatusCode::INTERNAL, "server sent a bad unit: " + cs.message());
  out->worker_id = id;
  out->unit_id = resp.unit().unit_id();
  // Kept as sent (clamped into an int): a width the worker cannot build is its to refuse.
  out->sieve_bits = static_cast<int>(std::min<uint32_t>(resp.unit().sieve_bits(), 1000));
  out->token = resp.lease_token();
  out->deadline_ms = resp.deadline_unix_ms();
  out->audit = resp.purpose() == v1::LEASE_PURPOSE_AUDIT;
  *has_unit = true;
  return st;
}

grpc::Status WorkerClient::Heartbeat(const Lease& lease, uint64_t numbers_done, bool* stop) {
  grpc::ClientContext ctx;
  Prepare(&ctx, kHeartbeatTimeoutMs);
  v1::HeartbeatRequest req = ForLease<v1::HeartbeatRequest>(lease);
  req.set_numbers_done(numbers_done);
  v1::HeartbeatResponse resp;
  grpc::Status st = stub_->Heartbeat(&ctx, req, &resp);
  *stop = st.ok() && resp.stop();
  return st;
}

grpc::Status WorkerClient::Complete(const v1::CompleteRequest& request, v1::Disposition* disposition) {
  grpc::ClientContext ctx;
  Prepare(&ctx, timeout_ms_);
  v1::CompleteResponse resp;
  grpc::Status st = stub_->Complete(&ctx, request, &resp);
  if (disposition != nullptr) *disposition = resp.disposition();
  return st;
}

grpc::Status WorkerClient::Complete(const Lease& lease, const UnitResult& result, double seconds,
                                    const std::string& engine, v1::Disposition* disposition) {
  v1::CompleteRequest request = CompletionFor(lease);
  wire::ResultToWire(result, request.mutable_result());
  request.set_seconds(seconds);
  request.set_engine(engine);
  return Complete(request, disposition);
}

grpc::Status WorkerClient::Release(const Lease& lease, bool failed, const std::string& reason, int timeout_ms) {
  grpc::ClientContext ctx;
  Prepare(&ctx, timeout_ms);
  v1::ReleaseRequest req = ForLease<v1::ReleaseRequest>(lease);
  req.set_failed(failed);
  req.set_reason(reason);
  v1::ReleaseResponse resp;
  return stub_->Release(&ctx, req, &resp);
}

}  // namespace collatz::client
