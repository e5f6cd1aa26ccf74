// The coordinator's logic, apart from gRPC wiring (server/services.h) and the binary
// (server/server_main.cc): submissions cut into units, leases with deadlines and tokens,
// verification and audits of results, quarantine, and the merged records. Every state
// change is written to the CoordinatorStore in one transaction before memory changes, so
// a crash or SIGKILL at any point loses nothing committed and counts nothing twice.
// Thread-safe (one mutex); time comes from an injected Clock.
#pragma once

#include <grpcpp/support/status.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/class_member_cache.h"
#include "core/merge.h"
#include "core/status.h"
#include "core/unit.h"
#include "core/unit_search.h"
#include "engines/sieve_width.h"
#include "engines/unit_size.h"
#include "server/clock.h"
#include "server/trust_policy.h"
#include "storage/coordinator_store.h"

namespace collatz::server {

struct CoordinatorOptions {
  u128 default_unit_size = Pow2(46);   // one H100 near 2^60: about 8 s delay only, 35 s with classes (PERFORMANCE.md)
  // Delay+class submissions without a unit size take the smaller of default_unit_size and this
  // (collatz-server --class-unit-size): a delay-only campaign's 2^54 would be an hour a class unit.
  u128 default_class_unit_size = engines::kMaxDefaultClassUnitNumbers;
  int64_t lease_duration_ms = 10 * 60 * 1000;
  int max_failures = 3;                // failed attempts before a unit is quarantined
  double audit_fraction = 0.0;         // with DoubleCheck::kNone: fraction of units re-run by another worker
  // The trust policy (server/trust_policy.h): kAll, every unit is searched by two
  // independent workers whose results agree before it counts; kAdaptive, a worker's
  // results are checked at a rate falling with its agreeing checks, never below
  // adaptive_floor; kNone, one search counts. collatz-server's default is kAll.
  DoubleCheck double_check = DoubleCheck::kNone;
  double adaptive_floor = 0.05;
  // Below the published bound the merged delay records must equal the compiled-in published
  // list (core/published_points.h); the finisher of a unit that makes a difference is flagged.
  bool check_published = true;
  // An audit mismatch on a unit of at most this many numbers is settled by a re-run on
  // the server's CPU engine (outside the lock, with referee_threads threads); larger units
  // wait for a third worker. 2^28 is about 1 s of one core near 2^60 delay only, 2 s with
  // classes (docs/PROTOCOL.md), well inside a worker's 30 s call deadline; 0 never re-runs.
  u128 referee_max_numbers = Pow2(28);
  int referee_threads = 1;
  uint64_t audit_seed = 0x5eed;
  uint64_t max_units_per_submission = 1'000'000;
  int64_t retry_after_ms = 2000;       // told to a worker when there is no work
  // Leases use a merge of the verified results at most this old (0: always fresh).
  int64_t merge_interval_ms = 0;
  // Stats jobs: numbers per unit unless the submission says otherwise (rounded down to
  // whole batches), at most this many batches per unit (a result is 12 bytes per batch
  // and must fit the server's 16 MiB message limit), and how many batches of every
  // result the server recomputes exactly (the first, the last, the rest at random).
  u128 default_stats_unit_size = Pow2(30);
  uint64_t max_stats_batches_per_unit = uint64_t{1} << 20;
  int stats_audit_batches = 4;
  // Sieve widths (docs/OPERATIONS.md): units are cut with the base width (that of the tables
  // given to Open: --sieve-bits / --sieve), except delay+class units of at least
  // class_sieve_min_numbers numbers, cut with class_sieve_bits (0: the base width), by
  // engines::UnitSieveBits. The width is stored with the unit and fixed from then on.
  int class_sieve_bits = 0;
  u128 class_sieve_min_numbers = engines::kWideClassUnitNumbers;
  // Units of at least delay_sieve_min_numbers numbers are wide: delay-only ones are cut with
  // delay_sieve_bits (0: the base width), delay+class ones with the wider of it and their class
  // width, when its tables were built at Open: where default_unit_size reaches
  // delay_sieve_min_numbers (a campaign server, --unit-size 2^49) or stored units have it.
  // Elsewhere such units keep the base width (the default 30-bit sieve takes about 40 s and
  // 3 GB at the peak to build on a two-core host, which no server of smaller units should pay
  // at every start).
  int delay_sieve_bits = 0;
  u128 delay_sieve_min_numbers = engines::kWideDelayUnitNumbers;
  // Builds the search tables of a width other than the base one (the class width, and
  // widths stored with units by a run with other options); the server: a generated sieve
  // sharing the base tables' step and tail tables. Needed only when there is such a width.
  std::function<Status(int sieve_bits, std::shared_ptr<const SearchTables>* out)> build_tables;
  // Whether workers of a test, debug or mutation build (WorkerDescription::build_flavour)
  // may register: collatz-server --allow-test-builds, for tests only.
  bool allow_test_builds = false;
};

struct WorkerDescription {
  std::string host;
  std::vector<std::pair<std::string, std::string>> gpus;  // (model, uuid)
  std::string driver, binary_version, backend;
  int sieve_bits = 0;
  // The worker's kWorkHashVersion (core/work_hash.h); 0 from binaries before it. Must
  // equal the server's.
  uint32_t work_hash_version = 0;
  std::string instance_id;  // stable id of the worker's installation; "" from older binaries
  // It searches each unit with the width its lease names (LeaseGrant::sieve_bits); false
  // from older binaries, which the server refuses while its units have several widths.
  bool unit_sieve_bits = false;
  // The stored token it authenticated with (server/auth.h Caller::token_name); "" for the
  // shared token and when authentication is off. An identity of the worker when not "".
  std::string token_name;
  // The binary's build flavour (RegisterRequest.build_flavour): "" for a release build.
  // Others are refused unless CoordinatorOptions::allow_test_builds.
  std::string build_flavour;
};

// A unit of a stats job as a worker computes it: every batch of [begin, end).
struct StatsUnitSpec {
  int64_t job_id = 0;
  u128 begin = 0, end = 0;
  uint32_t batch = 0;
};

struct LeaseGrant {
  bool has_unit = false;
  int64_t unit_id = 0;
  bool stats = false;        // a stats unit (stats_spec) instead of a search unit (spec)
  StatsUnitSpec stats_spec;
  UnitSpec spec;
  int sieve_bits = 0;        // the width the search unit must be searched with (never 0)
  std::string token;
  int64_t deadline_ms = 0;
  LeasePurpose purpose = LeasePurpose::kSearch;
};

enum class Disposition { kAccepted, kDuplicate, kAuditMatched, kAuditMismatch };

struct SubmitOutcome {
  int64_t submission_id = 0;
  std::vector<std::pair<u128, u128>> accepted;
  uint64_t units = 0;
};

struct StatsSubmitOutcome {
  int64_t job_id = 0;
  uint64_t units = 0;
};

// One page of a finished stats job: a stats file of batches [first_batch, first_batch + n).
struct StatsPage {
  std::string stats_file;
  uint64_t total_batches = 0;
  StoredStatsJob job;
};

struct CoordinatorStatus {
  // covered: every unit below it searched at least once (or imported); checked: every unit
  // below it counted by the trust policy (double_check), the prefix below which records are
  // final and from which leases' record tables come; class_covered_prefix: checked, class
  // searches only.
  u128 covered_prefix = 1, class_covered_prefix = 1, checked_prefix = 1;
  std::string double_check;
  uint64_t pending = 0, leased = 0, finished = 0, quarantined = 0;
  uint64_t audits_pending = 0, audits_passed = 0, audits_failed = 0;
  // Of the pending checks, those no active worker may take: every unflagged worker seen
  // within a lease's duration shares a host, GPU or token with the result's finisher or an
  // earlier checker (IndependentChecker). Under --double-check all on one host, all of them:
  // nothing below them becomes final until a worker of another host takes part.
  uint64_t audits_blocked = 0;
  u128 numbers_total = 0, numbers_finished = 0;
  double numbers_per_second = 0, eta_seconds = -1;
  struct Submission {
    StoredSubmission s;
    uint64_t units_total = 0, units_finished = 0;
  };
  std::vector<Submission> submissions;
  std::vector<StoredUnit> quarantined_units;
  bool draining = false;
  struct StatsJob {
    StoredStatsJob job;
    uint64_t units_total = 0, units_finished = 0, units_leased = 0, units_quarantined = 0;
    std::vector<StoredStatsUnit> quarantined_units;
  };
  std::vector<StatsJob> stats_jobs;
};

// Events since the process started (the server's /metrics counters, server/metrics.h).
struct CoordinatorCounters {
  uint64_t leases_search = 0, leases_audit = 0, leases_stats = 0;
  uint64_t leases_expired = 0;
  // Results handed in (search, audit and stats units), by what became of them; refused:
  // answered with an error (failed verification, stale or foreign lease, flagged worker...).
  uint64_t results_accepted = 0, results_duplicate = 0, results_audit_matched = 0, results_audit_mismatched = 0,
           results_refused = 0;
  uint64_t member_searches = 0, member_search_reuses = 0;  // ClassMemberCache
  // Checks whose search's record table was merged again from the finished units (its merge
  // was no longer kept: Coordinator::merge_history_), O(finished units) each.
  uint64_t check_table_merges = 0;
  uint64_t known_points = 0;  // held now (a gauge): collatzctl import --points
};

// A revoked result: its unit's end and when it was counted (0: never, nothing depends on it).
struct RevokedResult {
  u128 end = 0;
  int64_t counted_seq = 0;
  int64_t unit_id = 0;
};

struct WorkerReport {
  StoredWorker w;
  double numbers_per_second = 0;
  int64_t last_seen_ms = 0;
  uint64_t active_leases = 0;
  // The largest unit it leases (collatz-worker --max-unit-numbers) as its last lease request
  // since the server started gave it: 0 none; empty when it has asked for none since.
  std::optional<u128> max_unit_numbers;
};

class Coordinator {
 public:
  // Loads the state from `store`; active leases get a fresh deadline (their workers may
  // still be running). `tables` supply the base sieve (the width every worker registers
  // with) and FastDelay; the tables of every other width in use (the class width, widths
  // stored with units) are built here with options.build_tables, or Open fails.
  static grpc::Status Open(std::unique_ptr<CoordinatorStore> store, std::shared_ptr<const SearchTables> tables,
                           const Clock* clock, CoordinatorOptions options, std::unique_ptr<Coordinator>* out);

  // Worker side.
  grpc::Status Register(const WorkerDescription& d, int64_t* worker_id);
  // PERMISSION_DENIED when worker `worker_id` registered with another token than
  // `token_name` (one token cannot act as another's worker); OK for an unknown worker,
  // which the call itself answers.
  grpc::Status CheckWorkerToken(int64_t worker_id, const std::string& token_name);
  // A worker that accepts_stats may be given a stats unit (out->stats); one with
  // max_unit_numbers > 0 no search unit or audit larger than that (a CPU worker in a GPU
  // campaign: it waits for smaller units instead of holding a unit for days).
  grpc::Status Lease(int64_t worker_id, LeaseGrant* out) { return Lease(worker_id, false, 0, out); }
  grpc::Status Lease(int64_t worker_id, bool accepts_stats, LeaseGrant* out) {
    return Lease(worker_id, accepts_stats, 0, out);
  }
  grpc::Status Lease(int64_t worker_id, bool accepts_stats, u128 max_unit_numbers, LeaseGrant* out);
  CoordinatorCounters Counters();
  grpc::Status Heartbeat(int64_t worker_id, int64_t unit_id, const std::string& token, uint64_t numbers_done,
                         int64_t* deadline_ms, bool* stop);
  grpc::Status Complete(int64_t worker_id, int64_t unit_id, const std::string& token, const UnitResult& result,
                        double seconds, const std::string& engine, Disposition* disposition);
  grpc::Status Release(int64_t worker_id, int64_t unit_id, const std::string& token, bool failed,
                       const std::string& reason);
  // The result of a stats unit: a stats file (core/stats_file.h). Decoded, checked (range,
  // batch size, batch count, min <= avg <= max) and a few batches recomputed exactly; a
  // result that fails is rejected (PERMISSION_DENIED), its worker flagged, the unit re-queued.
  grpc::Status CompleteStats(int64_t worker_id, int64_t unit_id, const std::string& token,
                             const std::string& stats_file, double seconds, const std::string& engine,
                             Disposition* disposition);
  // Whether `token` is a lease of a stats unit (Heartbeat and Release route by token).
  bool IsStatsLease(const std::string& token);

  // Admin side.
  grpc::Status Submit(u128 begin, u128 end, Kinds kinds, u128 unit_size, int32_t priority, SubmitOutcome* out);
  grpc::Status Cancel(int64_t submission_id, uint64_t* units_removed);
  // A stats job: [begin, end) in batches of `batch` (begin, end multiples of it), cut into
  // batch-aligned units of about `unit_size` numbers (0: the default).
  grpc::Status SubmitStats(u128 begin, u128 end, uint32_t batch, u128 unit_size, int32_t priority,
                           StatsSubmitOutcome* out);
  grpc::Status CancelStats(int64_t job_id, uint64_t* units_removed);
  // Gives quarantined units another chance once their cause (a GPU, a driver) is fixed: the
  // failure count restarts at 0 and the unit is queued again (its last error is kept). One
  // search unit (unit_id), one stats unit (stats_unit_id), or with `all` every quarantined
  // unit of both kinds. NOT_FOUND for an unknown id, FAILED_PRECONDITION for a unit that is
  // not quarantined.
  grpc::Status RequeueQuarantined(int64_t unit_id, int64_t stats_unit_id, bool all, uint64_t* requeued);
  // Clears a flag once its cause is fixed (collatzctl unflag; proto UnflagRequest says what
  // it clears and refuses). *cleared: the worker, then the workers cleared with it.
  struct UnflagOutcome {
    std::vector<int64_t> cleared;
    uint64_t identities = 0;
    std::string reason;
  };
  grpc::Status Unflag(int64_t worker_id, UnflagOutcome* out);
  // FAILED_PRECONDITION while units remain; max_batches 0: kMaxStatsPageBatches.
  grpc::Status FetchStats(int64_t job_id, uint64_t first_batch, uint64_t max_batches, StatsPage* out);
  static constexpr uint64_t kMaxStatsPageBatches = uint64_t{1} << 18;  // 3 MiB: under gRPC's 4 MiB default
  grpc::Status Import(const TrustedImport& import, const std::string& source, u128* covered_prefix);
  // Known points (core/known_points.h): checked, stored, and in the merge of every later
  // lease. *added: the new ones; *stored: all the server holds now.
  grpc::Status AddKnownPoints(const std::vector<Record>& points, const std::string& source, size_t* added,
                              size_t* stored);
  grpc::Status Backup(const std::string& destination, uint64_t* bytes);
  CoordinatorStatus GetStatus();
  std::vector<WorkerReport> ListWorkers();
  MergedRecords Records();

  ~Coordinator();
  // Writes the merged records to the database if they changed (the server calls this
  // every second and at shutdown; final_records is derived data, rebuilt on open).
  // fresh false (the server's sweeper): merges again only when the last merge is older
  // than kMergeCostFactor times what it took.
  grpc::Status FlushMerged(bool fresh = true);
  // Expires leases past their deadline (also done by every Lease call). Returns how many.
  int ExpireLeases();
  // Graceful shutdown: no new leases from now on.
  void StopLeasing();
  grpc::Status IntegrityCheck(std::string* result);
  int sieve_bits() const { return base_bits_; }  // the base width
  int class_sieve_bits() const { return class_bits_; }  // the class units' width (the base: none)
  // The unit size of a submission of `kinds` that names none: default_unit_size, for
  // delay+class at most default_class_unit_size.
  u128 default_unit_size(Kinds kinds) const {
    return kinds == Kinds::kDelayAndClass ? std::min(options_.default_unit_size, options_.default_class_unit_size)
                                          : options_.default_unit_size;
  }
  // The wide delay-only units' width, or the base where their tables are not built.
  int delay_sieve_bits() const { return tables_by_bits_.count(delay_bits_) != 0 ? delay_bits_ : base_bits_; }
  int64_t lease_duration_ms() const { return options_.lease_duration_ms; }
  int64_t retry_after_ms() const { return options_.retry_after_ms; }

 private:
  grpc::Status LeaseImpl(int64_t worker_id, bool accepts_stats, u128 max_unit_numbers, LeaseGrant* out);
  // The server's re-run of a unit that settles an audit: its spec and the tables of its
  // width (null: none wanted).
  struct RefereeRun {
    UnitSpec spec;
    std::shared_ptr<const SearchTables> tables;
  };
  // With truth == nullptr an audit mismatch on a unit small enough for the server's CPU
  // asks for it (*referee set, nothing changed); the caller runs it without the lock and
  // calls again with the truth.
  grpc::Status CompleteImpl(int64_t worker_id, int64_t unit_id, const std::string& token, const UnitResult& result,
                            double seconds, const std::string& engine, const UnitResult* truth, RefereeRun* referee,
                            Disposition* disposition);
  grpc::Status CompleteStatsImpl(int64_t worker_id, int64_t unit_id, const std::string& token,
                                    const std::string& stats_file, double seconds, const std::string& engine,
                                    Disposition* disposition);
  void CountResult(const grpc::Status& st, const Disposition* disposition);

  struct UnitMem : StoredUnit {
    std::string search_token;  // the active search lease, if leased
    std::string audit_token;   // the active audit lease, if any
  };
  struct WorkerMem : StoredWorker {
    int64_t last_seen_ms = 0;
    std::optional<u128> max_unit_numbers;  // its last lease request's limit (0: none); not stored
  };
  struct StatsUnitMem : StoredStatsUnit {
    int32_t priority = 0;  // the job's
    std::string token;     // the active lease, if leased
  };
  using QueueKey = std::tuple<int32_t, u128, int64_t>;  // (-priority, begin, id)

  // Holds mu_ for a request that writes; on release, makes the request's writes durable
  // (group commit: one COMMIT covers every request that wrote since the last one) before
  // the request is answered.
  class WriteLock {
   public:
    explicit WriteLock(Coordinator* c) : c_(c) {
      c_->writers_in_flight_.fetch_add(1);
      lock_ = std::unique_lock<std::mutex>(c_->mu_);
    }
    ~WriteLock() {
      const uint64_t epoch = c_->batch_epoch_;  // the batch holding this request's writes
      c_->writers_in_flight_.fetch_sub(1);
      c_->MakeDurable(lock_, epoch);
    }

   private:
    Coordinator* c_;
    std::unique_lock<std::mutex> lock_;
  };
  void MakeDurable(std::unique_lock<std::mutex>& lock, uint64_t epoch);
  Coordinator(std::unique_ptr<CoordinatorStore> store, std::shared_ptr<const SearchTables> tables, const Clock* clock,
              CoordinatorOptions options);
  grpc::Status Load();
  grpc::Status LoadStats();  // coordinator_stats.cc
  // The tables of every width in use: the base, the class width, the widths stored with
  // units (with Load's lock held, before anything reads them; fixed from then on).
  grpc::Status BuildWidthTables();
  // A unit's width (its stored one; 0: the base) and the tables it is verified with.
  int UnitBits(const StoredUnit& u) const { return u.sieve_bits == 0 ? base_bits_ : u.sieve_bits; }
  const std::shared_ptr<const SearchTables>& TablesOf(const StoredUnit& u) const;
  // "19 and 25 bits": the widths in use, for messages.
  std::string WidthsText() const;
  // Whether units have several widths: then workers that do not honour Unit.sieve_bits are refused.
  bool SeveralWidths() const { return tables_by_bits_.size() > 1; }
  // FAILED_PRECONDITION for a worker that searches every unit with its one `sieve_bits`
  // (`unit_sieve_bits` false: an older binary) while this server's units are not all of
  // that width (at registration and at each lease); else OK.
  grpc::Status RefuseOneWidthWorker(bool unit_sieve_bits, int sieve_bits, const std::string& who) const;

  // Everything below runs with mu_ held.
  // One lease lifecycle for both unit kinds (coordinator_leases.cc): SearchKind and
  // StatsKind say what differs (maps, store calls, audit leases, log names).
  struct SearchKind;
  struct StatsKind;
  template <typename Kind>
  grpc::Status ReleaseLeaseLocked(int64_t worker_id, int64_t unit_id, const std::string& token, bool failed,
                                  const std::string& reason);
  template <typename Kind>
  grpc::Status ExpireKindLocked(int64_t now, int* expired);
  template <typename Kind>
  grpc::Status HeartbeatLeaseLocked(int64_t worker_id, int64_t unit_id, const std::string& token,
                                    uint64_t numbers_done, int64_t* deadline_ms, bool* stop);
  // A result for a unit already finished (a retried call, or a late result of an earlier
  // lease): the lease, if still active, is superseded; nothing is counted twice.
  template <typename Kind, typename LeaseT>
  grpc::Status DuplicateResultKindLocked(int64_t worker_id, int64_t unit_id, const std::string& token, LeaseT* lease,
                                         Disposition* disposition);
  grpc::Status DuplicateResultLocked(int64_t worker_id, int64_t unit_id, const std::string& token,
                                     StoredLease* lease, Disposition* disposition);
  grpc::Status DuplicateResultLocked(int64_t worker_id, int64_t unit_id, const std::string& token,
                                     StoredStatsLease* lease, Disposition* disposition);
  // A result that failed verification (`verify`), in a transaction of its own: the worker
  // is flagged, the lease rejected and the failure counted against the unit. Returns the
  // PERMISSION_DENIED that answers the worker. Instantiated in coordinator_leases.cc for
  // (SearchKind, UnitMem, StoredLease) and (StatsKind, StatsUnitMem, StoredStatsLease).
  template <typename Kind, typename UnitT, typename LeaseT>
  grpc::Status RejectResultKindLocked(int64_t worker_id, int64_t unit_id, const std::string& token,
                                      const Status& verify, int64_t now, UnitT* unit, LeaseT* lease);
  // The writes of an accepted result that both kinds make, inside the caller's transaction:
  // the lease completed, another active lease of the unit superseded (*superseded names it),
  // the worker credited (*credited). *finished is the unit as finished by this lease, for
  // the caller to write with its result.
  template <typename Kind, typename UnitT, typename LeaseT>
  grpc::Status WriteAcceptedKindLocked(int64_t worker_id, const std::string& token, double seconds, const UnitT& unit,
                                       const LeaseT& lease, UnitT* finished, std::string* superseded,
                                       StoredWorker* credited);
  // Memory once that transaction committed: the same changes as WriteAcceptedKindLocked's.
  template <typename Kind, typename UnitT, typename LeaseT>
  void ApplyAcceptedKindLocked(int64_t worker_id, const UnitT& finished, const std::string& superseded,
                               const StoredWorker& credited, UnitT* unit, LeaseT* lease);
  grpc::Status ExpireLocked(int64_t now, int* expired);  // search and stats leases
  grpc::Status ExpireSearchLocked(int64_t now, int* expired);
  // The worker of a request: known (else NOT_FOUND) and not flagged (else PERMISSION_DENIED).
  grpc::Status FindUsableWorker(int64_t worker_id, WorkerMem** worker);
  grpc::Status FindLease(int64_t worker_id, int64_t unit_id, const std::string& token, UnitMem** unit,
                         StoredLease** lease);
  UnitSpec SpecFor(const UnitMem& u, uint32_t floor, const std::vector<uint32_t>& holes) const;
  // A failed attempt: failures + 1, quarantine at the limit. Writes the unit and the attempt.
  grpc::Status RecordFailure(UnitMem* u, int64_t worker_id, const std::string& token, const std::string& kind,
                             const std::string& error, int64_t now);
  // Flags a worker and re-queues its unaudited finished units and its active leases. Its
  // identities (WorkerIdentities) are flagged with it, durably, and so is every other
  // worker registered from one of them.
  grpc::Status FlagWorker(int64_t worker_id, const std::string& reason, int64_t now);

  // Audits (coordinator_audit.cc).
  // An audit's result: compared with the stored one; a mismatch is settled by proof from
  // the entries (server/audit_settlement.h), by `truth` (the server's re-run) or by a third
  // worker's audit, and only the workers shown wrong are flagged.
  grpc::Status CompleteAuditLocked(int64_t worker_id, UnitMem* unit, StoredLease* lease, const UnitSpec& spec,
                                   const UnitResult& result, const UnitResult* truth, RefereeRun* referee,
                                   int64_t now, Disposition* disposition);
  // 'gpu:UUID' for each GPU with a UUID, else 'worker:HOST/INSTANCE_ID', else 'host:HOST';
  // and 'token:NAME' for a worker registered with a stored token.
  static std::vector<std::string> WorkerIdentities(const StoredWorker& w);
  // The flag an identity of `w` carries from an earlier worker, or "".
  std::string InheritedFlag(const StoredWorker& w) const;
  // How the reason of a worker flagged with `worker_id` for sharing an identity begins
  // (FlagWorker writes it, Unflag recognises it).
  static std::string SharedIdentityFlagPrefix(int64_t worker_id) {
    return "shares an identity with worker " + std::to_string(worker_id) + ", flagged: ";
  }
  grpc::Status LoadAudits();
  // Whether `worker_id` already gave an opinion on the unit's current result.
  bool HasOpinion(const UnitMem& u, int64_t worker_id) const;

  // Trust (coordinator_trust.cc, docs/PROTOCOL.md "Trust model").
  // 'host:NAME', 'gpu:UUID' and 'token:NAME' of a worker: a check never comes from a
  // worker sharing one of these with the result's finisher or an earlier checker of it.
  static std::vector<std::string> CheckIdentities(const StoredWorker& w);
  bool IndependentChecker(const UnitMem& u, int64_t worker_id) const;
  // Whether a result the worker just finished must be checked by another, under the policy.
  bool WantsCheck(const WorkerMem& w, int64_t unit_id, const std::string& token) const;
  // The table_seq of the lease whose result the unit holds (0: none).
  int64_t TableSeqOf(const UnitMem& u) const;
  // The record table for a check of `u` (an audit, a double check, the server's re-run):
  // the one its search had: the merge it came from while merge_history_ keeps it, else from
  // the counted results below it up to `seq` (counted in CoordinatorCounters::check_table_merges).
  void RecordTableAsOf(const UnitMem& u, int64_t seq, UnitSpec* spec);
  // Finished units (not in `skip`) and active leases whose record table, floor or holes came
  // from a merge holding one of `revoked` below them: (unit id or lease token, the revoked
  // unit it depended on).
  std::vector<std::pair<int64_t, int64_t>> DependentUnits(const std::vector<RevokedResult>& revoked,
                                                          const std::set<int64_t>& skip) const;
  std::vector<std::pair<std::string, int64_t>> DependentLeases(const std::vector<RevokedResult>& revoked) const;
  // Counts a result into the merge: gives it the next counted_seq (unless counted before).
  void CountResultIn(StoredUnit* u) { if (u->counted_seq == 0) u->counted_seq = ++counted_seq_; }
  // Adaptive: the worker agreed with a check (+1) or took part in a disagreement (reset; its
  // latest unchecked results are checked after all). Inside the caller's transaction.
  grpc::Status CreditCheckLocked(int64_t worker_id, bool agreed);
  // Compares the merge below the published bound with the published delay records and flags
  // the finisher of the first unit that makes a difference (then merges again, and so on).
  grpc::Status CheckAgainstPublishedLocked(int64_t now);
  // Finished units whose results are merged: not those waiting for their audit (an
  // audit disputed included), so that a lie an audit will catch never becomes a record.
  std::vector<FinishedUnit> MergeInputs() const;
  // Its part for stats: finished stats units of the worker and its active stats leases
  // go back to pending.
  grpc::Status FlagWorkerStats(int64_t worker_id, int64_t now);

  // Stats units (coordinator_stats.cc).
  grpc::Status ExpireStatsLocked(int64_t now, int* expired);  // coordinator_leases.cc
  grpc::Status LeaseStatsLocked(int64_t worker_id, int64_t now, LeaseGrant* out);
  grpc::Status FindStatsLease(int64_t worker_id, int64_t unit_id, const std::string& token, StatsUnitMem** unit,
                              StoredStatsLease** lease);
  grpc::Status RecordStatsFailure(StatsUnitMem* u, int64_t worker_id, const std::string& token, const std::string& kind,
                                  const std::string& error, int64_t now);
  void RequeueStats(StatsUnitMem* u);
  // Key of the best pending stats unit, or nullptr.
  const QueueKey* StatsQueueHead() const;
  grpc::Status RevokeFinished(UnitMem* u, int64_t now, const std::string& why);
  // Revokes the results of `unit_ids` and, transitively, every result and active lease
  // whose record table, floor or holes depended on one of them (plus the active leases
  // `leases_too`); their units are searched again. Inside the caller's transaction.
  grpc::Status RevokeResultsLocked(const std::vector<int64_t>& unit_ids, const std::string& why, int64_t now,
                                   const std::vector<std::string>& leases_too = {});
  void Requeue(UnitMem* u);
  // A pending unit into its queue and out: search units keep queue_ and queued_sizes_
  // together, stats units stats_queue_.
  void Enqueue(const UnitMem& u);
  void Dequeue(const UnitMem& u);
  void Enqueue(const StatsUnitMem& u) { stats_queue_.insert({-u.priority, u.begin, u.id}); }
  void Dequeue(const StatsUnitMem& u) { stats_queue_.erase({-u.priority, u.begin, u.id}); }
  // The first pending search unit of at most max_numbers (0: any), in queue order; nullptr if none.
  UnitMem* FirstQueuedUnitUpTo(u128 max_numbers);
  void Remerge();  // marks the merge stale
  void RefreshMergedLocked(bool force);
  bool WantsAudit(int64_t unit_id) const;
  std::string NewToken();

  std::unique_ptr<CoordinatorStore> store_;
  std::shared_ptr<const SearchTables> tables_;  // the base width's
  const Clock* clock_;
  CoordinatorOptions options_;
  // Set by BuildWidthTables and fixed from then on (read without mu_): the base, class and
  // delay widths, and the tables of every width in use.
  int base_bits_ = 0, class_bits_ = 0, delay_bits_ = 0;
  std::map<int, std::shared_ptr<const SearchTables>> tables_by_bits_;

  std::mutex mu_;
  std::condition_variable durable_cv_;
  std::atomic<int> writers_in_flight_{0};
  uint64_t batch_epoch_ = 1, durable_epoch_ = 0;  // batches: the open one, the last committed
  bool draining_ = false;
  std::map<int64_t, StoredSubmission> submissions_;
  std::map<int64_t, UnitMem> units_;
  std::set<QueueKey> queue_;            // pending, not quarantined
  std::map<u128, int64_t> queued_sizes_;  // queue_'s units by size: whether any fits a lease's limit
  std::set<int64_t> audit_queue_;       // finished, audit wanted, no active audit lease
  std::map<std::string, StoredLease> leases_;
  std::set<std::string> active_tokens_;  // every active lease (and some that ended since)
  // No active lease's deadline is before this (a scan sets it, and every new or extended
  // deadline lowers it if earlier): until then a lease call skips the scan for expired
  // leases, which costs O(active leases) per call (10,000 GPUs hold 10,000+).
  int64_t next_deadline_ms_ = INT64_MIN;
  std::map<int64_t, WorkerMem> workers_;
  std::map<int64_t, FinishedUnit> finished_;
  // Open audit mismatches against a unit's current result: (auditor, its result as
  // DescribeUnitResult), waiting for a third opinion.
  struct Dispute {
    int64_t auditor = 0;
    std::string result;
  };
  std::map<int64_t, std::vector<Dispute>> disputes_;
  std::map<std::string, FlaggedIdentity> flagged_identities_;
  std::set<std::string> referee_tokens_;  // audit leases whose unit the server is re-running
  std::vector<TrustedImport> imports_;
  std::vector<Record> known_points_;  // ascending by n (core/known_points.h)
  MergedRecords merged_;
  // counted_seq_: the last counted_seq given; merged_seq_: its value when merged_ was made
  // (what a lease made from merged_ depends on, StoredLease::table_seq).
  int64_t counted_seq_ = 0, merged_seq_ = 0;
  // The record tables of earlier merges (covered prefix and final delay records alone), by
  // merged_seq_, while a lease or a result awaiting its check was made from them: a check
  // repeats its unit with the table its search had (RecordTableAsOf), which without them is a
  // merge of every counted result below the unit, O(finished units) a check (under `all`
  // nearly every check, since the units below are counted after its search). Not stored: after
  // a restart RecordTableAsOf merges again. Pruned in RefreshMergedLocked.
  std::map<int64_t, std::shared_ptr<const MergedRecords>> merge_history_;
  // Pruned (a pass over leases and units) when it reaches this size: 256, or twice what the
  // last pruning kept, so that many awaited checks do not prune at every merge.
  size_t merge_history_prune_at_ = 256;
  void PruneMergeHistoryLocked();
  // The published delay records below min(their bound, the checked prefix) already agreed
  // with this merge (checked again when the merge changes).
  bool published_checked_ = false;
  ClassMemberCache member_cache_;  // the class-member search of the last frontier lease
  CoordinatorCounters counters_;   // under mu_
  bool merged_dirty_ = false, merged_written_ = false;
  int64_t last_merge_ms_ = 0;
  // A merge takes time in proportion to the finished units (0.2 s for the 1.4 million
  // 2^46-units of 10^20 numbers, under the lock): except when a caller needs it fresh, it
  // runs at most once per kMergeCostFactor times its last duration (5% of a core).
  static constexpr int64_t kMergeCostFactor = 20;
  int64_t last_merge_cost_ms_ = 0;
  uint64_t audits_passed_ = 0, audits_failed_ = 0;
  std::deque<std::pair<int64_t, u128>> recent_;  // (time, numbers) of recent completions
  std::map<int64_t, StoredStatsJob> stats_jobs_;
  std::map<int64_t, StatsUnitMem> stats_units_;
  std::set<QueueKey> stats_queue_;                    // pending stats units, not quarantined
  std::map<std::string, StoredStatsLease> stats_leases_;
  std::set<std::string> stats_active_tokens_;
  int64_t next_stats_deadline_ms_ = INT64_MIN;  // as next_deadline_ms_, for stats leases
  std::mt19937_64 rng_;
};

}  // namespace collatz::server
