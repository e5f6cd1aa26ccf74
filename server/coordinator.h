// The coordinator's logic, apart from gRPC wiring (server/services.h) and the binary
// (server/server_main.cc): submissions cut into units, leases with deadlines and tokens,
// verification and audits of results, quarantine, and the merged records. Every state
// change is written to the CoordinatorStore in one transaction before memory changes, so
// a crash or SIGKILL at any point loses nothing committed and counts nothing twice.
// Thread-safe (one mutex); time comes from an injected Clock.
#pragma once

#include <grpcpp/support/status.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/merge.h"
#include "core/unit.h"
#include "core/unit_search.h"
#include "server/clock.h"
#include "storage/coordinator_store.h"

namespace collatz::server {

struct CoordinatorOptions {
  u128 default_unit_size = Pow2(46);   // a few minutes of one H100 near 2^60
  int64_t lease_duration_ms = 10 * 60 * 1000;
  int max_failures = 3;                // failed attempts before a unit is quarantined
  double audit_fraction = 0.0;         // fraction of finished units re-run by another worker
  uint64_t audit_seed = 0x5eed;
  uint64_t max_units_per_submission = 1'000'000;
  int64_t retry_after_ms = 2000;       // told to a worker when there is no work
  // Leases use a merge of the verified results at most this old (0: always fresh).
  int64_t merge_interval_ms = 0;
};

struct WorkerDescription {
  std::string host;
  std::vector<std::pair<std::string, std::string>> gpus;  // (model, uuid)
  std::string driver, binary_version, backend;
  int sieve_bits = 0;
};

struct LeaseGrant {
  bool has_unit = false;
  int64_t unit_id = 0;
  UnitSpec spec;
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

struct CoordinatorStatus {
  u128 covered_prefix = 1, class_covered_prefix = 1;
  uint64_t pending = 0, leased = 0, finished = 0, quarantined = 0;
  uint64_t audits_pending = 0, audits_passed = 0, audits_failed = 0;
  u128 numbers_total = 0, numbers_finished = 0;
  double numbers_per_second = 0, eta_seconds = -1;
  struct Submission {
    StoredSubmission s;
    uint64_t units_total = 0, units_finished = 0;
  };
  std::vector<Submission> submissions;
  std::vector<StoredUnit> quarantined_units;
  bool draining = false;
};

struct WorkerReport {
  StoredWorker w;
  double numbers_per_second = 0;
  int64_t last_seen_ms = 0;
  uint64_t active_leases = 0;
};

class Coordinator {
 public:
  // Loads the state from `store`; active leases get a fresh deadline (their workers may
  // still be running). `tables` supply the sieve every worker must use and FastDelay.
  static grpc::Status Open(std::unique_ptr<CoordinatorStore> store, std::shared_ptr<const SearchTables> tables,
                           const Clock* clock, CoordinatorOptions options, std::unique_ptr<Coordinator>* out);

  // Worker side.
  grpc::Status Register(const WorkerDescription& d, int64_t* worker_id);
  grpc::Status Lease(int64_t worker_id, LeaseGrant* out);
  grpc::Status Heartbeat(int64_t worker_id, int64_t unit_id, const std::string& token, uint64_t numbers_done,
                         int64_t* deadline_ms, bool* stop);
  grpc::Status Complete(int64_t worker_id, int64_t unit_id, const std::string& token, const UnitResult& result,
                        double seconds, const std::string& engine, Disposition* disposition);
  grpc::Status Release(int64_t worker_id, int64_t unit_id, const std::string& token, bool failed,
                       const std::string& reason);

  // Admin side.
  grpc::Status Submit(u128 begin, u128 end, Kinds kinds, u128 unit_size, int32_t priority, SubmitOutcome* out);
  grpc::Status Cancel(int64_t submission_id, uint64_t* units_removed);
  grpc::Status Import(const TrustedImport& import, const std::string& source, u128* covered_prefix);
  grpc::Status Backup(const std::string& destination, uint64_t* bytes);
  CoordinatorStatus GetStatus();
  std::vector<WorkerReport> ListWorkers();
  MergedRecords Records();

  ~Coordinator();
  // Writes the merged records to the database if they changed (the server calls this
  // every second and at shutdown; final_records is derived data, rebuilt on open).
  grpc::Status FlushMerged();
  // Expires leases past their deadline (also done by every Lease call). Returns how many.
  int ExpireLeases();
  // Graceful shutdown: no new leases from now on.
  void StopLeasing();
  grpc::Status IntegrityCheck(std::string* result);
  int sieve_bits() const { return tables_->sieve->bits(); }
  int64_t lease_duration_ms() const { return options_.lease_duration_ms; }
  int64_t retry_after_ms() const { return options_.retry_after_ms; }

 private:
  struct UnitMem : StoredUnit {
    std::string search_token;  // the active search lease, if leased
    std::string audit_token;   // the active audit lease, if any
  };
  struct WorkerMem : StoredWorker {
    int64_t last_seen_ms = 0;
  };
  using QueueKey = std::tuple<int32_t, u128, int64_t>;  // (-priority, begin, id)

  class WriteLock;
  void MakeDurable(std::unique_lock<std::mutex>& lock, uint64_t epoch);
  Coordinator(std::unique_ptr<CoordinatorStore> store, std::shared_ptr<const SearchTables> tables, const Clock* clock,
              CoordinatorOptions options);
  grpc::Status Load();

  // Everything below runs with mu_ held.
  grpc::Status ExpireLocked(int64_t now, int* expired);
  grpc::Status FindLease(int64_t worker_id, int64_t unit_id, const std::string& token, UnitMem** unit,
                         StoredLease** lease);
  UnitSpec SpecFor(const UnitMem& u, uint32_t floor, const std::vector<uint32_t>& holes) const;
  // A failed attempt: failures + 1, quarantine at the limit. Writes the unit and the attempt.
  grpc::Status RecordFailure(UnitMem* u, int64_t worker_id, const std::string& token, const std::string& kind,
                             const std::string& error, int64_t now);
  // Flags a worker and re-queues its unaudited finished units and its active leases.
  grpc::Status FlagWorker(int64_t worker_id, const std::string& reason, int64_t now);
  grpc::Status RevokeFinished(UnitMem* u, int64_t now);
  void Requeue(UnitMem* u);
  void Remerge();  // marks the merge stale
  void RefreshMergedLocked(bool force);
  bool WantsAudit(int64_t unit_id) const;
  std::string NewToken();

  std::unique_ptr<CoordinatorStore> store_;
  std::shared_ptr<const SearchTables> tables_;
  const Clock* clock_;
  CoordinatorOptions options_;

  std::mutex mu_;
  std::condition_variable durable_cv_;
  std::atomic<int> writers_in_flight_{0};
  uint64_t batch_epoch_ = 1, durable_epoch_ = 0;  // batches: the open one, the last committed
  bool draining_ = false;
  std::map<int64_t, StoredSubmission> submissions_;
  std::map<int64_t, UnitMem> units_;
  std::set<QueueKey> queue_;            // pending, not quarantined
  std::set<int64_t> audit_queue_;       // finished, audit wanted, no active audit lease
  std::map<std::string, StoredLease> leases_;
  std::set<std::string> active_tokens_;  // every active lease (and some that ended since)
  std::map<int64_t, WorkerMem> workers_;
  std::map<int64_t, FinishedUnit> finished_;
  std::vector<TrustedImport> imports_;
  MergedRecords merged_;
  bool merged_dirty_ = false, merged_written_ = false;
  int64_t last_merge_ms_ = 0;
  uint64_t audits_passed_ = 0, audits_failed_ = 0;
  std::deque<std::pair<int64_t, u128>> recent_;  // (time, numbers) of recent completions
  std::mt19937_64 rng_;
};

}  // namespace collatz::server
