#include "server/coordinator.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "core/class_members.h"
#include "core/cpu_engine.h"
#include "core/import_check.h"
#include "core/published_points.h"
#include "core/unit_spec.h"
#include "core/work_hash.h"
#include "server/coordinator_util.h"
#include "core/result_verifier.h"
#include "server/submission_units.h"

namespace collatz::server {

namespace {

using grpc::StatusCode;

std::string Short(const std::string& token) { return ShortToken(token); }

u128 Size(const StoredUnit& u) { return u.end - u.begin; }

}  // namespace

Coordinator::Coordinator(std::unique_ptr<CoordinatorStore> store, std::shared_ptr<const SearchTables> tables,
                         const Clock* clock, CoordinatorOptions options)
    : store_(std::move(store)), tables_(std::move(tables)), clock_(clock), options_(options),
      rng_(std::random_device{}()) {}

grpc::Status Coordinator::Open(std::unique_ptr<CoordinatorStore> store, std::shared_ptr<const SearchTables> tables,
                               const Clock* clock, CoordinatorOptions options, std::unique_ptr<Coordinator>* out) {
  std::unique_ptr<Coordinator> c(new Coordinator(std::move(store), std::move(tables), clock, options));
  grpc::Status st = c->Load();
  if (!st.ok()) return st;
  *out = std::move(c);
  return grpc::Status::OK;
}

grpc::Status Coordinator::Load() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<StoredSubmission> subs;
  RETURN_IF_DB_ERROR(store_->LoadSubmissions(&subs), "loading submissions");
  for (auto& s : subs) submissions_[s.id] = s;
  std::vector<StoredWorker> workers;
  RETURN_IF_DB_ERROR(store_->LoadWorkers(&workers), "loading workers");
  for (auto& w : workers) {
    WorkerMem m;
    static_cast<StoredWorker&>(m) = w;
    workers_[w.id] = m;
  }
  std::vector<StoredUnit> units;
  RETURN_IF_DB_ERROR(store_->LoadUnits(&units), "loading units");
  for (auto& u : units) {
    UnitMem m;
    static_cast<StoredUnit&>(m) = u;
    units_[u.id] = m;
  }
  std::vector<std::pair<int64_t, FinishedUnit>> finished;
  RETURN_IF_DB_ERROR(store_->LoadFinishedUnits(&finished), "loading finished units");
  for (auto& [id, f] : finished) finished_[id] = std::move(f);
  RETURN_IF_DB_ERROR(store_->records().LoadImports(&imports_), "loading imports");
  std::vector<StoredLease> leases;
  RETURN_IF_DB_ERROR(store_->LoadLeases(&leases), "loading leases");
  const int64_t now = clock_->NowMs();
  for (auto& l : leases) {
    if (l.state == LeaseState::kActive) {
      auto it = units_.find(l.unit_id);
      if (it == units_.end()) continue;
      // The worker may still be running: give it a full lease from now.
      l.deadline_ms = now + options_.lease_duration_ms;
      if (l.purpose == LeasePurpose::kSearch) it->second.search_token = l.token;
      else it->second.audit_token = l.token;
    }
    if (l.state == LeaseState::kActive) active_tokens_.insert(l.token);
    leases_[l.token] = l;
  }
  for (auto& [id, u] : units_) {
    if (u.state == StoredUnitState::kLeased && u.search_token.empty()) u.state = StoredUnitState::kPending;
    if (u.state == StoredUnitState::kPending && !u.quarantined) queue_.insert({-u.priority, u.begin, id});
    if (u.state == StoredUnitState::kFinished && u.audit == AuditState::kWanted && u.audit_token.empty()) {
      audit_queue_.insert(id);
    }
    if (u.audit == AuditState::kPassed) ++audits_passed_;
  }
  grpc::Status sst = LoadStats();
  if (!sst.ok()) return sst;
  if (!(sst = LoadAudits()).ok()) return sst;
  Remerge();
  RefreshMergedLocked(true);
  spdlog::info("coordinator loaded: {} submissions, {} units ({} queued), {} workers, {} leases, {} imports, "
               "covered prefix {}",
               submissions_.size(), units_.size(), queue_.size(), workers_.size(), leases_.size(), imports_.size(),
               ToDecimal(merged_.covered_prefix));
  return grpc::Status::OK;
}

void Coordinator::Remerge() { merged_dirty_ = true; }

// Group commit: a request waits until the batch holding its writes is committed. The
// batch is committed when every request in flight has written (or after 2 ms), so one
// fsync covers all of them.
void Coordinator::MakeDurable(std::unique_lock<std::mutex>& lock, uint64_t epoch) {
  const auto start = std::chrono::steady_clock::now();
  while (durable_epoch_ < epoch) {
    const bool quiet = writers_in_flight_.load() == 0;
    const bool waited = std::chrono::steady_clock::now() - start > std::chrono::milliseconds(2);
    if (quiet || waited) {
      Status st = store_->BatchIntact() ? store_->FlushBatch() : Status::IOError("the database rolled back a batch");
      if (!st.ok()) {
        // Memory is ahead of the database and requests wait on it: the only exact way on
        // is a restart, which reloads the committed state.
        spdlog::critical("cannot commit to the database: {}; exiting so that a restart reloads the committed state",
                         st.message());
        std::abort();
      }
      durable_epoch_ = batch_epoch_;
      ++batch_epoch_;
      durable_cv_.notify_all();
      break;
    }
    durable_cv_.wait_for(lock, std::chrono::microseconds(200));
  }
}

void Coordinator::RefreshMergedLocked(bool force) {
  if (!merged_dirty_) return;
  const int64_t now = clock_->NowMs();
  if (!force && options_.merge_interval_ms > 0 && now - last_merge_ms_ < options_.merge_interval_ms) return;
  merged_ = MergeRecords(imports_, MergeInputs());
  merged_dirty_ = false;
  merged_written_ = false;
  last_merge_ms_ = now;
}

grpc::Status Coordinator::FlushMerged() {
  WriteLock lock(this);
  RefreshMergedLocked(true);
  if (merged_written_) return grpc::Status::OK;
  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), "writing merged records");
  RETURN_IF_DB_ERROR(store_->WriteMergedRecords(merged_), "writing merged records");
  RETURN_IF_DB_ERROR(txn->Commit(), "writing merged records");
  merged_written_ = true;
  return grpc::Status::OK;
}

Coordinator::~Coordinator() {
  grpc::Status st = FlushMerged();
  if (!st.ok()) spdlog::error("{}", st.error_message());
}

std::string Coordinator::NewToken() {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(rng_()),
                static_cast<unsigned long long>(rng_()));
  return buf;
}

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

// The record table for early termination: the final delay records (all below P), as far
// as they are complete below the unit.
void Coordinator::AddRecordTable(UnitSpec* spec) const {
  RecordTableBelow(merged_, spec->begin, &spec->known_records, &spec->records_complete_below);
}

void Coordinator::Requeue(UnitMem* u) {
  u->state = StoredUnitState::kPending;
  u->search_token.clear();
  if (!u->quarantined) queue_.insert({-u->priority, u->begin, u->id});
}

// ------------------------------------------------------------------------ worker side

grpc::Status Coordinator::Register(const WorkerDescription& d, int64_t* worker_id) {
  if (d.sieve_bits != sieve_bits()) {
    return grpc::Status(StatusCode::FAILED_PRECONDITION,
                        "worker sieve width " + std::to_string(d.sieve_bits) + " differs from the server's " +
                            std::to_string(sieve_bits()) + " (results of different sieves cannot be audited)");
  }
  if (d.work_hash_version != kWorkHashVersion) {
    return grpc::Status(StatusCode::FAILED_PRECONDITION,
                        "worker computes work hash version " + std::to_string(d.work_hash_version) + ", the server version " +
                            std::to_string(kWorkHashVersion) +
                            " (results could not be audited against each other): upgrade the worker");
  }
  if (d.host.empty() || d.host.size() > 256) return grpc::Status(StatusCode::INVALID_ARGUMENT, "host name missing or too long");
  WriteLock lock(this);
  WorkerMem w;
  w.host = d.host;
  w.gpus = d.gpus;
  w.driver = d.driver;
  w.binary_version = d.binary_version;
  w.backend = d.backend;
  w.sieve_bits = d.sieve_bits;
  w.work_hash_version = d.work_hash_version;
  w.instance_id = d.instance_id.substr(0, 64);
  // A flag stays with the machine: a worker registering from a flagged GPU or host is
  // flagged from the start (its leases get PERMISSION_DENIED with the reason).
  w.flag_reason = InheritedFlag(w);
  w.flagged = !w.flag_reason.empty();
  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), "register");
  RETURN_IF_DB_ERROR(store_->InsertWorker(w, &w.id), "register");
  if (w.flagged) RETURN_IF_DB_ERROR(store_->UpdateWorker(w), "register");
  RETURN_IF_DB_ERROR(txn->Commit(), "register");
  w.last_seen_ms = clock_->NowMs();
  workers_[w.id] = w;
  *worker_id = w.id;
  spdlog::info("worker={} registered: host {} backend {} gpus {} version {}{}", w.id, w.host, w.backend, w.gpus.size(),
               w.binary_version, w.flagged ? " FLAGGED: " + w.flag_reason : "");
  return grpc::Status::OK;
}

grpc::Status Coordinator::Lease(int64_t worker_id, bool accepts_stats, LeaseGrant* out) {
  const grpc::Status st = LeaseImpl(worker_id, accepts_stats, out);
  if (st.ok() && out->has_unit) {
    std::lock_guard<std::mutex> lock(mu_);
    ++(out->stats ? counters_.leases_stats : out->purpose == LeasePurpose::kAudit ? counters_.leases_audit
                                                                                   : counters_.leases_search);
  }
  return st;
}

grpc::Status Coordinator::Complete(int64_t worker_id, int64_t unit_id, const std::string& token,
                                   const UnitResult& result, double seconds, const std::string& engine,
                                   Disposition* disposition) {
  UnitSpec referee_spec;
  referee_spec.end = 0;  // set when an audit mismatch asks for the server's re-run
  grpc::Status st = CompleteImpl(worker_id, unit_id, token, result, seconds, engine, nullptr, &referee_spec,
                                 disposition);
  if (st.ok() && referee_spec.end != 0) {
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
    CpuEngine referee(tables_, eo);
    UnitResult truth;
    const Status es = referee.Search(referee_spec, &truth);
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

CoordinatorCounters Coordinator::Counters() {
  std::lock_guard<std::mutex> lock(mu_);
  CoordinatorCounters c = counters_;
  c.member_searches = member_cache_.searches();
  c.member_search_reuses = member_cache_.reuses();
  return c;
}

grpc::Status Coordinator::LeaseImpl(int64_t worker_id, bool accepts_stats, LeaseGrant* out) {
  *out = LeaseGrant();
  WriteLock lock(this);
  WorkerMem* worker;
  grpc::Status wst = FindUsableWorker(worker_id, &worker);
  if (!wst.ok()) return wst;
  if (draining_) return grpc::Status(StatusCode::UNAVAILABLE, "server is shutting down; no new leases");
  const int64_t now = clock_->NowMs();
  worker->last_seen_ms = now;
  int expired = 0;
  grpc::Status est = ExpireLocked(now, &expired);
  if (!est.ok()) return est;
  // A merge at most merge_interval_ms old: a stale floor is lower and stale holes are
  // more, so an older merge costs work, never exactness.
  RefreshMergedLocked(false);

  // An audit of another worker's unit first: audits are few and keep workers honest.
  UnitMem* unit = nullptr;
  LeasePurpose purpose = LeasePurpose::kSearch;
  UnitSpec spec;
  for (int64_t id : audit_queue_) {
    UnitMem& u = units_[id];
    if (HasOpinion(u, worker_id)) continue;  // the audited worker and earlier auditors of this result
    auto lit = leases_.find(u.finished_token);
    if (lit == leases_.end()) continue;
    unit = &u;
    purpose = LeasePurpose::kAudit;
    // The audit repeats the unit exactly as first searched; the record table is today's
    // (any table complete where it claims to be gives the same result).
    spec = SpecFor(u, lit->second.floor, lit->second.open_holes);
    RecordTableBelow(merged_, u.begin, &spec.known_records, &spec.records_complete_below);
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
  if (unit == nullptr && !queue_.empty()) {
    unit = &units_[std::get<2>(*queue_.begin())];
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
  StoredUnit updated = *unit;
  if (purpose == LeasePurpose::kSearch) updated.state = StoredUnitState::kLeased;
  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), "lease");
  RETURN_IF_DB_ERROR(store_->InsertLease(lease), "lease");
  if (purpose == LeasePurpose::kSearch) RETURN_IF_DB_ERROR(store_->UpdateUnit(updated), "lease");
  RETURN_IF_DB_ERROR(txn->Commit(), "lease");

  if (purpose == LeasePurpose::kSearch) {
    queue_.erase({-unit->priority, unit->begin, unit->id});
    unit->state = StoredUnitState::kLeased;
    unit->search_token = lease.token;
  } else {
    audit_queue_.erase(unit->id);
    unit->audit_token = lease.token;
  }
  leases_[lease.token] = lease;
  active_tokens_.insert(lease.token);

  out->has_unit = true;
  out->unit_id = unit->id;
  out->spec = std::move(spec);
  out->token = lease.token;
  out->deadline_ms = lease.deadline_ms;
  out->purpose = purpose;
  spdlog::info("worker={} unit={} lease={} {}: [{}, {}) floor {} holes {}", worker_id, unit->id, Short(lease.token),
               purpose == LeasePurpose::kAudit ? "audit" : "search", ToDecimal(unit->begin), ToDecimal(unit->end),
               lease.floor, lease.open_holes.size());
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

grpc::Status Coordinator::Heartbeat(int64_t worker_id, int64_t unit_id, const std::string& token,
                                    uint64_t numbers_done, int64_t* deadline_ms, bool* stop) {
  WriteLock lock(this);
  if (stats_leases_.count(token)) return HeartbeatStatsLocked(worker_id, unit_id, token, deadline_ms, stop);
  UnitMem* unit;
  StoredLease* lease;
  grpc::Status st = FindLease(worker_id, unit_id, token, &unit, &lease);
  if (!st.ok()) return st;
  const int64_t now = clock_->NowMs();
  switch (lease->state) {
    case LeaseState::kActive:
      if (now >= lease->deadline_ms) {
        // Past its deadline but not yet swept: expire it now, as a sweep would have.
        int expired = 0;
        if (!(st = ExpireLocked(now, &expired)).ok()) return st;
        break;
      }
      // Deadlines live in memory between commits; a restart grants a fresh one anyway.
      lease->deadline_ms = now + options_.lease_duration_ms;
      *deadline_ms = lease->deadline_ms;
      *stop = false;
      spdlog::debug("worker={} unit={} lease={} heartbeat: {} numbers done", worker_id, unit_id, Short(token), numbers_done);
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
  *stop = lease->purpose == LeasePurpose::kSearch ? unit->state == StoredUnitState::kFinished
                                                  : unit->audit != AuditState::kWanted;
  return grpc::Status::OK;
}

grpc::Status Coordinator::RecordFailure(UnitMem* u, int64_t worker_id, const std::string& token,
                                        const std::string& kind, const std::string& error, int64_t now) {
  if (CountFailure(u, options_.max_failures, kind, error)) {
    spdlog::warn("unit={} lease={} quarantined after {} failures (last: {})", u->id, Short(token), u->failures,
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

grpc::Status Coordinator::ExpireSearchLocked(int64_t now, int* expired) {
  *expired = 0;
  const std::vector<std::string> due = DueLeases(now, leases_, &active_tokens_);
  if (due.empty()) return grpc::Status::OK;
  // Write first, then change memory: copies of what will change.
  std::map<int64_t, UnitMem> touched;
  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), "expiring leases");
  for (const std::string& token : due) {
    StoredLease l = leases_[token];
    l.state = LeaseState::kExpired;
    RETURN_IF_DB_ERROR(store_->UpdateLease(l), "expiring leases");
    auto it = touched.find(l.unit_id);
    if (it == touched.end()) it = touched.emplace(l.unit_id, units_[l.unit_id]).first;
    UnitMem& u = it->second;
    if (l.purpose == LeasePurpose::kSearch && u.search_token == token) {
      u.state = StoredUnitState::kPending;
      grpc::Status st = RecordFailure(&u, l.worker_id, token, "expired", "lease expired without a result", now);
      if (!st.ok()) return st;
      RETURN_IF_DB_ERROR(store_->UpdateUnit(u), "expiring leases");
    }
  }
  RETURN_IF_DB_ERROR(txn->Commit(), "expiring leases");
  for (const std::string& token : due) {
    StoredLease& l = leases_[token];
    l.state = LeaseState::kExpired;
    UnitMem& u = units_[l.unit_id];
    if (l.purpose == LeasePurpose::kSearch && u.search_token == token) {
      CopyFailures(touched[l.unit_id], &u);
      Requeue(&u);
    } else if (l.purpose == LeasePurpose::kAudit && u.audit_token == token) {
      u.audit_token.clear();
      if (u.state == StoredUnitState::kFinished && u.audit == AuditState::kWanted) audit_queue_.insert(u.id);
    }
    spdlog::warn("worker={} unit={} lease={} expired", l.worker_id, l.unit_id, Short(token));
    ++*expired;
  }
  return grpc::Status::OK;
}

int Coordinator::ExpireLeases() {
  WriteLock lock(this);
  int expired = 0;
  grpc::Status st = ExpireLocked(clock_->NowMs(), &expired);
  if (!st.ok()) spdlog::error("expiring leases failed: {}", st.error_message());
  return expired;
}

grpc::Status Coordinator::RevokeFinished(UnitMem* u, int64_t now) {
  RETURN_IF_DB_ERROR(store_->DeleteUnitResult(u->id), "revoking unit");
  UnitMem copy = *u;
  copy.state = StoredUnitState::kPending;
  copy.finished_by = 0;
  copy.finished_token.clear();
  copy.audit = AuditState::kNone;
  RETURN_IF_DB_ERROR(store_->UpdateUnit(copy), "revoking unit");
  RETURN_IF_DB_ERROR(store_->InsertAttempt(u->id, u->finished_by, u->finished_token, "revoked",
                                           "result of a flagged worker", now),
                     "revoking unit");
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
  std::vector<int64_t> revoke;
  for (auto& [id, u] : units_) {
    if (u.state == StoredUnitState::kFinished && u.finished_by == worker_id && u.audit != AuditState::kPassed) {
      grpc::Status st = RevokeFinished(&u, now);
      if (!st.ok()) return st;
      revoke.push_back(id);
    }
  }
  std::vector<std::string> active;
  for (const std::string& token : active_tokens_) {
    auto lit = leases_.find(token);
    if (lit == leases_.end()) continue;
    StoredLease& l = lit->second;
    if (l.worker_id == worker_id && l.state == LeaseState::kActive) {
      StoredLease c = l;
      c.state = LeaseState::kRevoked;
      RETURN_IF_DB_ERROR(store_->UpdateLease(c), "flagging worker");
      if (l.purpose == LeasePurpose::kSearch && units_[l.unit_id].search_token == token) {
        UnitMem uc = units_[l.unit_id];
        uc.state = StoredUnitState::kPending;
        RETURN_IF_DB_ERROR(store_->UpdateUnit(uc), "flagging worker");
      }
      active.push_back(token);
    }
  }
  grpc::Status sst = FlagWorkerStats(worker_id, now);
  if (!sst.ok()) return sst;
  // Memory (the caller commits next).
  w.flagged = true;
  w.flag_reason = reason;
  for (const std::string& identity : identities) flagged_identities_.emplace(identity, FlaggedIdentity{identity, worker_id, reason, now});
  for (int64_t id : revoke) {
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
    Requeue(&u);
  }
  for (const std::string& token : active) {
    StoredLease& l = leases_[token];
    l.state = LeaseState::kRevoked;
    UnitMem& u = units_[l.unit_id];
    if (l.purpose == LeasePurpose::kSearch && u.search_token == token) Requeue(&u);
    if (l.purpose == LeasePurpose::kAudit && u.audit_token == token) {
      u.audit_token.clear();
      if (u.state == StoredUnitState::kFinished && u.audit == AuditState::kWanted) audit_queue_.insert(u.id);
    }
  }
  Remerge();
  spdlog::warn("worker={} flagged: {}; {} unaudited units and {} leases re-queued", worker_id, reason, revoke.size(),
               active.size());
  // Other workers registered from the same GPU or host go with it.
  const std::string inherited = "shares an identity with worker " + std::to_string(worker_id) + ", flagged: " + reason;
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
                                       const UnitResult* truth, UnitSpec* referee_spec, Disposition* disposition) {
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
    return CompleteAuditLocked(worker_id, unit, lease, spec, result, truth, referee_spec, now, disposition);
  }

  if (unit->state == StoredUnitState::kFinished) {
    // A second result (a retry of the same call, or a late result from an earlier lease):
    // deduplicated, nothing is counted twice.
    if (lease->state == LeaseState::kActive) {
      StoredLease lc = *lease;
      lc.state = LeaseState::kSuperseded;
      auto txn = store_->Begin();
      RETURN_IF_DB_ERROR(txn->status(), "complete");
      RETURN_IF_DB_ERROR(store_->UpdateLease(lc), "complete");
      RETURN_IF_DB_ERROR(txn->Commit(), "complete");
      lease->state = LeaseState::kSuperseded;
    }
    *disposition = Disposition::kDuplicate;
    spdlog::info("worker={} unit={} lease={} duplicate result ignored", worker_id, unit_id, Short(token));
    return grpc::Status::OK;
  }

  Status verify = VerifyUnitResult(*tables_, spec, result);
  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), "complete");
  if (!verify.ok()) {
    // Flagging re-queues the worker's unaudited units and active leases (this one too).
    st = FlagWorker(worker_id, "unit " + std::to_string(unit_id) + " failed verification: " + verify.message(), now);
    if (!st.ok()) return st;
    StoredLease lc = *lease;
    lc.state = LeaseState::kRejected;
    RETURN_IF_DB_ERROR(store_->UpdateLease(lc), "complete");
    UnitMem uc = *unit;
    st = RecordFailure(&uc, worker_id, token, "rejected", verify.message(), now);
    if (!st.ok()) return st;
    RETURN_IF_DB_ERROR(store_->UpdateUnit(uc), "complete");
    RETURN_IF_DB_ERROR(txn->Commit(), "complete");
    lease->state = LeaseState::kRejected;
    unit->failures = uc.failures;
    unit->last_error = uc.last_error;
    if (uc.quarantined && !unit->quarantined) {
      unit->quarantined = true;
      queue_.erase({-unit->priority, unit->begin, unit->id});
    }
    spdlog::warn("worker={} unit={} lease={} result REJECTED: {}", worker_id, unit_id, Short(token), verify.message());
    return grpc::Status(StatusCode::PERMISSION_DENIED, "result rejected: " + verify.message() + "; worker " +
                                                           std::to_string(worker_id) + " is flagged");
  }

  // Accept: the unit is finished by this lease; any other active lease of it is superseded.
  UnitMem uc = *unit;
  uc.state = StoredUnitState::kFinished;
  uc.finished_by = worker_id;
  uc.finished_token = token;
  uc.quarantined = false;
  uc.audit = WantsAudit(unit_id) ? AuditState::kWanted : AuditState::kNone;
  StoredLease lc = *lease;
  lc.state = LeaseState::kCompleted;
  RETURN_IF_DB_ERROR(store_->UpdateLease(lc), "complete");
  std::string superseded;
  if (!unit->search_token.empty() && unit->search_token != token) {
    superseded = unit->search_token;
    StoredLease other = leases_[superseded];
    other.state = LeaseState::kSuperseded;
    RETURN_IF_DB_ERROR(store_->UpdateLease(other), "complete");
  }
  RETURN_IF_DB_ERROR(store_->UpdateUnit(uc), "complete");
  UnitProvenance prov;
  prov.floor = lease->floor;
  prov.open_holes = lease->open_holes.size();
  prov.engine = engine.substr(0, 200);
  prov.seconds = seconds;
  RETURN_IF_DB_ERROR(store_->StoreUnitResult(unit_id, result, prov), "complete");
  WorkerMem& w = workers_[worker_id];
  StoredWorker wc = w;
  wc.units_finished += 1;
  wc.numbers_finished += Size(*unit);
  wc.seconds += seconds;
  RETURN_IF_DB_ERROR(store_->UpdateWorker(wc), "complete");
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
  if (!superseded.empty()) leases_[superseded].state = LeaseState::kSuperseded;
  lease->state = LeaseState::kCompleted;
  const bool was_queued = unit->state == StoredUnitState::kPending;
  if (was_queued) queue_.erase({-unit->priority, unit->begin, unit->id});
  static_cast<StoredUnit&>(*unit) = uc;
  unit->search_token.clear();
  if (unit->audit == AuditState::kWanted) audit_queue_.insert(unit_id);
  static_cast<StoredWorker&>(w) = wc;
  recent_.emplace_back(now, Size(*unit));
  while (!recent_.empty() && recent_.front().first < now - 600'000) recent_.pop_front();
  *disposition = Disposition::kAccepted;
  spdlog::info("worker={} unit={} lease={} finished: {} ladder, {} class minima, {} candidates{}{}", worker_id, unit_id,
               Short(token), result.ladder.size(), result.class_minima.size(), result.candidates,
               lease->deadline_ms < now ? " (late result of an expired lease)" : "",
               unit->audit == AuditState::kWanted ? ", audit wanted" : "");
  return grpc::Status::OK;
}

grpc::Status Coordinator::Release(int64_t worker_id, int64_t unit_id, const std::string& token, bool failed,
                                  const std::string& reason) {
  WriteLock lock(this);
  if (stats_leases_.count(token)) return ReleaseStatsLocked(worker_id, unit_id, token, failed, reason);
  UnitMem* unit;
  StoredLease* lease;
  grpc::Status st = FindLease(worker_id, unit_id, token, &unit, &lease);
  if (!st.ok()) return st;
  if (lease->state != LeaseState::kActive) return StaleLeaseToken("is", lease->state);
  const int64_t now = clock_->NowMs();
  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), "release");
  StoredLease lc = *lease;
  lc.state = LeaseState::kReleased;
  RETURN_IF_DB_ERROR(store_->UpdateLease(lc), "release");
  UnitMem uc = *unit;
  const bool owns = lease->purpose == LeasePurpose::kSearch && unit->search_token == token;
  if (owns) {
    uc.state = StoredUnitState::kPending;
    if (failed) {
      st = RecordFailure(&uc, worker_id, token, "released", reason.substr(0, 500), now);
      if (!st.ok()) return st;
    }
    RETURN_IF_DB_ERROR(store_->UpdateUnit(uc), "release");
  }
  RETURN_IF_DB_ERROR(txn->Commit(), "release");
  lease->state = LeaseState::kReleased;
  if (owns) {
    CopyFailures(uc, unit);
    Requeue(unit);
  } else if (lease->purpose == LeasePurpose::kAudit && unit->audit_token == token) {
    unit->audit_token.clear();
    if (unit->state == StoredUnitState::kFinished && unit->audit == AuditState::kWanted) audit_queue_.insert(unit_id);
  }
  spdlog::info("worker={} unit={} lease={} released{}{}", worker_id, unit_id, Short(token), failed ? " (failed): " : "",
               failed ? reason : "");
  return grpc::Status::OK;
}

// ------------------------------------------------------------------------- admin side

grpc::Status Coordinator::Submit(u128 begin, u128 end, Kinds kinds, u128 unit_size, int32_t priority,
                                 SubmitOutcome* out) {
  if (begin < 1) return grpc::Status(StatusCode::INVALID_ARGUMENT, "range must start at 1 or above");
  if (end <= begin) {
    return grpc::Status(StatusCode::INVALID_ARGUMENT,
                        "empty or reversed range [" + ToDecimal(begin) + ", " + ToDecimal(end) + ")");
  }
  if (unit_size == 0) unit_size = options_.default_unit_size;
  WriteLock lock(this);
  // What is covered already: imports, and every unit of the same or a wider kind.
  std::vector<std::pair<u128, u128>> covered;
  for (const TrustedImport& imp : imports_) {
    if (kinds == Kinds::kDelay || ImportCoversClasses(imp)) covered.emplace_back(1, imp.complete_below);
  }
  for (const auto& [id, u] : units_) {
    if (u.end <= begin || u.begin >= end) continue;
    if (u.kinds == Kinds::kDelay && kinds == Kinds::kDelayAndClass) {
      return grpc::Status(StatusCode::FAILED_PRECONDITION,
                          "range overlaps delay-only unit [" + ToDecimal(u.begin) + ", " + ToDecimal(u.end) +
                              "); submit it as delay-only or choose another range");
    }
    covered.emplace_back(u.begin, u.end);
  }
  std::sort(covered.begin(), covered.end());
  std::vector<std::pair<u128, u128>> pieces;
  u128 at = begin;
  for (const auto& [a, b] : covered) {
    if (b <= at) continue;
    if (a >= end) break;
    if (a > at) pieces.emplace_back(at, a);
    at = std::max(at, b);
    if (at >= end) break;
  }
  if (at < end) pieces.emplace_back(at, end);
  if (pieces.empty()) {
    return grpc::Status(StatusCode::ALREADY_EXISTS,
                        "[" + ToDecimal(begin) + ", " + ToDecimal(end) + ") is already covered or queued");
  }
  u128 units = 0;
  for (const auto& [a, b] : pieces) units += CountUnits(a, b, unit_size);
  if (units > options_.max_units_per_submission) {
    return grpc::Status(StatusCode::INVALID_ARGUMENT, "submission would make " + ToDecimal(units) +
                                                          " units; choose a larger unit size");
  }
  StoredSubmission sub;
  sub.begin = begin;
  sub.end = end;
  sub.kinds = kinds;
  sub.unit_size = unit_size;
  sub.priority = priority;
  std::vector<UnitMem> made;
  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), "submit");
  RETURN_IF_DB_ERROR(store_->InsertSubmission(sub, &sub.id), "submit");
  for (const auto& [a, b] : pieces) {
    for (u128 x = a; x < b;) {
      UnitMem u;
      u.begin = x;
      u.end = UnitEnd(x, b, unit_size);
      u.kinds = kinds;
      u.submission_id = sub.id;
      u.priority = priority;
      RETURN_IF_DB_ERROR(store_->InsertUnit(u, &u.id), "submit");
      made.push_back(u);
      x = u.end;
    }
  }
  RETURN_IF_DB_ERROR(txn->Commit(), "submit");
  submissions_[sub.id] = sub;
  for (UnitMem& u : made) {
    queue_.insert({-u.priority, u.begin, u.id});
    units_[u.id] = u;
  }
  out->submission_id = sub.id;
  out->accepted = pieces;
  out->units = made.size();
  spdlog::info("submission={} [{}, {}) {} priority {}: {} pieces, {} units", sub.id, ToDecimal(begin), ToDecimal(end),
               kinds == Kinds::kDelay ? "delay" : "delay,class", priority, pieces.size(), made.size());
  return grpc::Status::OK;
}

grpc::Status Coordinator::Cancel(int64_t submission_id, uint64_t* units_removed) {
  WriteLock lock(this);
  auto sit = submissions_.find(submission_id);
  if (sit == submissions_.end()) {
    return grpc::Status(StatusCode::NOT_FOUND, "unknown submission " + std::to_string(submission_id));
  }
  if (sit->second.cancelled) {
    return grpc::Status(StatusCode::FAILED_PRECONDITION, "submission " + std::to_string(submission_id) + " is already cancelled");
  }
  std::vector<int64_t> doomed;
  for (const auto& [id, u] : units_) {
    if (u.submission_id == submission_id && u.state != StoredUnitState::kFinished) doomed.push_back(id);
  }
  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), "cancel");
  RETURN_IF_DB_ERROR(store_->SetSubmissionCancelled(submission_id), "cancel");
  for (int64_t id : doomed) RETURN_IF_DB_ERROR(store_->DeleteUnit(id), "cancel");  // cascades to its leases
  RETURN_IF_DB_ERROR(txn->Commit(), "cancel");
  sit->second.cancelled = true;
  for (int64_t id : doomed) {
    const UnitMem& u = units_[id];
    queue_.erase({-u.priority, u.begin, id});
    units_.erase(id);
  }
  for (auto it = leases_.begin(); it != leases_.end();) {
    it = units_.count(it->second.unit_id) ? std::next(it) : leases_.erase(it);
  }
  *units_removed = doomed.size();
  spdlog::info("submission={} cancelled: {} unfinished units removed", submission_id, doomed.size());
  return grpc::Status::OK;
}

grpc::Status Coordinator::RequeueQuarantined(int64_t unit_id, int64_t stats_unit_id, bool all, uint64_t* requeued) {
  *requeued = 0;
  if (static_cast<int>(unit_id != 0) + static_cast<int>(stats_unit_id != 0) + static_cast<int>(all) != 1) {
    return grpc::Status(StatusCode::INVALID_ARGUMENT, "give one unit, one stats unit, or all");
  }
  WriteLock lock(this);
  std::vector<int64_t> units, stats_units;
  auto pick = [&](auto& map, int64_t id, const char* what, std::vector<int64_t>* out) -> grpc::Status {
    auto it = map.find(id);
    if (it == map.end()) return grpc::Status(StatusCode::NOT_FOUND, std::string("unknown ") + what + " " + std::to_string(id));
    if (!it->second.quarantined) {
      return grpc::Status(StatusCode::FAILED_PRECONDITION, std::string(what) + " " + std::to_string(id) + " is not quarantined");
    }
    out->push_back(id);
    return grpc::Status::OK;
  };
  if (all) {
    for (const auto& [id, u] : units_) {
      if (u.quarantined) units.push_back(id);
    }
    for (const auto& [id, u] : stats_units_) {
      if (u.quarantined) stats_units.push_back(id);
    }
  } else if (grpc::Status st = unit_id != 0 ? pick(units_, unit_id, "unit", &units)
                                            : pick(stats_units_, stats_unit_id, "stats unit", &stats_units);
             !st.ok()) {
    return st;
  }
  // Write first, then change memory.
  auto cleared = [](auto u) {
    u.failures = 0;
    u.quarantined = false;
    return u;
  };
  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), "requeue");
  for (int64_t id : units) RETURN_IF_DB_ERROR(store_->UpdateUnit(cleared(StoredUnit(units_[id]))), "requeue");
  for (int64_t id : stats_units) {
    RETURN_IF_DB_ERROR(store_->UpdateStatsUnit(cleared(StoredStatsUnit(stats_units_[id]))), "requeue");
  }
  RETURN_IF_DB_ERROR(txn->Commit(), "requeue");
  auto requeue = [&](auto& u, std::set<QueueKey>* queue, const char* what) {
    u = cleared(u);
    if (u.state == StoredUnitState::kPending) queue->insert({-u.priority, u.begin, u.id});
    spdlog::info("{}={} requeued after quarantine (last error: {})", what, u.id, u.last_error);
  };
  for (int64_t id : units) requeue(units_[id], &queue_, "unit");
  for (int64_t id : stats_units) requeue(stats_units_[id], &stats_queue_, "stats unit");
  *requeued = units.size() + stats_units.size();
  return grpc::Status::OK;
}

grpc::Status Coordinator::Import(const TrustedImport& import, const std::string& source, u128* covered_prefix) {
  WriteLock lock(this);
  // Trusted means complete, not unchecked: every delay is recomputed, and every number
  // known here (the published records, every point of the merge) must fit a complete list
  // (core/import_check.h; `collatzctl import --db` applies the same rules).
  const Status checked = CheckTrustedImport(import, ClassMemberSeeds(merged_, PublishedDelayPoints()));
  if (!checked.ok()) return grpc::Status(StatusCode::INVALID_ARGUMENT, "import refused: " + checked.message());
  std::vector<TrustedImport> imports = imports_;
  imports.push_back(import);
  MergedRecords merged = MergeRecords(imports, MergeInputs());
  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), "import");
  RETURN_IF_DB_ERROR(store_->StoreImport(import, source.substr(0, 500)), "import");
  RETURN_IF_DB_ERROR(store_->WriteMergedRecords(merged), "import");
  RETURN_IF_DB_ERROR(txn->Commit(), "import");
  imports_ = std::move(imports);
  merged_ = std::move(merged);
  merged_dirty_ = false;
  merged_written_ = true;
  *covered_prefix = merged_.covered_prefix;
  spdlog::info("import from {}: complete below {}, {} delay and {} class records; covered prefix {}", source,
               ToDecimal(import.complete_below), import.delay_records.size(), import.class_records.size(),
               ToDecimal(merged_.covered_prefix));
  return grpc::Status::OK;
}

grpc::Status Coordinator::Backup(const std::string& destination, uint64_t* bytes) {
  if (destination.empty()) return grpc::Status(StatusCode::INVALID_ARGUMENT, "backup destination missing");
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_DB_ERROR(store_->Backup(destination, bytes), "backup");
  spdlog::info("backup written to {} ({} bytes)", destination, *bytes);
  return grpc::Status::OK;
}

grpc::Status Coordinator::IntegrityCheck(std::string* result) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_DB_ERROR(store_->IntegrityCheck(result), "integrity check");
  return grpc::Status::OK;
}

void Coordinator::StopLeasing() {
  std::lock_guard<std::mutex> lock(mu_);
  draining_ = true;
}

CoordinatorStatus Coordinator::GetStatus() {
  std::lock_guard<std::mutex> lock(mu_);
  RefreshMergedLocked(true);
  CoordinatorStatus s;
  s.covered_prefix = merged_.covered_prefix;
  s.class_covered_prefix = merged_.class_covered_prefix;
  s.draining = draining_;
  std::map<int64_t, CoordinatorStatus::Submission> subs;
  for (const auto& [id, sub] : submissions_) subs[id].s = sub;
  for (const auto& [id, u] : units_) {
    s.numbers_total += Size(u);
    if (u.state == StoredUnitState::kFinished) {
      ++s.finished;
      s.numbers_finished += Size(u);
      if (u.audit == AuditState::kWanted) ++s.audits_pending;
    } else if (u.quarantined) {
      ++s.quarantined;
      s.quarantined_units.push_back(u);
    } else if (u.state == StoredUnitState::kLeased) {
      ++s.leased;
    } else {
      ++s.pending;
    }
    auto it = subs.find(u.submission_id);
    if (it != subs.end()) {
      ++it->second.units_total;
      if (u.state == StoredUnitState::kFinished) ++it->second.units_finished;
    }
  }
  for (auto& [id, sub] : subs) s.submissions.push_back(sub);
  std::map<int64_t, CoordinatorStatus::StatsJob> jobs;
  for (const auto& [id, job] : stats_jobs_) jobs[id].job = job;
  for (const auto& [id, u] : stats_units_) {
    auto it = jobs.find(u.job_id);
    if (it == jobs.end()) continue;
    ++it->second.units_total;
    if (u.state == StoredUnitState::kFinished) ++it->second.units_finished;
    else if (u.quarantined) {
      ++it->second.units_quarantined;
      it->second.quarantined_units.push_back(u);
    } else if (u.state == StoredUnitState::kLeased) {
      ++it->second.units_leased;
    }
  }
  for (auto& [id, job] : jobs) s.stats_jobs.push_back(job);
  s.audits_passed = audits_passed_;
  s.audits_failed = audits_failed_;
  const int64_t now = clock_->NowMs();
  if (!recent_.empty()) {
    u128 numbers = 0;
    for (const auto& [t, n] : recent_) numbers += n;
    const double window = std::max<double>(1.0, static_cast<double>(now - recent_.front().first) / 1000.0);
    s.numbers_per_second = static_cast<double>(numbers) / window;
    if (s.numbers_per_second > 0) {
      s.eta_seconds = static_cast<double>(s.numbers_total - s.numbers_finished) / s.numbers_per_second;
    }
  }
  return s;
}

std::vector<WorkerReport> Coordinator::ListWorkers() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<WorkerReport> out;
  for (const auto& [id, w] : workers_) {
    WorkerReport r;
    r.w = w;
    r.last_seen_ms = w.last_seen_ms;
    r.numbers_per_second = w.seconds > 0 ? static_cast<double>(w.numbers_finished) / w.seconds : 0;
    for (const std::string& t : active_tokens_) {
      auto lit = leases_.find(t);
      if (lit != leases_.end() && lit->second.worker_id == id && lit->second.state == LeaseState::kActive) ++r.active_leases;
    }
    for (const std::string& t : stats_active_tokens_) {
      auto lit = stats_leases_.find(t);
      if (lit != stats_leases_.end() && lit->second.worker_id == id && lit->second.state == LeaseState::kActive) {
        ++r.active_leases;
      }
    }
    out.push_back(r);
  }
  return out;
}

MergedRecords Coordinator::Records() {
  std::lock_guard<std::mutex> lock(mu_);
  RefreshMergedLocked(true);
  return merged_;
}

}  // namespace collatz::server
