// Audits: a finished unit re-run by another worker, and the settling of a mismatch so that
// only the worker shown wrong is flagged (docs/PROTOCOL.md, "Lying workers and audits").
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "server/audit_settlement.h"
#include "server/coordinator.h"
#include "server/coordinator_util.h"
#include "core/result_verifier.h"

namespace collatz::server {

namespace {

using grpc::StatusCode;

template <class WorkerIds>
std::string Names(const WorkerIds& workers) {
  std::string out;
  for (int64_t w : workers) out += (out.empty() ? "" : ", ") + std::to_string(w);
  return out;
}

}  // namespace

std::vector<std::string> Coordinator::WorkerIdentities(const StoredWorker& w) {
  std::vector<std::string> out;
  for (const auto& [model, uuid] : w.gpus) {
    if (!uuid.empty()) out.push_back("gpu:" + uuid);
  }
  // Without GPUs: the installation when the worker names one (several workers may share a
  // host), else the host.
  if (out.empty()) out.push_back(w.instance_id.empty() ? "host:" + w.host : "worker:" + w.host + "/" + w.instance_id);
  // A stored token (never the shared one: flagging one shared-token worker would flag all).
  if (!w.token_name.empty()) out.push_back("token:" + w.token_name);
  return out;
}

std::string Coordinator::InheritedFlag(const StoredWorker& w) const {
  for (const std::string& identity : WorkerIdentities(w)) {
    auto it = flagged_identities_.find(identity);
    if (it != flagged_identities_.end()) {
      return identity + " was flagged with worker " + std::to_string(it->second.worker_id) + ": " + it->second.reason;
    }
  }
  return "";
}

grpc::Status Coordinator::Unflag(int64_t worker_id, UnflagOutcome* out) {
  WriteLock lock(this);
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) {
    return grpc::Status(StatusCode::NOT_FOUND, "no worker " + std::to_string(worker_id));
  }
  const WorkerMem& w = it->second;
  if (!w.flagged) {
    return grpc::Status(StatusCode::FAILED_PRECONDITION, "worker " + std::to_string(worker_id) + " is not flagged");
  }
  // An identity it shares with another flagged worker keeps it flagged: that one first.
  for (const std::string& identity : WorkerIdentities(w)) {
    auto f = flagged_identities_.find(identity);
    if (f != flagged_identities_.end() && f->second.worker_id != worker_id) {
      return grpc::Status(StatusCode::FAILED_PRECONDITION,
                          identity + " was flagged with worker " + std::to_string(f->second.worker_id) +
                              ": unflag worker " + std::to_string(f->second.worker_id) + " first");
    }
  }
  // Workers whose flag came only from this one, to a fixed point: flagged by inheritance
  // (registered from a flagged identity: their reason is InheritedFlag's; or flagged with a
  // cleared worker for sharing one: "shares an identity with worker W, flagged: ...", whose
  // own identities that flag added go too), with every flagged identity they hold owned by a
  // cleared worker or themselves.
  std::vector<int64_t> cleared = {worker_id};
  std::set<int64_t> clearing = {worker_id};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [id, other] : workers_) {
      if (clearing.count(id) != 0 || !other.flagged) continue;
      bool inherited = other.flag_reason == InheritedFlag(other);
      for (int64_t c : clearing) inherited = inherited || other.flag_reason.rfind(SharedIdentityFlagPrefix(c), 0) == 0;
      if (!inherited) continue;
      bool through_cleared = false, elsewhere = false;
      for (const std::string& identity : WorkerIdentities(other)) {
        auto f = flagged_identities_.find(identity);
        if (f == flagged_identities_.end() || f->second.worker_id == id) continue;
        (clearing.count(f->second.worker_id) != 0 ? through_cleared : elsewhere) = true;
      }
      if (through_cleared && !elsewhere) {
        cleared.push_back(id);
        clearing.insert(id);
        grew = true;
      }
    }
  }
  std::set<std::string> own;  // the identities of the cleared workers' flags
  for (const auto& [identity, f] : flagged_identities_) {
    if (clearing.count(f.worker_id) != 0) own.insert(identity);
  }

  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), "unflag");
  for (int64_t id : cleared) {
    RETURN_IF_DB_ERROR(store_->DeleteFlaggedIdentitiesOf(id), "unflag");
    StoredWorker copy = workers_[id];
    copy.flagged = false;
    copy.flag_reason.clear();
    RETURN_IF_DB_ERROR(store_->UpdateWorker(copy), "unflag");
  }
  const std::string ids = Names(cleared);
  RETURN_IF_DB_ERROR(store_->InsertEvent(clock_->NowMs(), "worker_unflagged",
                                         "worker " + std::to_string(worker_id) + " (" + w.host +
                                             ") unflagged by an operator; workers cleared: " + ids + "; it was: " +
                                             w.flag_reason.substr(0, 300)),
                     "unflag");
  RETURN_IF_DB_ERROR(txn->Commit(), "unflag");

  out->reason = w.flag_reason;
  out->identities = own.size();
  out->cleared = cleared;
  for (const std::string& identity : own) flagged_identities_.erase(identity);
  for (int64_t id : cleared) {
    workers_[id].flagged = false;
    workers_[id].flag_reason.clear();
  }
  spdlog::warn("worker={} unflagged by an operator (was: {}); {} identities cleared; workers cleared: {}", worker_id,
               out->reason, own.size(), ids);
  return grpc::Status::OK;
}

grpc::Status Coordinator::LoadAudits() {
  std::vector<FlaggedIdentity> identities;
  RETURN_IF_DB_ERROR(store_->LoadFlaggedIdentities(&identities), "loading flagged identities");
  for (FlaggedIdentity& f : identities) flagged_identities_[f.identity] = std::move(f);
  std::vector<StoredAudit> open;
  RETURN_IF_DB_ERROR(store_->LoadOpenAudits(&open), "loading open audits");
  for (const StoredAudit& a : open) {
    // Only disputes of a unit's current result: a result revoked since took its disputes along.
    auto it = units_.find(a.unit_id);
    if (it == units_.end() || it->second.state != StoredUnitState::kFinished || it->second.audit != AuditState::kWanted ||
        it->second.finished_token != a.audited_token) {
      continue;
    }
    disputes_[a.unit_id].push_back({a.auditor, a.auditor_result});
  }
  return grpc::Status::OK;
}

bool Coordinator::HasOpinion(const UnitMem& u, int64_t worker_id) const {
  if (u.finished_by == worker_id) return true;
  auto it = disputes_.find(u.id);
  if (it == disputes_.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(), [&](const Dispute& d) { return d.auditor == worker_id; });
}

std::vector<FinishedUnit> Coordinator::MergeInputs() const {
  std::vector<FinishedUnit> units;
  units.reserve(finished_.size());
  for (const auto& [id, f] : finished_) {
    auto it = units_.find(id);
    if (it == units_.end() || it->second.audit != AuditState::kWanted) units.push_back(f);
  }
  return units;
}

grpc::Status Coordinator::CompleteAuditLocked(int64_t worker_id, UnitMem* unit, StoredLease* lease,
                                              const UnitSpec& spec, const UnitResult& result, const UnitResult* truth,
                                              RefereeRun* referee, int64_t now, Disposition* disposition) {
  const int64_t unit_id = unit->id;
  const std::string token = lease->token;
  if (unit->state != StoredUnitState::kFinished || unit->audit != AuditState::kWanted) {
    *disposition = Disposition::kDuplicate;  // audited already, or revoked meanwhile
    return grpc::Status::OK;
  }
  const FinishedUnit stored = finished_[unit_id];
  // stored.result.work_hash_version is the version its row was stored with (1 for results
  // of older binaries); `result` is kWorkHashVersion (Register and FindUsableWorker refuse
  // other workers). operator== compares work hashes only between equal versions: every
  // other field is defined by the mathematics alone and must still agree.
  const bool matched = stored.result == result;
  const Status verify = matched ? Status::Ok() : VerifyUnitResult(*TablesOf(*unit), spec, result);
  grpc::Status st;
  if (!verify.ok()) {
    // The auditor itself reported something false.
    auto txn = store_->Begin();
    RETURN_IF_DB_ERROR(txn->status(), "audit");
    st = FlagWorker(worker_id, "audit of unit " + std::to_string(unit_id) + " failed verification: " + verify.message(), now);
    if (!st.ok()) return st;
    StoredLease lc = *lease;
    lc.state = LeaseState::kRejected;
    RETURN_IF_DB_ERROR(store_->UpdateLease(lc), "audit");
    RETURN_IF_DB_ERROR(txn->Commit(), "audit");
    lease->state = LeaseState::kRejected;
    if (unit->audit_token == token) {
      unit->audit_token.clear();
      if (unit->state == StoredUnitState::kFinished && unit->audit == AuditState::kWanted) audit_queue_.insert(unit_id);
    }
    return grpc::Status(StatusCode::PERMISSION_DENIED, "audit result rejected: " + verify.message() + "; worker " +
                                                           std::to_string(worker_id) + " is flagged");
  }
  if (!matched && truth == nullptr && referee != nullptr && options_.referee_max_numbers > 0 &&
      unit->end - unit->begin <= options_.referee_max_numbers) {
    referee->spec = spec;  // the caller re-runs the unit on the server's CPU and comes back
    // With the record table its search had (a correct table changes no field of the
    // result, only the time; one poisoned since must not make the truth).
    RecordTableAsOf(*unit, TableSeqOf(*unit), &referee->spec);
    referee->tables = TablesOf(*unit);
    return grpc::Status::OK;
  }

  // Who is wrong. Honest engines never disagree, so a worker is wrong when its result
  // differs from the server's re-run, when its entries are refuted by verified entries
  // (WrongByEntries), or when it differs from two other workers that agree.
  const int64_t original = unit->finished_by;
  const std::string text = DescribeUnitResult(result);
  const std::vector<Dispute> earlier = disputes_.count(unit_id) ? disputes_[unit_id] : std::vector<Dispute>();
  bool original_wrong = false;
  std::set<int64_t> wrong;  // auditors, this one included
  std::string how;
  if (matched) {
    for (const Dispute& d : earlier) wrong.insert(d.auditor);
    how = "two workers agree";
  } else {
    const EntryVerdict v = WrongByEntries(spec, stored.result, result);
    original_wrong = v.first_wrong;
    if (v.second_wrong) wrong.insert(worker_id);
    if (truth != nullptr) {
      how = "the server's re-run";
      if (!(stored.result == *truth)) original_wrong = true;
      if (!(result == *truth)) wrong.insert(worker_id);
      const std::string t = DescribeUnitResult(*truth);
      for (const Dispute& d : earlier) {
        if (d.result != t) wrong.insert(d.auditor);
      }
    } else {
      how = v.first_wrong || v.second_wrong ? "verified entries" : "";
      // Seconded by an earlier auditor that is not itself flagged since; a result refuted
      // by the entries is wrong however many workers return it.
      const bool seconded = std::any_of(earlier.begin(), earlier.end(), [&](const Dispute& d) {
        return d.result == text && !workers_[d.auditor].flagged;
      });
      if (v.second_wrong) {
        for (const Dispute& d : earlier) {
          if (d.result == text) wrong.insert(d.auditor);
        }
      } else if (seconded) {
        how = "two auditors agree";
        original_wrong = true;
        for (const Dispute& d : earlier) {
          if (d.result != text) wrong.insert(d.auditor);
        }
      }
    }
  }
  const bool settled = matched || original_wrong || wrong.count(worker_id);
  StoredAudit record;
  record.unit_id = unit_id;
  record.original_worker = original;
  record.auditor = worker_id;
  record.token = token;
  record.audited_token = unit->finished_token;
  record.matched = matched;
  record.detail = matched ? "equal" : "stored " + DescribeUnitResult(stored.result) + " vs audit " + text;
  record.auditor_result = text;
  record.at_ms = now;
  if (!settled) {
    record.verdict = kVerdictOpen;
  } else {
    record.verdict = matched                                    ? "passed"
                     : original_wrong && wrong.count(worker_id) ? "both wrong"
                     : original_wrong                           ? "original wrong"
                                                                : "auditor wrong";
    record.verdict += " (" + how + ")";
  }

  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), "audit");
  RETURN_IF_DB_ERROR(store_->InsertAudit(record), "audit");
  const std::string on = " on unit " + std::to_string(unit_id) + " (" + how + ")";
  for (int64_t w : wrong) {
    st = FlagWorker(w, "audit result differs" + on, now);
    if (!st.ok()) return st;
  }
  if (original_wrong) {
    // Revokes the unit's result (not passed): it is searched again.
    st = FlagWorker(original, "result differs from its audit" + on, now);
    if (!st.ok()) return st;
  }
  StoredLease lc = *lease;
  lc.state = wrong.count(worker_id) ? LeaseState::kRejected : LeaseState::kCompleted;
  RETURN_IF_DB_ERROR(store_->UpdateLease(lc), "audit");
  const bool passed = matched && unit->state == StoredUnitState::kFinished;
  UnitMem uc = *unit;
  if (passed) {
    uc.audit = AuditState::kPassed;
    uc.checked_by = worker_id;
    CountResultIn(&uc);
    RETURN_IF_DB_ERROR(store_->UpdateUnit(uc), "audit");
  }
  // Trust: both sides of an agreement earn it; every side of a disagreement loses it.
  for (int64_t w : {original, worker_id}) {
    if (!(st = CreditCheckLocked(w, matched)).ok()) return st;
  }
  RETURN_IF_DB_ERROR(txn->Commit(), "audit");
  lease->state = lc.state;
  if (unit->audit_token == token) unit->audit_token.clear();
  if (passed) {
    unit->audit = AuditState::kPassed;
    unit->checked_by = uc.checked_by;
    unit->counted_seq = uc.counted_seq;
    disputes_.erase(unit_id);
    audit_queue_.erase(unit_id);
    ++audits_passed_;
    Remerge();
    *disposition = Disposition::kAuditMatched;
    spdlog::info("worker={} unit={} lease={} audit matched (worker {}){}", worker_id, unit_id, ShortToken(token), original,
                 wrong.empty() ? "" : "; earlier auditors flagged: " + Names(wrong));
    return grpc::Status::OK;
  }
  ++audits_failed_;
  *disposition = Disposition::kAuditMismatch;
  if (unit->state == StoredUnitState::kFinished && unit->audit == AuditState::kWanted) {
    // The result stands (the auditor was wrong) or waits for a third opinion; either way
    // another worker audits it.
    if (!settled) {
      disputes_[unit_id].push_back({worker_id, text});
      Remerge();  // left out of the merge while disputed
    }
    audit_queue_.insert(unit_id);
  }
  spdlog::warn("worker={} unit={} lease={} audit MISMATCH with worker {}: {}; flagged: {}", worker_id, unit_id,
               ShortToken(token), original, record.verdict,
               (original_wrong ? std::to_string(original) + (wrong.empty() ? "" : ", ") : "") + Names(wrong));
  return grpc::Status::OK;
}

}  // namespace collatz::server
