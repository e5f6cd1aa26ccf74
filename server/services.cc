#include "server/services.h"

#include <limits>

#include "proto/wire.h"

namespace collatz::server {

namespace {

using grpc::StatusCode;
using wire::FromWire;
using wire::ToWire;

int64_t Id(uint64_t wire_id) {
  return wire_id > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? -1 : static_cast<int64_t>(wire_id);
}

// Admin calls: an admin token or the shared token.
#define CHECK_ADMIN(ctx)                           \
  do {                                             \
    grpc::Status _a = auth_->CheckAdmin(ctx);      \
    if (!_a.ok()) return _a;                       \
  } while (0)

// Worker calls: any valid token, and for a worker id the token it registered with.
#define CHECK_WORKER(ctx, worker_id)                                            \
  do {                                                                          \
    Caller _caller;                                                             \
    grpc::Status _a = auth_->Check(ctx, &_caller);                              \
    if (_a.ok()) _a = c_->CheckWorkerToken(Id(worker_id), _caller.token_name);  \
    if (!_a.ok()) return _a;                                                    \
  } while (0)

TokenRole RoleFromWire(v1::TokenRole r) { return r == v1::TOKEN_ROLE_ADMIN ? TokenRole::kAdmin : TokenRole::kWorker; }
v1::TokenRole RoleToWire(TokenRole r) { return r == TokenRole::kAdmin ? v1::TOKEN_ROLE_ADMIN : v1::TOKEN_ROLE_WORKER; }

grpc::Status CheckToken(const std::string& token) {
  if (token.empty() || token.size() > 64) return grpc::Status(StatusCode::INVALID_ARGUMENT, "lease token missing or malformed");
  return grpc::Status::OK;
}

// A quarantined search or stats unit.
template <typename Unit>
void QuarantinedToWire(const Unit& u, v1::QuarantinedUnit* q) {
  q->set_unit_id(static_cast<uint64_t>(u.id));
  ToWire(u.begin, q->mutable_begin());
  ToWire(u.end, q->mutable_end());
  q->set_failures(static_cast<uint32_t>(u.failures));
  q->set_last_error(u.last_error);
}

}  // namespace

grpc::Status WorkerService::Register(grpc::ServerContext* ctx, const v1::RegisterRequest* req, v1::RegisterResponse* resp) {
  Caller caller;
  if (grpc::Status a = auth_->Check(ctx, &caller); !a.ok()) return a;
  WorkerDescription d;
  d.token_name = caller.token_name;
  d.host = req->host();
  for (const auto& g : req->gpus()) d.gpus.emplace_back(g.model(), g.uuid());
  d.driver = req->driver();
  d.binary_version = req->binary_version();
  d.backend = req->backend();
  d.sieve_bits = static_cast<int>(req->sieve_bits());
  d.work_hash_version = req->work_hash_version();
  d.instance_id = req->instance_id();
  d.unit_sieve_bits = req->unit_sieve_bits();
  d.build_flavour = req->build_flavour();
  int64_t id = 0;
  grpc::Status st = c_->Register(d, &id);
  if (!st.ok()) return st;
  resp->set_worker_id(static_cast<uint64_t>(id));
  resp->set_sieve_bits(static_cast<uint32_t>(c_->sieve_bits()));
  resp->set_work_hash_version(kWorkHashVersion);
  resp->set_class_sieve_bits(static_cast<uint32_t>(c_->class_sieve_bits()));
  resp->set_delay_sieve_bits(static_cast<uint32_t>(c_->delay_sieve_bits()));
  resp->set_lease_duration_ms(static_cast<uint64_t>(c_->lease_duration_ms()));
  return grpc::Status::OK;
}

grpc::Status WorkerService::Lease(grpc::ServerContext* ctx, const v1::LeaseRequest* req, v1::LeaseResponse* resp) {
  CHECK_WORKER(ctx, req->worker_id());
  LeaseGrant g;
  const u128 max_numbers = req->has_max_unit_numbers() ? FromWire(req->max_unit_numbers()) : 0;
  grpc::Status st = c_->Lease(Id(req->worker_id()), req->accepts_stats(), max_numbers, &g);
  if (!st.ok()) return st;
  if (!g.has_unit) {
    resp->set_retry_after_ms(static_cast<uint64_t>(c_->retry_after_ms()));
    return grpc::Status::OK;
  }
  if (g.stats) {
    v1::StatsUnit* u = resp->mutable_stats_unit();
    u->set_unit_id(static_cast<uint64_t>(g.unit_id));
    u->set_job_id(static_cast<uint64_t>(g.stats_spec.job_id));
    ToWire(g.stats_spec.begin, u->mutable_begin());
    ToWire(g.stats_spec.end, u->mutable_end());
    u->set_batch(g.stats_spec.batch);
    resp->set_lease_token(g.token);
    resp->set_deadline_unix_ms(static_cast<uint64_t>(g.deadline_ms));
    resp->set_purpose(v1::LEASE_PURPOSE_SEARCH);
    return grpc::Status::OK;
  }
  v1::Unit* u = resp->mutable_unit();
  wire::SpecToWire(g.spec, u);
  u->set_unit_id(static_cast<uint64_t>(g.unit_id));
  u->set_sieve_bits(static_cast<uint32_t>(g.sieve_bits));
  resp->set_lease_token(g.token);
  resp->set_deadline_unix_ms(static_cast<uint64_t>(g.deadline_ms));
  resp->set_purpose(g.purpose == LeasePurpose::kAudit ? v1::LEASE_PURPOSE_AUDIT : v1::LEASE_PURPOSE_SEARCH);
  return grpc::Status::OK;
}

grpc::Status WorkerService::Heartbeat(grpc::ServerContext* ctx, const v1::HeartbeatRequest* req,
                                      v1::HeartbeatResponse* resp) {
  CHECK_WORKER(ctx, req->worker_id());
  grpc::Status st = CheckToken(req->lease_token());
  if (!st.ok()) return st;
  int64_t deadline = 0;
  bool stop = false;
  st = c_->Heartbeat(Id(req->worker_id()), Id(req->unit_id()), req->lease_token(), req->numbers_done(), &deadline, &stop);
  if (!st.ok()) return st;
  resp->set_deadline_unix_ms(static_cast<uint64_t>(deadline));
  resp->set_stop(stop);
  return grpc::Status::OK;
}

grpc::Status WorkerService::Complete(grpc::ServerContext* ctx, const v1::CompleteRequest* req,
                                     v1::CompleteResponse* resp) {
  CHECK_WORKER(ctx, req->worker_id());
  grpc::Status st = CheckToken(req->lease_token());
  if (!st.ok()) return st;
  Disposition d;
  if (req->has_stats_result()) {
    st = c_->CompleteStats(Id(req->worker_id()), Id(req->unit_id()), req->lease_token(), req->stats_result().stats_file(),
                           req->seconds(), req->engine(), &d);
  } else if (c_->IsStatsLease(req->lease_token())) {
    return grpc::Status(StatusCode::INVALID_ARGUMENT, "a stats unit's result must be a stats_result");
  } else {
    st = c_->Complete(Id(req->worker_id()), Id(req->unit_id()), req->lease_token(), wire::ResultFromWire(req->result()),
                      req->seconds(), req->engine(), &d);
  }
  if (!st.ok()) return st;
  switch (d) {
    case Disposition::kAccepted: resp->set_disposition(v1::DISPOSITION_ACCEPTED); break;
    case Disposition::kDuplicate: resp->set_disposition(v1::DISPOSITION_DUPLICATE); break;
    case Disposition::kAuditMatched: resp->set_disposition(v1::DISPOSITION_AUDIT_MATCHED); break;
    case Disposition::kAuditMismatch: resp->set_disposition(v1::DISPOSITION_AUDIT_MISMATCH); break;
  }
  return grpc::Status::OK;
}

grpc::Status WorkerService::Release(grpc::ServerContext* ctx, const v1::ReleaseRequest* req, v1::ReleaseResponse*) {
  CHECK_WORKER(ctx, req->worker_id());
  grpc::Status st = CheckToken(req->lease_token());
  if (!st.ok()) return st;
  return c_->Release(Id(req->worker_id()), Id(req->unit_id()), req->lease_token(), req->failed(), req->reason());
}

// ----------------------------------------------------------------------------- admin

grpc::Status AdminService::Submit(grpc::ServerContext* ctx, const v1::SubmitRequest* req, v1::SubmitResponse* resp) {
  CHECK_ADMIN(ctx);
  Kinds kinds;
  collatz::Status ks = wire::KindsFromWire(req->kinds(), &kinds);
  if (!ks.ok()) return grpc::Status(StatusCode::INVALID_ARGUMENT, ks.message());
  SubmitOutcome out;
  grpc::Status st = c_->Submit(FromWire(req->begin()), FromWire(req->end()), kinds, FromWire(req->unit_size()),
                               req->priority(), &out);
  if (!st.ok()) return st;
  resp->set_submission_id(static_cast<uint64_t>(out.submission_id));
  for (const auto& [a, b] : out.accepted) {
    v1::Range* r = resp->add_accepted();
    ToWire(a, r->mutable_begin());
    ToWire(b, r->mutable_end());
  }
  resp->set_units(out.units);
  return grpc::Status::OK;
}

grpc::Status AdminService::Cancel(grpc::ServerContext* ctx, const v1::CancelRequest* req, v1::CancelResponse* resp) {
  CHECK_ADMIN(ctx);
  uint64_t removed = 0;
  grpc::Status st = req->stats_job_id() != 0 ? c_->CancelStats(Id(req->stats_job_id()), &removed)
                                             : c_->Cancel(Id(req->submission_id()), &removed);
  if (!st.ok()) return st;
  resp->set_units_removed(removed);
  return grpc::Status::OK;
}

grpc::Status AdminService::Requeue(grpc::ServerContext* ctx, const v1::RequeueRequest* req, v1::RequeueResponse* resp) {
  CHECK_ADMIN(ctx);
  uint64_t requeued = 0;
  grpc::Status st = c_->RequeueQuarantined(Id(req->unit_id()), Id(req->stats_unit_id()), req->all_quarantined(), &requeued);
  if (!st.ok()) return st;
  resp->set_units_requeued(requeued);
  return grpc::Status::OK;
}

grpc::Status AdminService::Status(grpc::ServerContext*, const v1::StatusRequest*, v1::StatusResponse* resp) {
  const CoordinatorStatus s = c_->GetStatus();  // read-only: no token needed
  ToWire(s.covered_prefix, resp->mutable_covered_prefix());
  ToWire(s.class_covered_prefix, resp->mutable_class_covered_prefix());
  ToWire(s.checked_prefix, resp->mutable_checked_prefix());
  resp->set_double_check(s.double_check);
  resp->set_units_pending(s.pending);
  resp->set_units_leased(s.leased);
  resp->set_units_finished(s.finished);
  resp->set_units_quarantined(s.quarantined);
  resp->set_audits_pending(s.audits_pending);
  resp->set_audits_blocked(s.audits_blocked);
  resp->set_audits_passed(s.audits_passed);
  resp->set_audits_failed(s.audits_failed);
  ToWire(s.numbers_total, resp->mutable_numbers_total());
  ToWire(s.numbers_finished, resp->mutable_numbers_finished());
  resp->set_numbers_per_second(s.numbers_per_second);
  resp->set_eta_seconds(s.eta_seconds);
  for (const auto& sub : s.submissions) {
    v1::SubmissionStatus* w = resp->add_submissions();
    w->set_submission_id(static_cast<uint64_t>(sub.s.id));
    ToWire(sub.s.begin, w->mutable_begin());
    ToWire(sub.s.end, w->mutable_end());
    w->set_kinds(wire::KindsToWire(sub.s.kinds));
    w->set_priority(sub.s.priority);
    w->set_units_total(sub.units_total);
    w->set_units_finished(sub.units_finished);
    w->set_cancelled(sub.s.cancelled);
  }
  for (const auto& u : s.quarantined_units) QuarantinedToWire(u, resp->add_quarantined());
  resp->set_draining(s.draining);
  for (const auto& j : s.stats_jobs) {
    v1::StatsJobStatus* w = resp->add_stats_jobs();
    w->set_job_id(static_cast<uint64_t>(j.job.id));
    ToWire(j.job.begin, w->mutable_begin());
    ToWire(j.job.end, w->mutable_end());
    w->set_batch(j.job.batch);
    w->set_priority(j.job.priority);
    w->set_units_total(j.units_total);
    w->set_units_finished(j.units_finished);
    w->set_units_leased(j.units_leased);
    w->set_units_quarantined(j.units_quarantined);
    w->set_cancelled(j.job.cancelled);
    for (const auto& u : j.quarantined_units) QuarantinedToWire(u, w->add_quarantined());
  }
  return grpc::Status::OK;
}

grpc::Status AdminService::SubmitStats(grpc::ServerContext* ctx, const v1::SubmitStatsRequest* req,
                                       v1::SubmitStatsResponse* resp) {
  CHECK_ADMIN(ctx);
  StatsSubmitOutcome out;
  grpc::Status st = c_->SubmitStats(FromWire(req->begin()), FromWire(req->end()), req->batch(),
                                    FromWire(req->unit_size()), req->priority(), &out);
  if (!st.ok()) return st;
  resp->set_job_id(static_cast<uint64_t>(out.job_id));
  resp->set_units(out.units);
  return grpc::Status::OK;
}

grpc::Status AdminService::FetchStats(grpc::ServerContext*, const v1::FetchStatsRequest* req,
                                      v1::FetchStatsResponse* resp) {
  // Read-only, like Status and QueryRecords: no token needed.
  StatsPage page;
  grpc::Status st = c_->FetchStats(Id(req->job_id()), req->first_batch(), req->max_batches(), &page);
  if (!st.ok()) return st;
  resp->set_stats_file(std::move(page.stats_file));
  resp->set_total_batches(page.total_batches);
  ToWire(page.job.begin, resp->mutable_begin());
  ToWire(page.job.end, resp->mutable_end());
  resp->set_batch(page.job.batch);
  return grpc::Status::OK;
}

grpc::Status AdminService::ListWorkers(grpc::ServerContext*, const v1::ListWorkersRequest*,
                                       v1::ListWorkersResponse* resp) {
  for (const WorkerReport& r : c_->ListWorkers()) {
    v1::WorkerInfo* w = resp->add_workers();
    w->set_worker_id(static_cast<uint64_t>(r.w.id));
    w->set_host(r.w.host);
    for (const auto& [model, uuid] : r.w.gpus) {
      v1::Gpu* g = w->add_gpus();
      g->set_model(model);
      g->set_uuid(uuid);
    }
    w->set_driver(r.w.driver);
    w->set_binary_version(r.w.binary_version);
    w->set_backend(r.w.backend);
    w->set_sieve_bits(static_cast<uint32_t>(r.w.sieve_bits));
    w->set_flagged(r.w.flagged);
    w->set_flag_reason(r.w.flag_reason);
    w->set_units_finished(r.w.units_finished);
    ToWire(r.w.numbers_finished, w->mutable_numbers_finished());
    w->set_numbers_per_second(r.numbers_per_second);
    w->set_last_seen_unix_ms(static_cast<uint64_t>(r.last_seen_ms));
    w->set_active_leases(r.active_leases);
    w->set_token_name(r.w.token_name);
    if (r.max_unit_numbers) ToWire(*r.max_unit_numbers, w->mutable_max_unit_numbers());
  }
  return grpc::Status::OK;
}

grpc::Status AdminService::QueryRecords(grpc::ServerContext*, const v1::QueryRecordsRequest* req,
                                        v1::QueryRecordsResponse* resp) {
  if (req->kind() != v1::RECORD_KIND_DELAY && req->kind() != v1::RECORD_KIND_CLASS) {
    return grpc::Status(StatusCode::INVALID_ARGUMENT, "kind must be delay or class");
  }
  const MergedRecords m = c_->Records();
  const bool delay = req->kind() == v1::RECORD_KIND_DELAY;
  wire::RecordsToWire(delay ? m.delay_final : m.class_final, resp->mutable_final_records());
  if (req->include_candidates()) {
    wire::RecordsToWire(delay ? m.delay_candidates : m.class_candidates, resp->mutable_candidates());
  }
  ToWire(delay ? m.covered_prefix : m.class_covered_prefix, resp->mutable_covered_prefix());
  return grpc::Status::OK;
}

grpc::Status AdminService::Import(grpc::ServerContext* ctx, const v1::ImportRequest* req, v1::ImportResponse* resp) {
  CHECK_ADMIN(ctx);
  TrustedImport imp;
  imp.complete_below = FromWire(req->complete_below());
  imp.delay_records = wire::RecordsFromWire(req->delay_records());
  imp.class_records = wire::RecordsFromWire(req->class_records());
  u128 covered = 0;
  grpc::Status st = c_->Import(imp, req->source().empty() ? "import" : req->source(), &covered);
  if (!st.ok()) return st;
  ToWire(covered, resp->mutable_covered_prefix());
  return grpc::Status::OK;
}

grpc::Status AdminService::AddKnownPoints(grpc::ServerContext* ctx, const v1::AddKnownPointsRequest* req,
                                          v1::AddKnownPointsResponse* resp) {
  CHECK_ADMIN(ctx);
  const std::vector<Record> points = wire::RecordsFromWire(req->points());
  size_t added = 0, stored = 0;
  grpc::Status st = c_->AddKnownPoints(points, req->source().empty() ? "known points" : req->source(), &added, &stored);
  if (!st.ok()) return st;
  resp->set_added(added);
  resp->set_already_known(points.size() - added);
  resp->set_stored(stored);
  return grpc::Status::OK;
}

grpc::Status AdminService::Export(grpc::ServerContext*, const v1::ExportRequest*, v1::ExportResponse* resp) {
  const MergedRecords m = c_->Records();
  ToWire(m.covered_prefix, resp->mutable_delay_complete_below());
  ToWire(m.class_covered_prefix, resp->mutable_class_complete_below());
  wire::RecordsToWire(m.delay_final, resp->mutable_delay_records());
  wire::RecordsToWire(m.class_final, resp->mutable_class_records());
  wire::RecordsToWire(m.known_points, resp->mutable_known_points());
  return grpc::Status::OK;
}

grpc::Status AdminService::Backup(grpc::ServerContext* ctx, const v1::BackupRequest* req, v1::BackupResponse* resp) {
  CHECK_ADMIN(ctx);
  uint64_t bytes = 0;
  grpc::Status st = c_->Backup(req->destination_path(), &bytes);
  if (!st.ok()) return st;
  resp->set_bytes(bytes);
  return grpc::Status::OK;
}

grpc::Status AdminService::AddToken(grpc::ServerContext* ctx, const v1::AddTokenRequest* req,
                                    v1::AddTokenResponse* resp) {
  CHECK_ADMIN(ctx);
  if (req->role() != v1::TOKEN_ROLE_WORKER && req->role() != v1::TOKEN_ROLE_ADMIN) {
    return grpc::Status(StatusCode::INVALID_ARGUMENT, "role must be worker or admin");
  }
  std::string token;
  grpc::Status st = auth_->AddToken(req->name(), RoleFromWire(req->role()), &token);
  if (!st.ok()) return st;
  resp->set_token(token);
  return grpc::Status::OK;
}

grpc::Status AdminService::ListTokens(grpc::ServerContext* ctx, const v1::ListTokensRequest*,
                                      v1::ListTokensResponse* resp) {
  CHECK_ADMIN(ctx);  // names and roles are not for worker hosts
  std::vector<StoredToken> tokens;
  grpc::Status st = auth_->ListTokens(&tokens);
  if (!st.ok()) return st;
  for (const StoredToken& t : tokens) {
    v1::TokenInfo* w = resp->add_tokens();
    w->set_name(t.name);
    w->set_role(RoleToWire(t.role));
    w->set_created_unix_ms(static_cast<uint64_t>(t.created_ms));
    w->set_revoked_unix_ms(static_cast<uint64_t>(t.revoked_ms));
    w->set_last_used_unix_ms(static_cast<uint64_t>(t.last_used_ms));
  }
  return grpc::Status::OK;
}

grpc::Status AdminService::RevokeToken(grpc::ServerContext* ctx, const v1::RevokeTokenRequest* req,
                                       v1::RevokeTokenResponse*) {
  CHECK_ADMIN(ctx);
  return auth_->RevokeToken(req->name());
}

grpc::Status AdminService::Unflag(grpc::ServerContext* ctx, const v1::UnflagRequest* req, v1::UnflagResponse* resp) {
  CHECK_ADMIN(ctx);
  Coordinator::UnflagOutcome out;
  grpc::Status st = c_->Unflag(Id(req->worker_id()), &out);
  if (!st.ok()) return st;
  for (int64_t id : out.cleared) resp->add_workers_cleared(static_cast<uint64_t>(id));
  resp->set_identities_cleared(out.identities);
  resp->set_reason(out.reason);
  return grpc::Status::OK;
}

}  // namespace collatz::server
