// One lease loop per device (each GPU, or the CPU engine): lease a unit, search it while
// a monitor thread heartbeats the lease (extending it) and prefetches the next lease
// before the unit ends, spool the result, hand it to the sender, repeat. On shutdown it
// takes no new work, releases the prefetched lease at once and the current one when the
// grace period runs out.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "core/search_engine.h"
#include "worker/backoff.h"
#include "client/worker_connection.h"
#include "worker/metrics.h"
#include "worker/result_sender.h"
#include "worker/spool.h"
#include "worker/stats_engines.h"

namespace collatz::worker {

// Set by the signal handler thread; read by every lane.
struct ShutdownState {
  std::atomic<bool> stop_taking_work{false};
  // steady_clock milliseconds after which running units are cancelled and released.
  std::atomic<int64_t> grace_deadline_ms{INT64_MAX};
  // A lane hit something no retry fixes (flagged worker, sieve mismatch): the process exits 1.
  std::atomic<bool> fatal{false};
};

int64_t SteadyNowMs();

struct LeaseLoopOptions {
  std::string device;                 // "cpu", "gpu0": log and metrics label
  double prefetch_fraction = 0.5;     // lease the next unit once this much of the current is done
  std::chrono::milliseconds heartbeat_interval{0};  // 0: a quarter of the server's lease duration
  int max_idle_seconds = 0;           // > 0: the loop ends after this long without work
  int max_consecutive_failures = 3;   // then the device is taken out of service
  bool crash_after_spool = false;     // test hook: SIGKILL the process after the first result is spooled
  bool lie_in_stats = false;          // test hook: report a wrong sum in the last batch of every stats unit
  BackoffOptions backoff;
};

class LeaseLoop {
 public:
  // `stats` computes the units of stats jobs (docs/PROTOCOL.md); the server only leases
  // them to workers that accept them, which every lane does.
  LeaseLoop(SearchEngine* engine, StatsEngine* stats, client::WorkerConnection* connection, Spool* spool,
            ResultSender* sender, WorkerMetrics* metrics, ShutdownState* shutdown, LeaseLoopOptions options);
  ~LeaseLoop();

  void Start();
  void Join();
  uint64_t units_done() const { return units_done_.load(); }
  // Whether the loop ended because its device failed unit after unit.
  bool gave_up() const { return gave_up_.load(); }

 private:
  enum class CancelReason { kNone, kShutdown, kServerStop, kLeaseLost };

  void Run();
  // Blocks (with backoff while the server is unreachable) until a unit is leased; false
  // when shutting down, idle too long, or after a fatal refusal.
  bool AcquireLease(client::Lease* out);
  // One attempt, for the prefetch; false when there is no unit now or the call failed.
  bool TryLease(client::Lease* out);
  void RunUnit(const client::Lease& lease);
  void Release(const client::Lease& lease, bool failed, const std::string& reason);
  std::chrono::milliseconds HeartbeatInterval() const;
  std::string Name(const client::Lease& lease) const;

  SearchEngine* engine_;
  StatsEngine* stats_;
  client::WorkerConnection* connection_;
  Spool* spool_;
  ResultSender* sender_;
  WorkerMetrics* metrics_;
  ShutdownState* shutdown_;
  LeaseLoopOptions options_;
  std::optional<client::Lease> prefetched_;  // guarded by prefetch_mu_
  std::mutex prefetch_mu_;
  std::atomic<uint64_t> units_done_{0};
  int consecutive_failures_ = 0;
  std::atomic<bool> gave_up_{false};
  std::thread thread_;
};

}  // namespace collatz::worker
