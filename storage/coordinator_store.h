// The coordinator's persistent state (schema v2, storage/coordinator_schema.h) beside the
// record database of v1. The coordinator keeps a copy of this state in memory and writes
// every change through here inside one transaction (Begin ... Commit), so a crash at any
// point leaves either the old or the new state. One writer: the coordinator's mutex.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/merge.h"
#include "core/status.h"
#include "core/unit.h"
#include "storage/record_db.h"
#include "storage/sqlite_statement.h"

namespace collatz {

struct StoredSubmission {
  int64_t id = 0;
  u128 begin = 0, end = 0, unit_size = 0;
  Kinds kinds = Kinds::kDelayAndClass;
  int32_t priority = 0;
  bool cancelled = false;
};

enum class StoredUnitState { kPending, kLeased, kFinished };
enum class AuditState { kNone, kWanted, kPassed };

struct StoredUnit {
  int64_t id = 0;
  u128 begin = 0, end = 0;
  Kinds kinds = Kinds::kDelayAndClass;
  StoredUnitState state = StoredUnitState::kPending;
  int64_t submission_id = 0;  // 0: a unit stored by `collatzctl run` (no bookkeeping row)
  int32_t priority = 0;
  int32_t failures = 0;
  bool quarantined = false;
  std::string last_error;
  int64_t finished_by = 0;  // worker id, 0 if none
  std::string finished_token;
  AuditState audit = AuditState::kNone;
  // The join-sieve width the unit is searched, verified and audited with, fixed when it is
  // cut (schema v8); 0: the coordinator's base width (rows from before v8).
  int32_t sieve_bits = 0;
  // Trust bookkeeping (schema v10, storage/trust_schema.h): when the result entered the
  // merge leases are made from (0: never), and the worker whose agreement checked it.
  int64_t counted_seq = 0;
  int64_t checked_by = 0;
};

struct StoredWorker {
  int64_t id = 0;
  std::string host;
  std::vector<std::pair<std::string, std::string>> gpus;  // (model, uuid)
  std::string driver, binary_version, backend;
  int32_t sieve_bits = 0;
  // The work hash version (core/work_hash.h) the worker registered with; 1 for workers
  // registered before schema v4, whose binaries did not send it.
  uint32_t work_hash_version = 0;
  // The worker's installation id (RegisterRequest.instance_id, schema v5); "" if none.
  std::string instance_id;
  // Whether it searches each unit with the width its lease names (RegisterRequest.
  // unit_sieve_bits, schema v8); false for workers registered before.
  bool unit_sieve_bits = false;
  // The stored token it registered with (tokens.name, schema v9); "" for the server's
  // shared token, no token, and workers registered before v9. Fixed at registration.
  std::string token_name;
  // Agreeing checks of its results since its last disagreement (schema v10).
  uint64_t checks_agreed = 0;
  bool flagged = false;
  std::string flag_reason;
  uint64_t units_finished = 0;
  u128 numbers_finished = 0;
  double seconds = 0;
};

// One audit of a unit (table audits). An `open` mismatch waits for a third opinion.
struct StoredAudit {
  int64_t unit_id = 0;
  int64_t original_worker = 0, auditor = 0;  // 0: none
  std::string token;                         // the auditor's lease
  std::string audited_token;                 // the lease whose result was audited
  bool matched = false;
  std::string detail;
  std::string auditor_result;  // DescribeUnitResult of the auditor's result
  std::string verdict;         // docs/DATABASE.md lists them
  int64_t at_ms = 0;
};
inline constexpr const char* kVerdictOpen = "open";

// A flag kept with what identifies a machine ('gpu:UUID' or 'host:NAME'), so that a
// worker registering again from it is flagged too (schema v5).
struct FlaggedIdentity {
  std::string identity;
  int64_t worker_id = 0;
  std::string reason;
  int64_t flagged_ms = 0;
};

enum class LeasePurpose { kSearch, kAudit };
enum class LeaseState { kActive, kExpired, kReleased, kCompleted, kSuperseded, kRevoked, kRejected };
const char* LeaseStateName(LeaseState s);

struct StoredLease {
  std::string token;
  int64_t unit_id = 0;
  int64_t worker_id = 0;
  LeasePurpose purpose = LeasePurpose::kSearch;
  LeaseState state = LeaseState::kActive;
  uint32_t floor = 0;
  std::vector<uint32_t> open_holes;
  int64_t issued_ms = 0;
  int64_t deadline_ms = 0;
  // The newest counted result in the merge its record table, floor and holes came from
  // (schema v10): the lease depends on the counted results below its unit up to it.
  int64_t table_seq = 0;
};

// Stats jobs (schema v3, storage/stats_schema.h).
struct StoredStatsJob {
  int64_t id = 0;
  u128 begin = 0, end = 0, unit_size = 0;
  uint32_t batch = 0;
  int32_t priority = 0;
  bool cancelled = false;
};

// A stats unit without its result (results are read from the database when fetched).
struct StoredStatsUnit {
  int64_t id = 0;
  int64_t job_id = 0;
  u128 begin = 0, end = 0;
  StoredUnitState state = StoredUnitState::kPending;
  int32_t failures = 0;
  bool quarantined = false;
  std::string last_error;
  int64_t finished_by = 0;
  std::string finished_token;
};

struct StoredStatsLease {
  std::string token;
  int64_t unit_id = 0;  // a stats unit
  int64_t worker_id = 0;
  LeaseState state = LeaseState::kActive;
  int64_t issued_ms = 0;
  int64_t deadline_ms = 0;
};

class CoordinatorStore {
 public:
  // Opens (creating if missing) and migrates the database at `path`.
  static Status Open(const std::string& path, std::unique_ptr<CoordinatorStore>* out);
  ~CoordinatorStore();

  RecordDb& records() { return *records_; }

  Status LoadSubmissions(std::vector<StoredSubmission>* out);
  Status LoadUnits(std::vector<StoredUnit>* out);
  Status LoadWorkers(std::vector<StoredWorker>* out);
  Status LoadLeases(std::vector<StoredLease>* out);
  // Finished units with their results (v1 tables) and imports.
  Status LoadFinishedUnits(std::vector<std::pair<int64_t, FinishedUnit>>* out);

  // Group commit: the writes of one request form a savepoint inside a batch transaction
  // that FlushBatch commits (one fsync for many requests). A Write that is not committed
  // rolls back to its savepoint and leaves the rest of the batch alone. The caller must
  // not answer a request before FlushBatch has returned Ok after its writes.
  class Write {
   public:
    explicit Write(CoordinatorStore* store);
    ~Write();
    Write(const Write&) = delete;
    Write& operator=(const Write&) = delete;
    const Status& status() const { return status_; }
    Status Commit();

   private:
    CoordinatorStore* store_;
    Status status_;
    bool open_ = false;
  };
  std::unique_ptr<Write> Begin() { return std::make_unique<Write>(this); }
  // Commits the batch if one is open (no-op otherwise).
  Status FlushBatch();
  // False if SQLite rolled the whole batch back by itself (I/O error, disk full): the
  // committed state on disk is then all that is known to be true.
  bool BatchIntact() const;

  Status InsertSubmission(const StoredSubmission& s, int64_t* id);
  Status SetSubmissionCancelled(int64_t id);
  Status InsertUnit(const StoredUnit& u, int64_t* id);
  Status UpdateUnit(const StoredUnit& u);  // state and bookkeeping
  Status DeleteUnit(int64_t id);
  Status InsertWorker(const StoredWorker& w, int64_t* id);
  Status UpdateWorker(const StoredWorker& w);
  Status InsertLease(const StoredLease& l);
  Status UpdateLease(const StoredLease& l);  // state and deadline
  Status InsertAttempt(int64_t unit_id, int64_t worker_id, const std::string& token, const std::string& kind,
                       const std::string& error, int64_t at_ms);
  Status InsertAudit(const StoredAudit& a);
  // Mismatches with verdict `open`, by id.
  Status LoadOpenAudits(std::vector<StoredAudit>* out);
  // Keeps the first flag of an identity (INSERT OR IGNORE).
  Status InsertFlaggedIdentity(const FlaggedIdentity& f);
  Status LoadFlaggedIdentities(std::vector<FlaggedIdentity>* out);
  // Removes the identities flagged with `worker_id` (an operator cleared its flag).
  Status DeleteFlaggedIdentitiesOf(int64_t worker_id);
  Status StoreUnitResult(int64_t unit_id, const UnitResult& r, const UnitProvenance& p);
  Status DeleteUnitResult(int64_t unit_id);
  Status WriteMergedRecords(const MergedRecords& merged);
  Status StoreImport(const TrustedImport& import, const std::string& source);
  // One import of known points (storage/known_points_table.h); *added: the new ones.
  Status StoreKnownPoints(const std::vector<Record>& points, const std::string& source, size_t* added);

  // Stats jobs. Results are stats files (core/stats_file.h) stored as they arrived.
  Status LoadStatsJobs(std::vector<StoredStatsJob>* out);
  Status LoadStatsUnits(std::vector<StoredStatsUnit>* out);
  Status LoadStatsLeases(std::vector<StoredStatsLease>* out);
  Status InsertStatsJob(const StoredStatsJob& j, int64_t* id);
  Status SetStatsJobCancelled(int64_t id);
  Status InsertStatsUnit(const StoredStatsUnit& u, int64_t* id);
  // State and bookkeeping; a unit that is not finished loses its stored result.
  Status UpdateStatsUnit(const StoredStatsUnit& u);
  // Marks the unit finished with its result (u.state must be kFinished).
  Status FinishStatsUnit(const StoredStatsUnit& u, const std::string& result, const std::string& engine, double seconds);
  Status DeleteStatsUnit(int64_t id);
  Status InsertStatsLease(const StoredStatsLease& l);
  Status UpdateStatsLease(const StoredStatsLease& l);
  Status InsertStatsAttempt(int64_t unit_id, int64_t worker_id, const std::string& token, const std::string& kind,
                            const std::string& error, int64_t at_ms);
  // The stored results of the finished units of `job_id` that overlap [from, to), by begin.
  Status LoadStatsResults(int64_t job_id, u128 from, u128 to, std::vector<std::pair<u128, std::string>>* out);

  // For the dashboard (schema v5, storage/dashboard_store.cc): `numbers` more finished
  // in the minute holding at_ms, and an event (kind: a value the events table allows).
  // Adds one accepted unit of `numbers` to its minute: search units (throughput), stats
  // units (stats_throughput).
  Status AddThroughput(int64_t at_ms, u128 numbers);
  Status AddStatsThroughput(int64_t at_ms, u128 numbers);
  Status InsertEvent(int64_t at_ms, const std::string& kind, const std::string& detail);

  // Online backup of the whole database into a new file.
  Status Backup(const std::string& destination, uint64_t* bytes);
  // PRAGMA integrity_check; "ok" when healthy.
  Status IntegrityCheck(std::string* result);

 private:
  CoordinatorStore() = default;
  // A cached prepared statement for `sql`.
  Status Prepared(const std::string& sql, SqliteStatement** out);
  // Adds a unit of `numbers` to the row of at_ms's minute (read_sql: its numbers; upsert_sql:
  // insert or add, with ?1 the minute and ?2 the new total).
  Status AddMinuteTotal(const char* read_sql, const char* upsert_sql, int64_t at_ms, u128 numbers);
  // What search and stats leases and attempts share; only the table differs
  // (`sql` binds ?1 token, ?2 state, ?3 deadline; resp. the six attempt columns).
  Status UpdateLeaseRow(const std::string& sql, const std::string& token, LeaseState state, int64_t deadline_ms);
  Status InsertAttemptRow(const std::string& sql, int64_t unit_id, int64_t worker_id, const std::string& token,
                          bool empty_token_is_null, const std::string& kind, const std::string& error, int64_t at_ms);

  sqlite3* db_ = nullptr;
  std::unique_ptr<RecordDb> records_;
  std::map<std::string, std::unique_ptr<SqliteStatement>> statements_;
  bool batch_open_ = false;
};

}  // namespace collatz
