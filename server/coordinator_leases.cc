// Leases of search units: granting (with the unit's spec), heartbeats, releases, failures
// and quarantine, and the expiry of leases whose deadline passed.
#include <spdlog/spdlog.h>

#include "core/unit_spec.h"
#include "core/work_hash.h"
#include "server/coordinator.h"
#include "server/coordinator_util.h"

namespace collatz::server {

namespace {

using grpc::StatusCode;

}  // namespace

bool Coordinator::WantsAudit(int64_t unit_id) const {
  if (options_.audit_fraction <= 0) return false;
  if (options_.audit_fraction >= 1) return true;
  const uint64_t h = Mix64(static_cast<uint64_t>(unit_id) ^ options_.audit_seed);
  return static_cast<double>(h >> 11) / static_cast<double>(uint64_t{1} << 53) < options_.audit_fraction;
}

UnitSpec Coordinator::SpecFor(const UnitMem& u, uint32_t floor, const std::vector<uint32_t>& holes) const {
  UnitSpec spec;
  spec.begin = u.begin;
  spec.end = u.end;
  spec.kinds = u.kinds;
  spec.floor = floor;
  spec.open_holes = holes;
  return spec;
}

void Coordinator::Requeue(UnitMem* u) {
  u->state = StoredUnitState::kPending;
  u->search_token.clear();
  if (!u->quarantined) Enqueue(*u);
}

void Coordinator::Enqueue(const UnitMem& u) {
  if (queue_.insert({-u.priority, u.begin, u.id}).second) ++queued_sizes_[u.end - u.begin];
}

void Coordinator::Dequeue(const UnitMem& u) {
  if (queue_.erase({-u.priority, u.begin, u.id}) == 0) return;
  auto it = queued_sizes_.find(u.end - u.begin);
  if (it != queued_sizes_.end() && --it->second == 0) queued_sizes_.erase(it);
}

Coordinator::UnitMem* Coordinator::FirstQueuedUnitUpTo(u128 max_numbers) {
  if (queue_.empty()) return nullptr;
  if (max_numbers == 0) return &units_[std::get<2>(*queue_.begin())];
  // No walk through a queue of larger units only (a CPU worker polling a GPU campaign).
  if (queued_sizes_.empty() || queued_sizes_.begin()->first > max_numbers) return nullptr;
  for (const QueueKey& key : queue_) {
    UnitMem& u = units_[std::get<2>(key)];
    if (u.end - u.begin <= max_numbers) return &u;
  }
  return nullptr;
}

grpc::Status Coordinator::Lease(int64_t worker_id, bool accepts_stats, u128 max_unit_numbers, LeaseGrant* out) {
  const grpc::Status st = LeaseImpl(worker_id, accepts_stats, max_unit_numbers, out);
  if (st.ok() && out->has_unit) {
    std::lock_guard<std::mutex> lock(mu_);
    ++(out->stats ? counters_.leases_stats : out->purpose == LeasePurpose::kAudit ? counters_.leases_audit
                                                                                   : counters_.leases_search);
  }
  return st;
}

grpc::Status Coordinator::LeaseImpl(int64_t worker_id, bool accepts_stats, u128 max_unit_numbers, LeaseGrant* out) {
  *out = LeaseGrant();
  WriteLock lock(this);
  WorkerMem* worker;
  grpc::Status wst = FindUsableWorker(worker_id, &worker);
  if (!wst.ok()) return wst;
  if (draining_) return grpc::Status(StatusCode::UNAVAILABLE, "server is shutting down; no new leases");
  // Registered by an older binary (or before a restart with other widths).
  wst = RefuseOneWidthWorker(worker->unit_sieve_bits, worker->sieve_bits, "worker " + std::to_string(worker_id));
  if (!wst.ok()) return wst;
  const int64_t now = clock_->NowMs();
  worker->last_seen_ms = now;
  worker->max_unit_numbers = max_unit_numbers;
  int expired = 0;
  grpc::Status est = ExpireLocked(now, &expired);
  if (!est.ok()) return est;
  // A merge at most merge_interval_ms old: a stale floor is lower and stale holes are
  // more, so an older merge costs work, never exactness.
  RefreshMergedLocked(false);
  if (!(est = CheckAgainstPublishedLocked(now)).ok()) return est;
  if (worker->flagged) return FindUsableWorker(worker_id, &worker);  // by the published check

  // An audit of another worker's unit first: audits are few and keep workers honest.
  UnitMem* unit = nullptr;
  LeasePurpose purpose = LeasePurpose::kSearch;
  UnitSpec spec;
  int64_t table_seq = merged_seq_;  // what the spec comes from (StoredLease::table_seq)
  for (int64_t id : audit_queue_) {
    UnitMem& u = units_[id];
    // Never the audited worker, an earlier checker of this result, or one sharing a host,
    // GPU or token with them.
    if (!IndependentChecker(u, worker_id)) continue;
    if (max_unit_numbers != 0 && u.end - u.begin > max_unit_numbers) continue;
    auto lit = leases_.find(u.finished_token);
    if (lit == leases_.end()) continue;
    unit = &u;
    purpose = LeasePurpose::kAudit;
    // The check repeats the unit exactly as first searched, its record table included: a
    // table poisoned since cannot make the check agree with a wrong result, and when a
    // result the table held is revoked, the check goes with the unit (table_seq).
    spec = SpecFor(u, lit->second.floor, lit->second.open_holes);
    table_seq = lit->second.table_seq;
    RecordTableAsOf(u, table_seq, &spec);
    break;
  }
  if (unit == nullptr && accepts_stats) {
    // A stats unit when its priority is at least the best search unit's: stats units
    // are short and someone waits for the file.
    const QueueKey* head = StatsQueueHead();
    if (head != nullptr && (queue_.empty() || std::get<0>(*head) <= std::get<0>(*queue_.begin()))) {
      return LeaseStatsLocked(worker_id, now, out);
    }
  }
  UnitMem* queued = unit == nullptr ? FirstQueuedUnitUpTo(max_unit_numbers) : nullptr;
  if (queued != nullptr) {
    unit = queued;
    // The same spec `collatzctl run` gives this unit (core/unit_spec.h): the floor and holes
    // from every known point below it and the published records, members found from them
    // closing more holes (one search shared by consecutive leases: core/class_member_cache.h).
    UnitSpecNotes notes;
    const Status made = MakeUnitSpec(merged_, unit->begin, unit->end, unit->kinds, &member_cache_, &spec, &notes);
    if (!made.ok()) return grpc::Status(StatusCode::INTERNAL, "lease of unit " + std::to_string(unit->id) + ": " + made.ToString());
    if (!notes.member_search_error.empty()) {
      spdlog::warn("lease of unit {}: holes left open: {}", unit->id, notes.member_search_error);
    }
  }
  if (unit == nullptr) return grpc::Status::OK;  // no work now

  StoredLease lease;
  lease.token = NewToken();
  lease.unit_id = unit->id;
  lease.worker_id = worker_id;
  lease.purpose = purpose;
  lease.floor = spec.floor;
  lease.open_holes = spec.open_holes;
  lease.issued_ms = now;
  lease.deadline_ms = now + options_.lease_duration_ms;
  lease.table_seq = table_seq;
  StoredUnit updated = *unit;
  if (purpose == LeasePurpose::kSearch) updated.state = StoredUnitState::kLeased;
  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), "lease");
  RETURN_IF_DB_ERROR(store_->InsertLease(lease), "lease");
  if (purpose == LeasePurpose::kSearch) RETURN_IF_DB_ERROR(store_->UpdateUnit(updated), "lease");
  RETURN_IF_DB_ERROR(txn->Commit(), "lease");

  if (purpose == LeasePurpose::kSearch) {
    Dequeue(*unit);
    unit->state = StoredUnitState::kLeased;
    unit->search_token = lease.token;
  } else {
    audit_queue_.erase(unit->id);
    unit->audit_token = lease.token;
  }
  leases_[lease.token] = lease;
  active_tokens_.insert(lease.token);
  next_deadline_ms_ = std::min(next_deadline_ms_, lease.deadline_ms);

  out->has_unit = true;
  out->unit_id = unit->id;
  out->spec = std::move(spec);
  out->sieve_bits = UnitBits(*unit);
  out->token = lease.token;
  out->deadline_ms = lease.deadline_ms;
  out->purpose = purpose;
  spdlog::info("worker={} unit={} lease={} {}: [{}, {}) floor {} holes {} sieve {} bits", worker_id, unit->id,
               ShortToken(lease.token), purpose == LeasePurpose::kAudit ? "audit" : "search", ToDecimal(unit->begin),
               ToDecimal(unit->end), lease.floor, lease.open_holes.size(), out->sieve_bits);
  return grpc::Status::OK;
}

grpc::Status Coordinator::FindLease(int64_t worker_id, int64_t unit_id, const std::string& token, UnitMem** unit,
                                    StoredLease** lease) {
  auto uit = units_.find(unit_id);
  if (uit == units_.end()) return grpc::Status(StatusCode::NOT_FOUND, "unknown unit " + std::to_string(unit_id));
  auto lit = leases_.find(token);
  if (lit == leases_.end() || lit->second.unit_id != unit_id) {
    return grpc::Status(StatusCode::FAILED_PRECONDITION, "unknown or stale lease token for unit " + std::to_string(unit_id));
  }
  if (lit->second.worker_id != worker_id) {
    return grpc::Status(StatusCode::PERMISSION_DENIED, "the lease of unit " + std::to_string(unit_id) + " belongs to another worker");
  }
  WorkerMem* worker;
  grpc::Status st = FindUsableWorker(worker_id, &worker);
  if (!st.ok()) return st;
  worker->last_seen_ms = clock_->NowMs();
  *unit = &uit->second;
  *lease = &lit->second;
  return grpc::Status::OK;
}

grpc::Status Coordinator::FindUsableWorker(int64_t worker_id, WorkerMem** worker) {
  auto wit = workers_.find(worker_id);
  if (wit == workers_.end()) return grpc::Status(StatusCode::NOT_FOUND, "unknown worker " + std::to_string(worker_id));
  if (wit->second.flagged) {
    return grpc::Status(StatusCode::PERMISSION_DENIED, "worker " + std::to_string(worker_id) + " is flagged: " + wit->second.flag_reason);
  }
  if (wit->second.work_hash_version != kWorkHashVersion) {
    // Registered by an older binary before the server was upgraded (schema v4 marks those
    // version 1): its results would carry a hash of the old version under the new one.
    return grpc::Status(StatusCode::FAILED_PRECONDITION,
                        "worker " + std::to_string(worker_id) + " registered with work hash version " +
                            std::to_string(wit->second.work_hash_version) + ", the server computes version " +
                            std::to_string(kWorkHashVersion) + ": upgrade the worker");
  }
  *worker = &wit->second;
  return grpc::Status::OK;
}


grpc::Status Coordinator::RecordFailure(UnitMem* u, int64_t worker_id, const std::string& token,
                                        const std::string& kind, const std::string& error, int64_t now) {
  if (CountFailure(u, options_.max_failures, kind, error)) {
    spdlog::warn("unit={} lease={} quarantined after {} failures (last: {})", u->id, ShortToken(token), u->failures,
                 u->last_error);
    RETURN_IF_DB_ERROR(store_->InsertEvent(now, "unit_quarantined", "unit " + std::to_string(u->id) + " [" +
                                               ToDecimal(u->begin) + ", " + ToDecimal(u->end) + "): " + u->last_error),
                       "recording attempt");
  }
  RETURN_IF_DB_ERROR(store_->InsertAttempt(u->id, worker_id, token, kind, error, now), "recording attempt");
  return grpc::Status::OK;
}

grpc::Status Coordinator::ExpireLocked(int64_t now, int* expired) {
  int search = 0, stats = 0;
  grpc::Status st = ExpireSearchLocked(now, &search);
  if (st.ok()) st = ExpireStatsLocked(now, &stats);
  *expired = search + stats;
  counters_.leases_expired += static_cast<uint64_t>(*expired);
  return st;
}

// What differs between the kinds in the lifecycle below.
struct Coordinator::SearchKind {
  using Stored = StoredUnit;  // what of a unit the store holds
  static constexpr const char* kUnit = "unit";  // in log lines
  static constexpr const char* kResult = "result";  // in answers
  static constexpr const char* kExpiring = "expiring leases";
  static auto& Units(Coordinator* c) { return c->units_; }
  static auto& Leases(Coordinator* c) { return c->leases_; }
  static std::string& Token(UnitMem& u) { return u.search_token; }  // the active search lease
  static const std::string& Token(const UnitMem& u) { return u.search_token; }
  static auto& ActiveTokens(Coordinator* c) { return c->active_tokens_; }
  static int64_t& NextDeadline(Coordinator* c) { return c->next_deadline_ms_; }
  static grpc::Status Find(Coordinator* c, int64_t worker_id, int64_t unit_id, const std::string& token, UnitMem** unit,
                           StoredLease** lease) {
    return c->FindLease(worker_id, unit_id, token, unit, lease);
  }
  static Status UpdateLease(Coordinator* c, const StoredLease& l) { return c->store_->UpdateLease(l); }
  static Status UpdateUnit(Coordinator* c, const UnitMem& u) { return c->store_->UpdateUnit(u); }
  static grpc::Status RecordFailure(Coordinator* c, UnitMem* u, int64_t worker_id, const std::string& token,
                                    const std::string& kind, const std::string& error, int64_t now) {
    return c->RecordFailure(u, worker_id, token, kind, error, now);
  }
  // Whether the lease holds the unit (an audit lease does not).
  static bool Owns(const StoredLease& l, const UnitMem& u, const std::string& token) {
    return l.purpose == LeasePurpose::kSearch && u.search_token == token;
  }
  static void Requeue(Coordinator* c, UnitMem* u) { c->Requeue(u); }
  // A lease that ended without holding the unit: an audit lease gives its audit back.
  static void EndedWithoutUnit(Coordinator* c, const StoredLease& l, UnitMem* u, const std::string& token) {
    if (l.purpose == LeasePurpose::kAudit && u->audit_token == token) {
      u->audit_token.clear();
      if (u->state == StoredUnitState::kFinished && u->audit == AuditState::kWanted) c->audit_queue_.insert(u->id);
    }
  }
  static void Expired(Coordinator*, const std::string&) {}  // DueLeases drops the token at the next sweep
  // A heartbeat past the deadline expires what is due now, as a sweep would have.
  static grpc::Status ExpireDue(Coordinator* c, int64_t now) {
    int expired = 0;
    return c->ExpireLocked(now, &expired);
  }
  static void Heartbeat(int64_t worker_id, int64_t unit_id, const std::string& token, uint64_t numbers_done) {
    spdlog::debug("worker={} unit={} lease={} heartbeat: {} numbers done", worker_id, unit_id, ShortToken(token),
                  numbers_done);
  }
  // Whether the holder of an ended lease should stop: its unit (or audit) needs it no more.
  static bool StopAfterEnd(const StoredLease& l, const UnitMem& u) {
    return l.purpose == LeasePurpose::kSearch ? u.state == StoredUnitState::kFinished : u.audit != AuditState::kWanted;
  }
};

struct Coordinator::StatsKind {
  using Stored = StoredStatsUnit;
  static constexpr const char* kUnit = "stats unit";
  static constexpr const char* kResult = "stats result";
  static constexpr const char* kExpiring = "expiring stats leases";
  static auto& Units(Coordinator* c) { return c->stats_units_; }
  static auto& Leases(Coordinator* c) { return c->stats_leases_; }
  static std::string& Token(StatsUnitMem& u) { return u.token; }
  static const std::string& Token(const StatsUnitMem& u) { return u.token; }
  static auto& ActiveTokens(Coordinator* c) { return c->stats_active_tokens_; }
  static int64_t& NextDeadline(Coordinator* c) { return c->next_stats_deadline_ms_; }
  static grpc::Status Find(Coordinator* c, int64_t worker_id, int64_t unit_id, const std::string& token,
                           StatsUnitMem** unit, StoredStatsLease** lease) {
    return c->FindStatsLease(worker_id, unit_id, token, unit, lease);
  }
  static Status UpdateLease(Coordinator* c, const StoredStatsLease& l) { return c->store_->UpdateStatsLease(l); }
  static Status UpdateUnit(Coordinator* c, const StatsUnitMem& u) { return c->store_->UpdateStatsUnit(u); }
  static grpc::Status RecordFailure(Coordinator* c, StatsUnitMem* u, int64_t worker_id, const std::string& token,
                                    const std::string& kind, const std::string& error, int64_t now) {
    return c->RecordStatsFailure(u, worker_id, token, kind, error, now);
  }
  static bool Owns(const StoredStatsLease&, const StatsUnitMem& u, const std::string& token) {
    return u.token == token;
  }
  static void Requeue(Coordinator* c, StatsUnitMem* u) { c->RequeueStats(u); }
  static void EndedWithoutUnit(Coordinator*, const StoredStatsLease&, StatsUnitMem*, const std::string&) {}
  static void Expired(Coordinator* c, const std::string& token) { c->stats_active_tokens_.erase(token); }
  static grpc::Status ExpireDue(Coordinator* c, int64_t now) {
    int expired = 0;
    return c->ExpireStatsLocked(now, &expired);
  }
  static void Heartbeat(int64_t, int64_t, const std::string&, uint64_t) {}
  static bool StopAfterEnd(const StoredStatsLease&, const StatsUnitMem& u) {
    return u.state == StoredUnitState::kFinished;
  }
};

template <typename Kind>
grpc::Status Coordinator::ExpireKindLocked(int64_t now, int* expired) {
  *expired = 0;
  auto& leases = Kind::Leases(this);
  auto& units = Kind::Units(this);
  // No deadline is due before NextDeadline (next_deadline_ms_): skip the O(active leases) scan.
  if (now < Kind::NextDeadline(this)) return grpc::Status::OK;
  int64_t next_deadline = INT64_MAX;
  const std::vector<std::string> due = DueLeases(now, leases, &Kind::ActiveTokens(this), &next_deadline);
  if (due.empty()) {
    Kind::NextDeadline(this) = next_deadline;
    return grpc::Status::OK;
  }
  // Write first, then change memory: copies of what will change.
  std::map<int64_t, typename std::decay_t<decltype(units)>::mapped_type> touched;
  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), Kind::kExpiring);
  for (const std::string& token : due) {
    auto l = leases[token];
    l.state = LeaseState::kExpired;
    RETURN_IF_DB_ERROR(Kind::UpdateLease(this, l), Kind::kExpiring);
    auto it = touched.find(l.unit_id);
    if (it == touched.end()) it = touched.emplace(l.unit_id, units[l.unit_id]).first;
    auto& u = it->second;
    if (Kind::Owns(l, u, token)) {
      u.state = StoredUnitState::kPending;
      grpc::Status st =
          Kind::RecordFailure(this, &u, l.worker_id, token, "expired", "lease expired without a result", now);
      if (!st.ok()) return st;
      RETURN_IF_DB_ERROR(Kind::UpdateUnit(this, u), Kind::kExpiring);
    }
  }
  RETURN_IF_DB_ERROR(txn->Commit(), Kind::kExpiring);
  for (const std::string& token : due) {
    auto& l = leases[token];
    l.state = LeaseState::kExpired;
    auto& u = units[l.unit_id];
    if (Kind::Owns(l, u, token)) {
      CopyFailures(touched[l.unit_id], &u);
      Kind::Requeue(this, &u);
    } else {
      Kind::EndedWithoutUnit(this, l, &u, token);
    }
    Kind::Expired(this, token);
    spdlog::warn("worker={} {}={} lease={} expired", l.worker_id, Kind::kUnit, l.unit_id, ShortToken(token));
    ++*expired;
  }
  Kind::NextDeadline(this) = next_deadline;  // after a failure above it stays <= now: the next call scans again
  return grpc::Status::OK;
}

template <typename Kind, typename LeaseT>
grpc::Status Coordinator::DuplicateResultKindLocked(int64_t worker_id, int64_t unit_id, const std::string& token,
                                                    LeaseT* lease, Disposition* disposition) {
  if (lease->state == LeaseState::kActive) {
    LeaseT lc = *lease;
    lc.state = LeaseState::kSuperseded;
    auto txn = store_->Begin();
    RETURN_IF_DB_ERROR(txn->status(), "complete");
    RETURN_IF_DB_ERROR(Kind::UpdateLease(this, lc), "complete");
    RETURN_IF_DB_ERROR(txn->Commit(), "complete");
    lease->state = LeaseState::kSuperseded;
  }
  *disposition = Disposition::kDuplicate;
  spdlog::info("worker={} {}={} lease={} duplicate result ignored", worker_id, Kind::kUnit, unit_id,
               ShortToken(token));
  return grpc::Status::OK;
}

grpc::Status Coordinator::DuplicateResultLocked(int64_t worker_id, int64_t unit_id, const std::string& token,
                                                StoredLease* lease, Disposition* disposition) {
  return DuplicateResultKindLocked<SearchKind>(worker_id, unit_id, token, lease, disposition);
}

grpc::Status Coordinator::DuplicateResultLocked(int64_t worker_id, int64_t unit_id, const std::string& token,
                                                StoredStatsLease* lease, Disposition* disposition) {
  return DuplicateResultKindLocked<StatsKind>(worker_id, unit_id, token, lease, disposition);
}

template <typename Kind, typename UnitT, typename LeaseT>
grpc::Status Coordinator::RejectResultKindLocked(int64_t worker_id, int64_t unit_id, const std::string& token,
                                                 const Status& verify, int64_t now, UnitT* unit, LeaseT* lease) {
  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), "complete");
  // Flagging re-queues the worker's unaudited results and active leases (this one too).
  grpc::Status st = FlagWorker(
      worker_id, std::string(Kind::kUnit) + " " + std::to_string(unit_id) + " failed verification: " + verify.message(),
      now);
  if (!st.ok()) return st;
  LeaseT lc = *lease;
  lc.state = LeaseState::kRejected;
  RETURN_IF_DB_ERROR(Kind::UpdateLease(this, lc), "complete");
  UnitT uc = *unit;
  const bool owns = Kind::Owns(*lease, uc, token);  // no more, once flagging re-queued it
  if (owns) uc.state = StoredUnitState::kPending;
  st = Kind::RecordFailure(this, &uc, worker_id, token, "rejected", verify.message().substr(0, 500), now);
  if (!st.ok()) return st;
  RETURN_IF_DB_ERROR(Kind::UpdateUnit(this, uc), "complete");
  RETURN_IF_DB_ERROR(txn->Commit(), "complete");
  lease->state = LeaseState::kRejected;
  unit->failures = uc.failures;
  unit->last_error = uc.last_error;
  if (owns) Kind::Requeue(this, unit);
  if (uc.quarantined && !unit->quarantined) {
    unit->quarantined = true;
    Dequeue(*unit);
  }
  spdlog::warn("worker={} {}={} lease={} result REJECTED: {}", worker_id, Kind::kUnit, unit_id, ShortToken(token),
               verify.message());
  return grpc::Status(StatusCode::PERMISSION_DENIED, std::string(Kind::kResult) + " rejected: " + verify.message() +
                                                         "; worker " + std::to_string(worker_id) + " is flagged");
}

template <typename Kind, typename UnitT, typename LeaseT>
grpc::Status Coordinator::WriteAcceptedKindLocked(int64_t worker_id, const std::string& token, double seconds,
                                                  const UnitT& unit, const LeaseT& lease, UnitT* finished,
                                                  std::string* superseded, StoredWorker* credited) {
  *finished = unit;
  finished->state = StoredUnitState::kFinished;
  finished->finished_by = worker_id;
  finished->finished_token = token;
  finished->quarantined = false;
  LeaseT lc = lease;
  lc.state = LeaseState::kCompleted;
  RETURN_IF_DB_ERROR(Kind::UpdateLease(this, lc), "complete");
  superseded->clear();
  const std::string& holder = Kind::Token(unit);
  if (!holder.empty() && holder != token) {
    *superseded = holder;
    auto other = Kind::Leases(this)[holder];
    other.state = LeaseState::kSuperseded;
    RETURN_IF_DB_ERROR(Kind::UpdateLease(this, other), "complete");
  }
  *credited = workers_[worker_id];
  credited->units_finished += 1;
  credited->numbers_finished += Size(unit);
  credited->seconds += seconds;
  RETURN_IF_DB_ERROR(store_->UpdateWorker(*credited), "complete");
  return grpc::Status::OK;
}

template <typename Kind, typename UnitT, typename LeaseT>
void Coordinator::ApplyAcceptedKindLocked(int64_t worker_id, const UnitT& finished, const std::string& superseded,
                                          const StoredWorker& credited, UnitT* unit, LeaseT* lease) {
  if (!superseded.empty()) Kind::Leases(this)[superseded].state = LeaseState::kSuperseded;
  lease->state = LeaseState::kCompleted;
  if (unit->state == StoredUnitState::kPending) Dequeue(*unit);
  static_cast<typename Kind::Stored&>(*unit) = finished;  // the memory-only part stays
  Kind::Token(*unit).clear();
  static_cast<StoredWorker&>(workers_[worker_id]) = credited;
}

// The completion paths (coordinator_results.cc, coordinator_stats.cc) call these.
template grpc::Status Coordinator::RejectResultKindLocked<Coordinator::SearchKind>(int64_t, int64_t,
                                                                                   const std::string&, const Status&,
                                                                                   int64_t, UnitMem*, StoredLease*);
template grpc::Status Coordinator::RejectResultKindLocked<Coordinator::StatsKind>(int64_t, int64_t, const std::string&,
                                                                                  const Status&, int64_t,
                                                                                  StatsUnitMem*, StoredStatsLease*);
template grpc::Status Coordinator::WriteAcceptedKindLocked<Coordinator::SearchKind>(int64_t, const std::string&, double,
                                                                                    const UnitMem&, const StoredLease&,
                                                                                    UnitMem*, std::string*,
                                                                                    StoredWorker*);
template grpc::Status Coordinator::WriteAcceptedKindLocked<Coordinator::StatsKind>(
    int64_t, const std::string&, double, const StatsUnitMem&, const StoredStatsLease&, StatsUnitMem*, std::string*,
    StoredWorker*);
template void Coordinator::ApplyAcceptedKindLocked<Coordinator::SearchKind>(int64_t, const UnitMem&, const std::string&,
                                                                            const StoredWorker&, UnitMem*,
                                                                            StoredLease*);
template void Coordinator::ApplyAcceptedKindLocked<Coordinator::StatsKind>(int64_t, const StatsUnitMem&,
                                                                           const std::string&, const StoredWorker&,
                                                                           StatsUnitMem*, StoredStatsLease*);

grpc::Status Coordinator::ExpireSearchLocked(int64_t now, int* expired) {
  return ExpireKindLocked<SearchKind>(now, expired);
}

grpc::Status Coordinator::ExpireStatsLocked(int64_t now, int* expired) {
  return ExpireKindLocked<StatsKind>(now, expired);
}

template <typename Kind>
grpc::Status Coordinator::HeartbeatLeaseLocked(int64_t worker_id, int64_t unit_id, const std::string& token,
                                               uint64_t numbers_done, int64_t* deadline_ms, bool* stop) {
  typename std::decay_t<decltype(Kind::Units(this))>::mapped_type* unit;
  typename std::decay_t<decltype(Kind::Leases(this))>::mapped_type* lease;
  grpc::Status st = Kind::Find(this, worker_id, unit_id, token, &unit, &lease);
  if (!st.ok()) return st;
  const int64_t now = clock_->NowMs();
  switch (lease->state) {
    case LeaseState::kActive:
      if (now >= lease->deadline_ms) {
        // Past its deadline but not yet swept: expire it now, as a sweep would have.
        if (!(st = Kind::ExpireDue(this, now)).ok()) return st;
        break;
      }
      // Deadlines live in memory between commits; a restart grants a fresh one anyway.
      lease->deadline_ms = now + options_.lease_duration_ms;
      *deadline_ms = lease->deadline_ms;
      Kind::NextDeadline(this) = std::min(Kind::NextDeadline(this), lease->deadline_ms);  // a clock set back: earlier
      *stop = false;
      Kind::Heartbeat(worker_id, unit_id, token, numbers_done);
      return grpc::Status::OK;
    case LeaseState::kReleased:
    case LeaseState::kRevoked:
    case LeaseState::kRejected:
      return StaleLeaseToken("was", lease->state);
    default:
      break;
  }
  // Expired, superseded or completed: the result is still accepted once, unless the unit is done.
  *deadline_ms = lease->deadline_ms;
  *stop = Kind::StopAfterEnd(*lease, *unit);
  return grpc::Status::OK;
}

grpc::Status Coordinator::Heartbeat(int64_t worker_id, int64_t unit_id, const std::string& token,
                                    uint64_t numbers_done, int64_t* deadline_ms, bool* stop) {
  WriteLock lock(this);
  if (stats_leases_.count(token)) {
    return HeartbeatLeaseLocked<StatsKind>(worker_id, unit_id, token, numbers_done, deadline_ms, stop);
  }
  return HeartbeatLeaseLocked<SearchKind>(worker_id, unit_id, token, numbers_done, deadline_ms, stop);
}

int Coordinator::ExpireLeases() {
  WriteLock lock(this);
  int expired = 0;
  grpc::Status st = ExpireLocked(clock_->NowMs(), &expired);
  if (!st.ok()) spdlog::error("expiring leases failed: {}", st.error_message());
  return expired;
}

template <typename Kind>
grpc::Status Coordinator::ReleaseLeaseLocked(int64_t worker_id, int64_t unit_id, const std::string& token, bool failed,
                                             const std::string& reason) {
  typename std::decay_t<decltype(Kind::Units(this))>::mapped_type* unit;
  typename std::decay_t<decltype(Kind::Leases(this))>::mapped_type* lease;
  grpc::Status st = Kind::Find(this, worker_id, unit_id, token, &unit, &lease);
  if (!st.ok()) return st;
  if (lease->state != LeaseState::kActive) return StaleLeaseToken("is", lease->state);
  const int64_t now = clock_->NowMs();
  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), "release");
  auto lc = *lease;
  lc.state = LeaseState::kReleased;
  RETURN_IF_DB_ERROR(Kind::UpdateLease(this, lc), "release");
  auto uc = *unit;
  const bool owns = Kind::Owns(*lease, *unit, token);
  if (owns) {
    uc.state = StoredUnitState::kPending;
    if (failed) {
      st = Kind::RecordFailure(this, &uc, worker_id, token, "released", reason.substr(0, 500), now);
      if (!st.ok()) return st;
    }
    RETURN_IF_DB_ERROR(Kind::UpdateUnit(this, uc), "release");
  }
  RETURN_IF_DB_ERROR(txn->Commit(), "release");
  lease->state = LeaseState::kReleased;
  if (owns) {
    CopyFailures(uc, unit);
    Kind::Requeue(this, unit);
  } else {
    Kind::EndedWithoutUnit(this, *lease, unit, token);
  }
  spdlog::info("worker={} {}={} lease={} released{}{}", worker_id, Kind::kUnit, unit_id, ShortToken(token),
               failed ? " (failed): " : "", failed ? reason : "");
  return grpc::Status::OK;
}

grpc::Status Coordinator::Release(int64_t worker_id, int64_t unit_id, const std::string& token, bool failed,
                                  const std::string& reason) {
  WriteLock lock(this);
  if (stats_leases_.count(token)) return ReleaseLeaseLocked<StatsKind>(worker_id, unit_id, token, failed, reason);
  return ReleaseLeaseLocked<SearchKind>(worker_id, unit_id, token, failed, reason);
}

}  // namespace collatz::server
