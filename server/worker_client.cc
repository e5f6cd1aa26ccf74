#include "server/worker_client.h"

#include <chrono>

#include "core/work_hash.h"
#include "proto/wire.h"
#include "server/auth.h"

namespace collatz::server {

WorkerClient::WorkerClient(std::shared_ptr<grpc::Channel> channel, std::string token, int timeout_ms)
    : stub_(v1::Worker::NewStub(std::move(channel))), token_(std::move(token)), timeout_ms_(timeout_ms) {}

void WorkerClient::Prepare(grpc::ClientContext* ctx) const {
  AddToken(ctx, token_);
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms_));
}

grpc::Status WorkerClient::Register(const WorkerIdentity& id) {
  grpc::ClientContext ctx;
  Prepare(&ctx);
  v1::RegisterRequest req;
  req.set_host(id.host);
  for (const auto& [model, uuid] : id.gpus) {
    v1::Gpu* g = req.add_gpus();
    g->set_model(model);
    g->set_uuid(uuid);
  }
  req.set_driver(id.driver);
  req.set_binary_version(id.binary_version);
  req.set_backend(id.backend);
  req.set_sieve_bits(static_cast<uint32_t>(id.sieve_bits));
  req.set_work_hash_version(kWorkHashVersion);
  req.set_instance_id(id.instance_id);
  v1::RegisterResponse resp;
  grpc::Status st = stub_->Register(&ctx, req, &resp);
  if (st.ok()) worker_id_ = resp.worker_id();
  return st;
}

grpc::Status WorkerClient::Lease(WorkerLease* out) {
  *out = WorkerLease();
  grpc::ClientContext ctx;
  Prepare(&ctx);
  v1::LeaseRequest req;
  req.set_worker_id(worker_id_);
  v1::LeaseResponse resp;
  grpc::Status st = stub_->Lease(&ctx, req, &resp);
  if (!st.ok()) return st;
  out->retry_after_ms = resp.retry_after_ms();
  if (!resp.has_unit()) return st;
  Status cs = wire::SpecFromWire(resp.unit(), &out->spec);
  if (!cs.ok()) return grpc::Status(grpc::StatusCode::INTERNAL, "server sent a bad unit: " + cs.message());
  out->has_unit = true;
  out->unit_id = resp.unit().unit_id();
  out->token = resp.lease_token();
  out->deadline_ms = resp.deadline_unix_ms();
  out->audit = resp.purpose() == v1::LEASE_PURPOSE_AUDIT;
  return st;
}

grpc::Status WorkerClient::Heartbeat(const WorkerLease& lease, uint64_t done, bool* stop) {
  grpc::ClientContext ctx;
  Prepare(&ctx);
  v1::HeartbeatRequest req;
  req.set_worker_id(worker_id_);
  req.set_unit_id(lease.unit_id);
  req.set_lease_token(lease.token);
  req.set_numbers_done(done);
  v1::HeartbeatResponse resp;
  grpc::Status st = stub_->Heartbeat(&ctx, req, &resp);
  *stop = st.ok() && resp.stop();
  return st;
}

grpc::Status WorkerClient::Complete(const WorkerLease& lease, const UnitResult& result, double seconds,
                                    const std::string& engine, v1::Disposition* disposition) {
  grpc::ClientContext ctx;
  Prepare(&ctx);
  v1::CompleteRequest req;
  req.set_worker_id(worker_id_);
  req.set_unit_id(lease.unit_id);
  req.set_lease_token(lease.token);
  wire::ResultToWire(result, req.mutable_result());
  req.set_seconds(seconds);
  req.set_engine(engine);
  v1::CompleteResponse resp;
  grpc::Status st = stub_->Complete(&ctx, req, &resp);
  if (disposition != nullptr) *disposition = resp.disposition();
  return st;
}

grpc::Status WorkerClient::Release(const WorkerLease& lease, bool failed, const std::string& reason) {
  grpc::ClientContext ctx;
  Prepare(&ctx);
  v1::ReleaseRequest req;
  req.set_worker_id(worker_id_);
  req.set_unit_id(lease.unit_id);
  req.set_lease_token(lease.token);
  req.set_failed(failed);
  req.set_reason(reason);
  v1::ReleaseResponse resp;
  return stub_->Release(&ctx, req, &resp);
}

}  // namespace collatz::server
