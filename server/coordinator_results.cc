// Results of search units: Complete (verification, the server's re-run that settles an
// audit, storing and merging), and what a wrong result does to its worker and its units.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/cpu_engine.h"
#include "core/result_verifier.h"
#include "server/coordinator.h"
#include "server/coordinator_util.h"

namespace collatz::server {

namespace {

using grpc::StatusCode;

}  // namespace

grpc::Status Coordinator::Complete(int64_t worker_id, int64_t unit_id, const std::string& token,
                                   const UnitResult& result, double seconds, const std::string& engine,
                                   Disposition* disposition) {
  RefereeRun referee;  // set when an audit mismatch asks for the server's re-run
  grpc::Status st = CompleteImpl(worker_id, unit_id, token, result, seconds, engine, nullptr, &referee, disposition);
  if (st.ok() && referee.tables != nullptr) {
    // The third opinion, on the server's CPU and without the lock (bounded by
    // referee_max_numbers); CompleteImpl checks the lease and the unit again. A retry of the
    // same call meanwhile is told to come back rather than start a second re-run.
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!referee_tokens_.insert(token).second) {
        st = grpc::Status(grpc::StatusCode::UNAVAILABLE,
                          "the server is re-running unit " + std::to_string(unit_id) + " to settle its audit; retry");
        CountResult(st, disposition);
        return st;
      }
    }
    CpuEngineOptions eo;
    eo.threads = std::max(1, options_.referee_threads);
    // The tables of the unit's width; a width built without the CPU's offset table gets it here.
    CpuEngine referee_engine(SearchTables::WithCpuOffsets(referee.tables), eo);
    UnitResult truth;
    const Status es = referee_engine.Search(referee.spec, &truth);
    if (!es.ok()) spdlog::error("unit={} server re-run for an audit failed: {}", unit_id, es.ToString());
    st = CompleteImpl(worker_id, unit_id, token, result, seconds, engine, es.ok() ? &truth : nullptr,
                      nullptr, disposition);
    std::lock_guard<std::mutex> lock(mu_);
    referee_tokens_.erase(token);
  }
  CountResult(st, disposition);
  return st;
}

grpc::Status Coordinator::CompleteStats(int64_t worker_id, int64_t unit_id, const std::string& token,
                                        const std::string& stats_file, double seconds, const std::string& engine,
                                        Disposition* disposition) {
  const grpc::Status st = CompleteStatsImpl(worker_id, unit_id, token, stats_file, seconds, engine, disposition);
  CountResult(st, disposition);
  return st;
}

void Coordinator::CountResult(const grpc::Status& st, const Disposition* disposition) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!st.ok()) {
    ++counters_.results_refused;
    return;
  }
  switch (*disposition) {
    case Disposition::kAccepted: ++counters_.results_accepted; break;
    case Disposition::kDuplicate: ++counters_.results_duplicate; break;
    case Disposition::kAuditMatched: ++counters_.results_audit_matched; break;
    case Disposition::kAuditMismatch: ++counters_.results_audit_mismatched; break;
  }
}

grpc::Status Coordinator::RevokeFinished(UnitMem* u, int64_t now, const std::string& why) {
  RETURN_IF_DB_ERROR(store_->DeleteUnitResult(u->id), "revoking unit");
  UnitMem copy = *u;
  copy.state = StoredUnitState::kPending;
  copy.finished_by = 0;
  copy.finished_token.clear();
  copy.audit = AuditState::kNone;
  copy.counted_seq = 0;
  copy.checked_by = 0;
  RETURN_IF_DB_ERROR(store_->UpdateUnit(copy), "revoking unit");
  RETURN_IF_DB_ERROR(store_->InsertAttempt(u->id, u->finished_by, u->finished_token, "revoked", why.substr(0, 500), now),
                     "revoking unit");
  return grpc::Status::OK;
}

grpc::Status Coordinator::RevokeResultsLocked(const std::vector<int64_t>& unit_ids, const std::string& why,
                                              int64_t now, const std::vector<std::string>& leases_too) {
  // The results themselves, then everything whose record table, floor or holes came from a
  // merge holding one of them below it (transitively: a dependent was counted after the
  // lease that depended, so its own dependents depend on the first result too).
  std::vector<RevokedResult> revoked;
  std::set<int64_t> ids(unit_ids.begin(), unit_ids.end());
  for (int64_t id : ids) {
    UnitMem& u = units_[id];
    if (u.state != StoredUnitState::kFinished) continue;
    revoked.push_back({u.end, u.counted_seq, id});
  }
  std::vector<std::pair<int64_t, std::string>> revoke;  // unit, why
  for (const RevokedResult& r : revoked) revoke.emplace_back(r.unit_id, why + (r.counted_seq != 0 ? " (it had counted)" : ""));
  for (const auto& [id, on] : DependentUnits(revoked, ids)) {
    revoke.emplace_back(id, "its record table, floor or holes came from the revoked result of unit " +
                                std::to_string(on) + " (" + why + ")");
  }
  for (const auto& [id, reason] : revoke) {
    grpc::Status st = RevokeFinished(&units_[id], now, reason);
    if (!st.ok()) return st;
  }
  std::vector<std::string> active = leases_too;
  for (const auto& [token, on] : DependentLeases(revoked)) active.push_back(token);
  std::sort(active.begin(), active.end());
  active.erase(std::unique(active.begin(), active.end()), active.end());
  for (const std::string& token : active) {
    StoredLease& l = leases_[token];
    if (l.state != LeaseState::kActive) continue;
    StoredLease c = l;
    c.state = LeaseState::kRevoked;
    RETURN_IF_DB_ERROR(store_->UpdateLease(c), "revoking leases");
    if (l.purpose == LeasePurpose::kSearch && units_[l.unit_id].search_token == token) {
      UnitMem uc = units_[l.unit_id];
      uc.state = StoredUnitState::kPending;
      RETURN_IF_DB_ERROR(store_->UpdateUnit(uc), "revoking leases");
    }
  }
  // Memory (the caller commits next).
  for (const auto& [id, reason] : revoke) {
    UnitMem& u = units_[id];
    finished_.erase(id);
    audit_queue_.erase(id);
    disputes_.erase(id);
    if (!u.audit_token.empty()) {
      leases_[u.audit_token].state = LeaseState::kRevoked;
      u.audit_token.clear();
    }
    u.finished_by = 0;
    u.finished_token.clear();
    u.audit = AuditState::kNone;
    u.counted_seq = 0;
    u.checked_by = 0;
    Requeue(&u);
  }
  for (const std::string& token : active) {
    StoredLease& l = leases_[token];
    if (l.state != LeaseState::kActive) continue;
    l.state = LeaseState::kRevoked;
    UnitMem& u = units_[l.unit_id];
    if (l.purpose == LeasePurpose::kSearch && u.search_token == token) Requeue(&u);
    if (l.purpose == LeasePurpose::kAudit && u.audit_token == token) {
      u.audit_token.clear();
      if (u.state == StoredUnitState::kFinished && u.audit == AuditState::kWanted) audit_queue_.insert(u.id);
    }
  }
  if (!revoke.empty() || !active.empty()) Remerge();  // the next merge is checked afresh
  if (revoke.size() > revoked.size()) {
    spdlog::warn("{} results revoked ({}), {} more that depended on them, {} leases", revoked.size(), why,
                 revoke.size() - revoked.size(), active.size());
  }
  return grpc::Status::OK;
}

grpc::Status Coordinator::FlagWorker(int64_t worker_id, const std::string& reason, int64_t now) {
  // Called inside an open transaction; memory is changed only by the caller after commit
  // via the returned plan. For simplicity the plan is applied here after the DB writes
  // succeed, and the caller commits right after (a failed commit is reported as INTERNAL
  // and the process state is reloaded on restart).
  WorkerMem& w = workers_[worker_id];
  if (w.flagged) return grpc::Status::OK;
  StoredWorker copy = w;
  copy.flagged = true;
  copy.flag_reason = reason;
  RETURN_IF_DB_ERROR(store_->UpdateWorker(copy), "flagging worker");
  const std::vector<std::string> identities = WorkerIdentities(w);
  for (const std::string& identity : identities) {
    RETURN_IF_DB_ERROR(store_->InsertFlaggedIdentity({identity, worker_id, reason.substr(0, 500), now}), "flagging worker");
  }
  RETURN_IF_DB_ERROR(store_->InsertEvent(now, "worker_flagged", "worker " + std::to_string(worker_id) + " (" + w.host +
                                                                    "): " + reason),
                     "flagging worker");
  // Its results that no independent check passed are revoked (with what depended on them);
  // those it passed as a checker are checked again.
  std::vector<int64_t> revoke, recheck;
  for (auto& [id, u] : units_) {
    if (u.state != StoredUnitState::kFinished) continue;
    if (u.finished_by == worker_id && u.audit != AuditState::kPassed) revoke.push_back(id);
    if (u.audit == AuditState::kPassed && u.checked_by == worker_id) recheck.push_back(id);
  }
  std::vector<std::string> active;
  for (const std::string& token : active_tokens_) {
    auto lit = leases_.find(token);
    if (lit != leases_.end() && lit->second.worker_id == worker_id && lit->second.state == LeaseState::kActive) {
      active.push_back(token);
    }
  }
  for (int64_t id : recheck) {
    UnitMem c = units_[id];
    c.audit = AuditState::kWanted;
    c.checked_by = 0;
    RETURN_IF_DB_ERROR(store_->UpdateUnit(c), "flagging worker");
  }
  grpc::Status st = RevokeResultsLocked(revoke, "result of flagged worker " + std::to_string(worker_id), now, active);
  if (!st.ok()) return st;
  grpc::Status sst = FlagWorkerStats(worker_id, now);
  if (!sst.ok()) return sst;
  // Memory (the caller commits next).
  w.flagged = true;
  w.flag_reason = reason;
  for (const std::string& identity : identities) flagged_identities_.emplace(identity, FlaggedIdentity{identity, worker_id, reason, now});
  for (int64_t id : recheck) {
    UnitMem& u = units_[id];
    if (u.state != StoredUnitState::kFinished) continue;  // revoked meanwhile as a dependent
    u.audit = AuditState::kWanted;
    u.checked_by = 0;
    if (u.audit_token.empty()) audit_queue_.insert(id);
  }
  Remerge();
  spdlog::warn("worker={} flagged: {}; {} unchecked results revoked, {} it checked to be checked again, {} leases",
               worker_id, reason, revoke.size(), recheck.size(), active.size());
  // Other workers registered from the same GPU or host go with it.
  const std::string inherited = SharedIdentityFlagPrefix(worker_id) + reason;
  std::vector<int64_t> same;
  for (const auto& [id, other] : workers_) {
    if (!other.flagged && !InheritedFlag(other).empty()) same.push_back(id);
  }
  for (int64_t id : same) {
    grpc::Status fst = FlagWorker(id, inherited, now);
    if (!fst.ok()) return fst;
  }
  return grpc::Status::OK;
}

grpc::Status Coordinator::CompleteImpl(int64_t worker_id, int64_t unit_id, const std::string& token,
                                       const UnitResult& result, double seconds, const std::string& engine,
                                       const UnitResult* truth, RefereeRun* referee, Disposition* disposition) {
  WriteLock lock(this);
  UnitMem* unit;
  StoredLease* lease;
  grpc::Status st = FindLease(worker_id, unit_id, token, &unit, &lease);
  if (!st.ok()) return st;
  if (LeaseClosed(lease->state)) return StaleLeaseToken("was", lease->state);
  if (!std::isfinite(seconds) || seconds < 0) return grpc::Status(StatusCode::INVALID_ARGUMENT, "seconds must be >= 0");
  const int64_t now = clock_->NowMs();
  const UnitSpec spec = SpecFor(*unit, lease->floor, lease->open_holes);

  if (lease->purpose == LeasePurpose::kAudit) {
    return CompleteAuditLocked(worker_id, unit, lease, spec, result, truth, referee, now, disposition);
  }

  if (unit->state == StoredUnitState::kFinished) {
    return DuplicateResultLocked(worker_id, unit_id, token, lease, disposition);
  }

  // With the unit's own width: a result searched with another sieve has other candidates.
  Status verify = VerifyUnitResult(*TablesOf(*unit), spec, result);
  if (!verify.ok()) return RejectResultKindLocked<SearchKind>(worker_id, unit_id, token, verify, now, unit, lease);

  // Accept: the unit is finished by this lease; any other active lease of it is superseded.
  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), "complete");
  UnitMem uc;
  std::string superseded;
  StoredWorker wc;
  st = WriteAcceptedKindLocked<SearchKind>(worker_id, token, seconds, *unit, *lease, &uc, &superseded, &wc);
  if (!st.ok()) return st;
  uc.audit = WantsCheck(workers_[worker_id], unit_id, token) ? AuditState::kWanted : AuditState::kNone;
  if (uc.audit == AuditState::kNone) CountResultIn(&uc);  // counts now; a checked one once it passes
  RETURN_IF_DB_ERROR(store_->UpdateUnit(uc), "complete");
  UnitProvenance prov;
  prov.floor = lease->floor;
  prov.open_holes = lease->open_holes.size();
  prov.engine = engine.substr(0, 200);
  prov.seconds = seconds;
  RETURN_IF_DB_ERROR(store_->StoreUnitResult(unit_id, result, prov), "complete");
  RETURN_IF_DB_ERROR(store_->AddThroughput(now, Size(*unit)), "complete");  // the dashboard's chart
  FinishedUnit fu;
  fu.begin = unit->begin;
  fu.end = unit->end;
  fu.kinds = unit->kinds;
  fu.result = result;
  finished_[unit_id] = fu;
  Status mst = txn->Commit();
  if (!mst.ok()) {
    finished_.erase(unit_id);
    return FromCore(mst, "complete");
  }
  Remerge();
  ApplyAcceptedKindLocked<SearchKind>(worker_id, uc, superseded, wc, unit, lease);
  active_tokens_.erase(token);  // now rather than at the next scan: those are rare (next_deadline_ms_)
  if (!superseded.empty()) active_tokens_.erase(superseded);
  if (unit->audit == AuditState::kWanted) audit_queue_.insert(unit_id);
  recent_.emplace_back(now, Size(*unit));
  while (!recent_.empty() && recent_.front().first < now - 600'000) recent_.pop_front();
  *disposition = Disposition::kAccepted;
  spdlog::info("worker={} unit={} lease={} finished: {} ladder, {} class minima, {} candidates{}{}", worker_id, unit_id,
               ShortToken(token), result.ladder.size(), result.class_minima.size(), result.candidates,
               lease->deadline_ms < now ? " (late result of an expired lease)" : "",
               unit->audit == AuditState::kWanted ? ", audit wanted" : "");
  return grpc::Status::OK;
}

}  // namespace collatz::server
