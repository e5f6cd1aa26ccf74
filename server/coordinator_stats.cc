// The coordinator's stats jobs (issue 6): batch statistics cut into batch-aligned units,
// leased like search units (tokens, deadlines, heartbeats, expiry, release), verified on
// arrival (server/stats_verifier.h), stored as stats files, fetched page by page. The same
// rules as for search units: every change is written to the store before memory changes,
// failed attempts count toward quarantine, a wrong result flags its worker.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "core/stats_file.h"
#include "server/coordinator.h"
#include "server/coordinator_util.h"
#include "server/stats_verifier.h"

namespace collatz::server {

namespace {

using grpc::StatusCode;

}  // namespace

grpc::Status Coordinator::LoadStats() {
  std::vector<StoredStatsJob> jobs;
  RETURN_IF_DB_ERROR(store_->LoadStatsJobs(&jobs), "loading stats jobs");
  for (const StoredStatsJob& j : jobs) stats_jobs_[j.id] = j;
  std::vector<StoredStatsUnit> units;
  RETURN_IF_DB_ERROR(store_->LoadStatsUnits(&units), "loading stats units");
  for (const StoredStatsUnit& u : units) {
    StatsUnitMem m;
    static_cast<StoredStatsUnit&>(m) = u;
    auto jit = stats_jobs_.find(u.job_id);
    m.priority = jit == stats_jobs_.end() ? 0 : jit->second.priority;
    stats_units_[u.id] = m;
  }
  std::vector<StoredStatsLease> leases;
  RETURN_IF_DB_ERROR(store_->LoadStatsLeases(&leases), "loading stats leases");
  const int64_t now = clock_->NowMs();
  for (StoredStatsLease& l : leases) {
    if (l.state == LeaseState::kActive) {
      auto it = stats_units_.find(l.unit_id);
      if (it == stats_units_.end()) continue;
      l.deadline_ms = now + options_.lease_duration_ms;  // the worker may still be running
      it->second.token = l.token;
      stats_active_tokens_.insert(l.token);
    }
    stats_leases_[l.token] = l;
  }
  for (auto& [id, u] : stats_units_) {
    if (u.state == StoredUnitState::kLeased && u.token.empty()) u.state = StoredUnitState::kPending;
    if (u.state == StoredUnitState::kPending && !u.quarantined) Enqueue(u);
  }
  if (!stats_jobs_.empty()) {
    spdlog::info("stats: {} jobs, {} units ({} queued), {} leases", stats_jobs_.size(), stats_units_.size(),
                 stats_queue_.size(), stats_leases_.size());
  }
  return grpc::Status::OK;
}

bool Coordinator::IsStatsLease(const std::string& token) {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_leases_.count(token) != 0;
}

const Coordinator::QueueKey* Coordinator::StatsQueueHead() const {
  return stats_queue_.empty() ? nullptr : &*stats_queue_.begin();
}

void Coordinator::RequeueStats(StatsUnitMem* u) {
  u->state = StoredUnitState::kPending;
  u->token.clear();
  if (!u->quarantined) Enqueue(*u);
}

grpc::Status Coordinator::RecordStatsFailure(StatsUnitMem* u, int64_t worker_id, const std::string& token,
                                             const std::string& kind, const std::string& error, int64_t now) {
  if (CountFailure(u, options_.max_failures, kind, error)) {
    spdlog::warn("stats unit={} lease={} quarantined after {} failures (last: {})", u->id, ShortToken(token),
                 u->failures, u->last_error);
    RETURN_IF_DB_ERROR(store_->InsertEvent(now, "stats_unit_quarantined",
                                           "stats unit " + std::to_string(u->id) + " of job " +
                                               std::to_string(u->job_id) + ": " + u->last_error),
                       "recording attempt");
  }
  RETURN_IF_DB_ERROR(store_->InsertStatsAttempt(u->id, worker_id, token, kind, error, now), "recording attempt");
  return grpc::Status::OK;
}

// ------------------------------------------------------------------------ admin side

grpc::Status Coordinator::SubmitStats(u128 begin, u128 end, uint32_t batch, u128 unit_size, int32_t priority,
                                      StatsSubmitOutcome* out) {
  if (batch == 0) batch = kDefaultStatsBatch;
  Status vs = ValidateStatsRange(begin, end, batch);
  if (!vs.ok()) return grpc::Status(StatusCode::INVALID_ARGUMENT, vs.message());
  if (unit_size == 0) unit_size = options_.default_stats_unit_size;
  // Whole batches, at least one, at most max_stats_batches_per_unit.
  u128 unit_batches = unit_size / batch;
  if (unit_batches == 0) unit_batches = 1;
  unit_batches = std::min<u128>(unit_batches, options_.max_stats_batches_per_unit);
  const u128 unit_numbers = unit_batches * batch;
  const u128 units = (end - begin + unit_numbers - 1) / unit_numbers;
  if (units > options_.max_units_per_submission) {
    return grpc::Status(StatusCode::INVALID_ARGUMENT,
                        "stats job would make " + ToDecimal(units) + " units; choose a larger unit size (at most " +
                            std::to_string(options_.max_stats_batches_per_unit) + " batches per unit)");
  }
  WriteLock lock(this);
  StoredStatsJob job;
  job.begin = begin;
  job.end = end;
  job.batch = batch;
  job.unit_size = unit_numbers;
  job.priority = priority;
  std::vector<StatsUnitMem> made;
  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), "submit stats");
  RETURN_IF_DB_ERROR(store_->InsertStatsJob(job, &job.id), "submit stats");
  for (u128 x = begin; x < end;) {
    StatsUnitMem u;
    u.job_id = job.id;
    u.begin = x;
    u.end = end - x > unit_numbers ? x + unit_numbers : end;  // both multiples of batch
    u.priority = priority;
    RETURN_IF_DB_ERROR(store_->InsertStatsUnit(u, &u.id), "submit stats");
    made.push_back(u);
    x = u.end;
  }
  RETURN_IF_DB_ERROR(txn->Commit(), "submit stats");
  stats_jobs_[job.id] = job;
  for (StatsUnitMem& u : made) {
    Enqueue(u);
    stats_units_[u.id] = u;
  }
  out->job_id = job.id;
  out->units = made.size();
  spdlog::info("stats job={} [{}, {}) batch {} priority {}: {} units of {} numbers", job.id, ToDecimal(begin),
               ToDecimal(end), batch, priority, made.size(), ToDecimal(unit_numbers));
  return grpc::Status::OK;
}

grpc::Status Coordinator::CancelStats(int64_t job_id, uint64_t* units_removed) {
  WriteLock lock(this);
  auto jit = stats_jobs_.find(job_id);
  if (jit == stats_jobs_.end()) return grpc::Status(StatusCode::NOT_FOUND, "unknown stats job " + std::to_string(job_id));
  if (jit->second.cancelled) {
    return grpc::Status(StatusCode::FAILED_PRECONDITION, "stats job " + std::to_string(job_id) + " is already cancelled");
  }
  std::vector<int64_t> doomed;
  for (const auto& [id, u] : stats_units_) {
    if (u.job_id == job_id && u.state != StoredUnitState::kFinished) doomed.push_back(id);
  }
  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), "cancel stats");
  RETURN_IF_DB_ERROR(store_->SetStatsJobCancelled(job_id), "cancel stats");
  for (int64_t id : doomed) RETURN_IF_DB_ERROR(store_->DeleteStatsUnit(id), "cancel stats");
  RETURN_IF_DB_ERROR(txn->Commit(), "cancel stats");
  jit->second.cancelled = true;
  for (int64_t id : doomed) {
    Dequeue(stats_units_[id]);
    stats_units_.erase(id);
  }
  for (auto it = stats_leases_.begin(); it != stats_leases_.end();) {
    if (stats_units_.count(it->second.unit_id)) {
      ++it;
    } else {
      stats_active_tokens_.erase(it->first);
      it = stats_leases_.erase(it);
    }
  }
  *units_removed = doomed.size();
  spdlog::info("stats job={} cancelled: {} unfinished units removed", job_id, doomed.size());
  return grpc::Status::OK;
}

grpc::Status Coordinator::FetchStats(int64_t job_id, uint64_t first_batch, uint64_t max_batches, StatsPage* out) {
  std::lock_guard<std::mutex> lock(mu_);
  auto jit = stats_jobs_.find(job_id);
  if (jit == stats_jobs_.end()) return grpc::Status(StatusCode::NOT_FOUND, "unknown stats job " + std::to_string(job_id));
  const StoredStatsJob& job = jit->second;
  uint64_t total = 0, finished = 0, leased = 0, quarantined = 0;
  for (const auto& [id, u] : stats_units_) {
    if (u.job_id != job_id) continue;
    ++total;
    if (u.state == StoredUnitState::kFinished) ++finished;
    else if (u.quarantined) ++quarantined;
    else if (u.state == StoredUnitState::kLeased) ++leased;
  }
  if (job.cancelled) {
    return grpc::Status(StatusCode::FAILED_PRECONDITION, "stats job " + std::to_string(job_id) + " was cancelled");
  }
  if (finished < total) {
    const uint64_t remain = total - finished;
    return grpc::Status(StatusCode::FAILED_PRECONDITION,
                        "stats job " + std::to_string(job_id) + " is not complete: " + std::to_string(remain) + " of " +
                            std::to_string(total) + " units remain (" + std::to_string(leased) + " leased, " +
                            std::to_string(remain - leased - quarantined) + " pending, " + std::to_string(quarantined) +
                            " quarantined)");
  }
  const uint64_t job_batches = static_cast<uint64_t>((job.end - job.begin) / job.batch);
  if (first_batch >= job_batches) {
    return grpc::Status(StatusCode::OUT_OF_RANGE, "first batch " + std::to_string(first_batch) + " is past the job's " +
                                                      std::to_string(job_batches) + " batches");
  }
  if (max_batches == 0 || max_batches > kMaxStatsPageBatches) max_batches = kMaxStatsPageBatches;
  const uint64_t n = std::min(max_batches, job_batches - first_batch);
  const u128 from = job.begin + static_cast<u128>(first_batch) * job.batch;
  const u128 to = from + static_cast<u128>(n) * job.batch;
  std::vector<std::pair<u128, std::string>> results;
  RETURN_IF_DB_ERROR(store_->LoadStatsResults(job_id, from, to, &results), "fetch stats");
  StatsFile page;
  page.from = from;
  page.batch = job.batch;
  page.batches.reserve(n);
  for (const auto& [begin, bytes] : results) {
    StatsFile unit;
    Status st = DecodeStatsFile(bytes, "stored result of the unit at " + ToDecimal(begin), &unit);
    if (!st.ok()) return FromCore(st, "fetch stats");
    if (unit.batch != job.batch || unit.from != begin) {
      return grpc::Status(StatusCode::DATA_LOSS, "stored result of the unit at " + ToDecimal(begin) + " does not match it");
    }
    // The part of the unit inside the page; units are contiguous and sorted by begin.
    const u128 at = page.to();
    if (unit.from > at || unit.to() <= at) {
      return grpc::Status(StatusCode::DATA_LOSS, "stored results of stats job " + std::to_string(job_id) +
                                                     " leave a gap at " + ToDecimal(at));
    }
    const uint64_t skip = static_cast<uint64_t>((at - unit.from) / job.batch);
    const uint64_t take = std::min<uint64_t>(unit.batches.size() - skip, n - page.batches.size());
    page.batches.insert(page.batches.end(), unit.batches.begin() + skip, unit.batches.begin() + skip + take);
    if (page.batches.size() == n) break;
  }
  if (page.batches.size() != n) {
    return grpc::Status(StatusCode::DATA_LOSS, "stored results of stats job " + std::to_string(job_id) +
                                                   " end early at " + ToDecimal(page.to()));
  }
  out->stats_file = EncodeStatsFile(page);
  out->total_batches = job_batches;
  out->job = job;
  return grpc::Status::OK;
}

// ----------------------------------------------------------------------- worker side

grpc::Status Coordinator::LeaseStatsLocked(int64_t worker_id, int64_t now, LeaseGrant* out) {
  StatsUnitMem& unit = stats_units_[std::get<2>(*stats_queue_.begin())];
  StoredStatsLease lease;
  lease.token = NewToken();
  lease.unit_id = unit.id;
  lease.worker_id = worker_id;
  lease.issued_ms = now;
  lease.deadline_ms = now + options_.lease_duration_ms;
  StatsUnitMem updated = unit;
  updated.state = StoredUnitState::kLeased;
  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), "lease");
  RETURN_IF_DB_ERROR(store_->InsertStatsLease(lease), "lease");
  RETURN_IF_DB_ERROR(store_->UpdateStatsUnit(updated), "lease");
  RETURN_IF_DB_ERROR(txn->Commit(), "lease");
  Dequeue(unit);
  unit.state = StoredUnitState::kLeased;
  unit.token = lease.token;
  stats_leases_[lease.token] = lease;
  stats_active_tokens_.insert(lease.token);
  next_stats_deadline_ms_ = std::min(next_stats_deadline_ms_, lease.deadline_ms);
  const StoredStatsJob& job = stats_jobs_[unit.job_id];
  out->has_unit = true;
  out->stats = true;
  out->unit_id = unit.id;
  out->stats_spec.job_id = unit.job_id;
  out->stats_spec.begin = unit.begin;
  out->stats_spec.end = unit.end;
  out->stats_spec.batch = job.batch;
  out->token = lease.token;
  out->deadline_ms = lease.deadline_ms;
  out->purpose = LeasePurpose::kSearch;
  spdlog::info("worker={} stats unit={} lease={} job {}: [{}, {}) batch {}", worker_id, unit.id,
               ShortToken(lease.token), unit.job_id, ToDecimal(unit.begin), ToDecimal(unit.end), job.batch);
  return grpc::Status::OK;
}

grpc::Status Coordinator::FindStatsLease(int64_t worker_id, int64_t unit_id, const std::string& token,
                                         StatsUnitMem** unit, StoredStatsLease** lease) {
  auto lit = stats_leases_.find(token);
  if (lit == stats_leases_.end() || lit->second.unit_id != unit_id) {
    return grpc::Status(StatusCode::FAILED_PRECONDITION,
                        "unknown or stale lease token for stats unit " + std::to_string(unit_id));
  }
  auto uit = stats_units_.find(unit_id);
  if (uit == stats_units_.end()) {
    return grpc::Status(StatusCode::NOT_FOUND, "unknown stats unit " + std::to_string(unit_id));
  }
  if (lit->second.worker_id != worker_id) {
    return grpc::Status(StatusCode::PERMISSION_DENIED,
                        "the lease of stats unit " + std::to_string(unit_id) + " belongs to another worker");
  }
  WorkerMem* worker;
  grpc::Status st = FindUsableWorker(worker_id, &worker);
  if (!st.ok()) return st;
  worker->last_seen_ms = clock_->NowMs();
  *unit = &uit->second;
  *lease = &lit->second;
  return grpc::Status::OK;
}

grpc::Status Coordinator::FlagWorkerStats(int64_t worker_id, int64_t now) {
  // Inside the caller's transaction: database first, then memory (as FlagWorker does).
  std::vector<int64_t> revoke;
  for (auto& [id, u] : stats_units_) {
    if (u.state != StoredUnitState::kFinished || u.finished_by != worker_id) continue;
    StatsUnitMem c = u;
    c.state = StoredUnitState::kPending;
    c.finished_by = 0;
    c.finished_token.clear();
    RETURN_IF_DB_ERROR(store_->UpdateStatsUnit(c), "flagging worker");
    RETURN_IF_DB_ERROR(store_->InsertStatsAttempt(id, worker_id, u.finished_token, "revoked",
                                                  "result of a flagged worker", now),
                       "flagging worker");
    revoke.push_back(id);
  }
  std::vector<std::string> active;
  for (const std::string& token : stats_active_tokens_) {
    auto lit = stats_leases_.find(token);
    if (lit == stats_leases_.end() || lit->second.worker_id != worker_id || lit->second.state != LeaseState::kActive) {
      continue;
    }
    StoredStatsLease c = lit->second;
    c.state = LeaseState::kRevoked;
    RETURN_IF_DB_ERROR(store_->UpdateStatsLease(c), "flagging worker");
    StatsUnitMem& u = stats_units_[c.unit_id];
    if (u.token == token) {
      StatsUnitMem uc = u;
      uc.state = StoredUnitState::kPending;
      RETURN_IF_DB_ERROR(store_->UpdateStatsUnit(uc), "flagging worker");
    }
    active.push_back(token);
  }
  for (int64_t id : revoke) {
    StatsUnitMem& u = stats_units_[id];
    u.finished_by = 0;
    u.finished_token.clear();
    RequeueStats(&u);  // a finished unit holds no active lease
  }
  for (const std::string& token : active) {
    StoredStatsLease& l = stats_leases_[token];
    l.state = LeaseState::kRevoked;
    StatsUnitMem& u = stats_units_[l.unit_id];
    if (u.token == token) RequeueStats(&u);
  }
  if (!revoke.empty() || !active.empty()) {
    spdlog::warn("worker={} flagged: {} finished stats units and {} stats leases re-queued", worker_id, revoke.size(),
                 active.size());
  }
  return grpc::Status::OK;
}

grpc::Status Coordinator::CompleteStatsImpl(int64_t worker_id, int64_t unit_id, const std::string& token,
                                            const std::string& stats_file, double seconds, const std::string& engine,
                                            Disposition* disposition) {
  if (!std::isfinite(seconds) || seconds < 0) return grpc::Status(StatusCode::INVALID_ARGUMENT, "seconds must be >= 0");
  // The range and the batches to audit, under the lock; the audit itself runs without it
  // (a large batch takes a while) and everything is checked again afterwards.
  u128 begin = 0, end = 0;
  uint32_t batch = 0;
  std::vector<uint64_t> audit;
  {
    std::lock_guard<std::mutex> lock(mu_);
    StatsUnitMem* unit;
    StoredStatsLease* lease;
    grpc::Status st = FindStatsLease(worker_id, unit_id, token, &unit, &lease);
    if (!st.ok()) return st;
    begin = unit->begin;
    end = unit->end;
    batch = stats_jobs_[unit->job_id].batch;
    audit = ChooseAuditBatches(static_cast<uint64_t>((end - begin) / batch), options_.stats_audit_batches, &rng_);
  }
  const Status verify = VerifyStatsResult(*tables_->delay, begin, end, batch, stats_file, audit, nullptr);

  WriteLock lock(this);
  StatsUnitMem* unit;
  StoredStatsLease* lease;
  grpc::Status st = FindStatsLease(worker_id, unit_id, token, &unit, &lease);
  if (!st.ok()) return st;
  if (LeaseClosed(lease->state)) return StaleLeaseToken("was", lease->state);
  const int64_t now = clock_->NowMs();
  if (unit->state == StoredUnitState::kFinished) {
    return DuplicateResultLocked(worker_id, unit_id, token, lease, disposition);
  }

  if (!verify.ok()) return RejectResultKindLocked<StatsKind>(worker_id, unit_id, token, verify, now, unit, lease);

  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), "complete");
  StatsUnitMem uc;
  std::string superseded;
  StoredWorker wc;
  st = WriteAcceptedKindLocked<StatsKind>(worker_id, token, seconds, *unit, *lease, &uc, &superseded, &wc);
  if (!st.ok()) return st;
  RETURN_IF_DB_ERROR(store_->FinishStatsUnit(uc, stats_file, engine.substr(0, 200), seconds), "complete");
  RETURN_IF_DB_ERROR(store_->AddStatsThroughput(now, end - begin), "complete");  // the dashboard's chart
  RETURN_IF_DB_ERROR(txn->Commit(), "complete");
  ApplyAcceptedKindLocked<StatsKind>(worker_id, uc, superseded, wc, unit, lease);
  *disposition = Disposition::kAccepted;
  spdlog::info("worker={} stats unit={} lease={} finished: {} batches, {} audited{}", worker_id, unit_id,
               ShortToken(token), ToDecimal((end - begin) / batch), audit.size(),
               lease->deadline_ms < now ? " (late result of an expired lease)" : "");
  return grpc::Status::OK;
}

}  // namespace collatz::server
