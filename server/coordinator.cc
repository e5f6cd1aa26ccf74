// The coordinator's core: opening and loading the store, the group commit, the merged
// record table, worker registration, counters, status and backups. Leases, results,
// submissions, imports, audits and stats jobs live in the coordinator_*.cc of their concern.
#include "server/coordinator.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "core/work_hash.h"
#include "server/coordinator_util.h"

namespace collatz::server {

namespace {

using grpc::StatusCode;

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
  grpc::Status wst = BuildWidthTables();
  if (!wst.ok()) return wst;
  std::vector<std::pair<int64_t, FinishedUnit>> finished;
  RETURN_IF_DB_ERROR(store_->LoadFinishedUnits(&finished), "loading finished units");
  for (auto& [id, f] : finished) finished_[id] = std::move(f);
  RETURN_IF_DB_ERROR(store_->records().LoadImports(&imports_), "loading imports");
  RETURN_IF_DB_ERROR(store_->records().LoadKnownPoints(&known_points_), "loading known points");
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
    if (u.state == StoredUnitState::kPending && !u.quarantined) Enqueue(u);
    if (u.state == StoredUnitState::kFinished && u.audit == AuditState::kWanted && u.audit_token.empty()) {
      audit_queue_.insert(id);
    }
    if (u.audit == AuditState::kPassed) ++audits_passed_;
    counted_seq_ = std::max(counted_seq_, u.counted_seq);
  }
  grpc::Status sst = LoadStats();
  if (!sst.ok()) return sst;
  if (!(sst = LoadAudits()).ok()) return sst;
  Remerge();
  RefreshMergedLocked(true);
  spdlog::info("coordinator loaded: {} submissions, {} units ({} queued), {} workers, {} leases, {} imports, "
               "{} known points, covered prefix {}",
               submissions_.size(), units_.size(), queue_.size(), workers_.size(), leases_.size(), imports_.size(),
               known_points_.size(), ToDecimal(merged_.covered_prefix));
  return grpc::Status::OK;
}

grpc::Status Coordinator::BuildWidthTables() {
  base_bits_ = tables_->sieve->bits();
  class_bits_ = options_.class_sieve_bits == 0 ? base_bits_ : options_.class_sieve_bits;
  delay_bits_ = options_.delay_sieve_bits == 0 ? base_bits_ : options_.delay_sieve_bits;
  tables_by_bits_[base_bits_] = tables_;
  // Each width other than the base with why it is needed: the class width, or a unit cut
  // with it (by a run with other options; it keeps its width).
  std::map<int, std::string> needed;
  if (class_bits_ != base_bits_) needed.emplace(class_bits_, "the class units' width (--class-sieve-bits)");
  if (delay_bits_ != base_bits_ && options_.default_unit_size >= options_.delay_sieve_min_numbers) {
    needed.emplace(delay_bits_, "the wide units' width (--delay-sieve-bits)");
  }
  for (const auto& [id, u] : units_) {
    if (UnitBits(u) != base_bits_) needed.emplace(UnitBits(u), "unit " + std::to_string(id) + " was cut with it");
  }
  const auto start = std::chrono::steady_clock::now();
  for (const auto& [bits, why] : needed) {
    const std::string what = "the tables of a " + std::to_string(bits) + "-bit sieve (" + why + ")";
    if (!engines::IsUnitSieveBits(bits)) {
      return grpc::Status(StatusCode::FAILED_PRECONDITION,
                          what + ": not a unit width (1 to " + std::to_string(engines::kMaxUnitSieveBits) + " bits)");
    }
    if (!options_.build_tables) return grpc::Status(StatusCode::FAILED_PRECONDITION, what + ": no way to build them");
    std::shared_ptr<const SearchTables> t;
    const Status st = options_.build_tables(bits, &t);
    if (!st.ok()) return grpc::Status(StatusCode::FAILED_PRECONDITION, "cannot build " + what + ": " + st.ToString());
    if (t == nullptr || t->sieve->bits() != bits) {
      return grpc::Status(StatusCode::INTERNAL, "building " + what + " gave another width");
    }
    tables_by_bits_[bits] = std::move(t);
  }
  if (SeveralWidths()) {
    spdlog::info("sieve widths {}: delay+class units of at least {} numbers are cut with {} bits, units of at least "
                 "{} with {} (delay+class ones with {}), others with {} (tables built in {:.2f} s)",
                 WidthsText(), ToDecimal(options_.class_sieve_min_numbers), class_bits_,
                 ToDecimal(options_.delay_sieve_min_numbers), delay_sieve_bits(),
                 std::max(class_bits_, delay_sieve_bits()), base_bits_,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return grpc::Status::OK;
}

const std::shared_ptr<const SearchTables>& Coordinator::TablesOf(const StoredUnit& u) const {
  // Every width a unit can have was built by BuildWidthTables (units are cut with the base
  // or the class width, and stored widths are built at start).
  return tables_by_bits_.at(UnitBits(u));
}

grpc::Status Coordinator::RefuseOneWidthWorker(bool unit_sieve_bits, int sieve_bits, const std::string& who) const {
  if (unit_sieve_bits || (!SeveralWidths() && sieve_bits == base_bits_)) return grpc::Status::OK;
  // It would search a unit of another width with its own sieve, and that result is refused.
  return grpc::Status(StatusCode::FAILED_PRECONDITION,
                      who + " searches every unit with a " + std::to_string(sieve_bits) +
                          "-bit sieve (it does not honour Unit.sieve_bits), and this server's units have sieve widths "
                          "of " + WidthsText() + " (results of another width are refused): upgrade the worker");
}

std::string Coordinator::WidthsText() const {
  std::string out;
  size_t i = 0;
  for (const auto& [bits, t] : tables_by_bits_) {
    out += (i == 0 ? "" : i + 1 == tables_by_bits_.size() ? " and " : ", ") + std::to_string(bits);
    ++i;
  }
  return out + " bits";
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
  if (!force && options_.merge_interval_ms > 0 &&
      now - last_merge_ms_ < std::max(options_.merge_interval_ms, kMergeCostFactor * last_merge_cost_ms_)) {
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  merged_seq_ = counted_seq_;
  merged_ = MergeRecords(imports_, MergeInputs(), known_points_);
  published_checked_ = false;
  auto table = std::make_shared<MergedRecords>();
  table->covered_prefix = merged_.covered_prefix;
  table->delay_final = merged_.delay_final;
  merge_history_[merged_seq_] = std::move(table);
  if (merge_history_.size() >= merge_history_prune_at_) {
    PruneMergeHistoryLocked();
    merge_history_prune_at_ = std::max<size_t>(256, 2 * merge_history_.size());
  }
  last_merge_cost_ms_ =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  merged_dirty_ = false;
  merged_written_ = false;
  last_merge_ms_ = now;
}

grpc::Status Coordinator::FlushMerged(bool fresh) {
  WriteLock lock(this);
  if (fresh || clock_->NowMs() - last_merge_ms_ >= kMergeCostFactor * last_merge_cost_ms_) RefreshMergedLocked(true);
  if (grpc::Status st = CheckAgainstPublishedLocked(clock_->NowMs()); !st.ok()) return st;
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

grpc::Status Coordinator::Register(const WorkerDescription& d, int64_t* worker_id) {
  if (!d.build_flavour.empty() && !options_.allow_test_builds) {
    return grpc::Status(StatusCode::FAILED_PRECONDITION,
                        "worker binary is a " + d.build_flavour + " build (" + d.binary_version +
                            "), not fit to search a campaign; a server started with --allow-test-builds (tests "
                            "only) takes it");
  }
  if (d.sieve_bits != sieve_bits()) {
    return grpc::Status(StatusCode::FAILED_PRECONDITION,
                        "worker sieve width " + std::to_string(d.sieve_bits) + " differs from the server's " +
                            std::to_string(sieve_bits()) +
                            " (its base width, which every worker registers with: results of different sieves "
                            "cannot be audited)");
  }
  if (d.work_hash_version != kWorkHashVersion) {
    return grpc::Status(StatusCode::FAILED_PRECONDITION,
                        "worker computes work hash version " + std::to_string(d.work_hash_version) + ", the server version " +
                            std::to_string(kWorkHashVersion) +
                            " (results could not be audited against each other): upgrade the worker");
  }
  if (grpc::Status st = RefuseOneWidthWorker(d.unit_sieve_bits, d.sieve_bits, "worker"); !st.ok()) return st;
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
  w.unit_sieve_bits = d.unit_sieve_bits;
  w.token_name = d.token_name;
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
  spdlog::info("worker={} registered: host {} backend {} gpus {} version {}{}{}{}", w.id, w.host, w.backend,
               w.gpus.size(), w.binary_version, w.unit_sieve_bits ? "" : " (one sieve width)",
               w.token_name.empty() ? "" : " token " + w.token_name, w.flagged ? " FLAGGED: " + w.flag_reason : "");
  return grpc::Status::OK;
}

grpc::Status Coordinator::CheckWorkerToken(int64_t worker_id, const std::string& token_name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = workers_.find(worker_id);
  if (it == workers_.end() || it->second.token_name == token_name) return grpc::Status::OK;
  return grpc::Status(StatusCode::PERMISSION_DENIED,
                      "worker " + std::to_string(worker_id) +
                          " was registered with another token: a token may act only for the workers it registered");
}

CoordinatorCounters Coordinator::Counters() {
  std::lock_guard<std::mutex> lock(mu_);
  CoordinatorCounters c = counters_;
  c.member_searches = member_cache_.searches();
  c.member_search_reuses = member_cache_.reuses();
  c.known_points = known_points_.size();
  return c;
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
  s.checked_prefix = merged_.covered_prefix;
  s.class_covered_prefix = merged_.class_covered_prefix;
  s.double_check = DoubleCheckName(options_.double_check);
  std::vector<std::pair<u128, u128>> covered;  // searched at least once, or imported
  for (const TrustedImport& i : imports_) covered.emplace_back(1, i.complete_below);
  for (const auto& [id, f] : finished_) covered.emplace_back(f.begin, f.end);
  s.covered_prefix = std::max(CoveredPrefix(std::move(covered)), s.checked_prefix);
  s.draining = draining_;
  std::map<int64_t, CoordinatorStatus::Submission> subs;
  for (const auto& [id, sub] : submissions_) subs[id].s = sub;
  // The workers that may take a check now (unflagged, seen within a lease's duration).
  std::vector<int64_t> active;
  const int64_t now = clock_->NowMs();
  for (const auto& [id, w] : workers_) {
    if (!w.flagged && now - w.last_seen_ms <= options_.lease_duration_ms) active.push_back(id);
  }
  // Whether one of them is independent of a unit's finisher and checkers; units without a
  // dispute depend on their finisher alone (cached: a one-host fleet may hold many).
  std::map<int64_t, bool> checkable_by_finisher;
  auto checkable = [&](const UnitMem& u) {
    auto any = [&] {
      return std::any_of(active.begin(), active.end(), [&](int64_t w) { return IndependentChecker(u, w); });
    };
    if (disputes_.count(u.id) != 0) return any();
    auto [it, inserted] = checkable_by_finisher.try_emplace(u.finished_by, false);
    if (inserted) it->second = any();
    return it->second;
  };
  for (const auto& [id, u] : units_) {
    s.numbers_total += Size(u);
    if (u.state == StoredUnitState::kFinished) {
      ++s.finished;
      s.numbers_finished += Size(u);
      if (u.audit == AuditState::kWanted) {
        ++s.audits_pending;
        if (!checkable(u)) ++s.audits_blocked;
      }
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
    r.max_unit_numbers = w.max_unit_numbers;
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
