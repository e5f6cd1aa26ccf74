// One lease loop per device (each GPU, or the CPU engine): lease a unit, search it with the
// device's engine of the unit's sieve width (UnitEngines) while a monitor thread heartbeats
// the lease (extending it) and prefetches the next lease before the unit ends, spool the
// result, hand it to the sender, repeat. On shutdown it
// takes no new work, releases the prefetched lease at once and the current one when the
// grace period runs out.
//
// Everything outside the process comes in through small interfaces: the coordinator
// (client::WorkerConnection), the spool (SpoolWriter) and the time (Clock), so that a
// unit's whole course (RunUnit) is tested with fakes, and faults are injected there
// rather than through flags of the production binary.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "client/worker_connection.h"
#include "core/search_engine.h"
#include "worker/backoff.h"
#include "worker/clock.h"
#include "worker/metrics.h"
#include "worker/result_sender.h"
#include "worker/spool.h"
#include "worker/stats_engines.h"
#include "worker/unit_engines.h"

namespace collatz::worker {

// Set by the signal handler thread; read by every lane.
struct ShutdownState {
  std::atomic<bool> stop_taking_work{false};
  // steady_clock milliseconds after which running units are cancelled and released.
  std::atomic<int64_t> grace_deadline_ms{INT64_MAX};
  // A lane hit something no retry fixes (flagged worker, sieve mismatch): the process exits 1.
  std::atomic<bool> fatal{false};
};

struct LeaseLoopOptions {
  std::string device;                 // "cpu", "gpu0": log and metrics label
  double prefetch_fraction = 0.5;     // lease the next unit once this much of the current is done
  std::chrono::milliseconds heartbeat_interval{0};  // 0: a quarter of the server's lease duration
  int max_idle_seconds = 0;           // > 0: the loop ends after this long without work
  int max_consecutive_failures = 3;   // then the device is taken out of service
  std::chrono::milliseconds poll_interval{100};  // how often the monitor looks at the clock
  BackoffOptions backoff;
};

class LeaseLoop {
 public:
  // `engines` searches each unit with the engine of its width (a unit whose width it refuses
  // is released as failed); `stats` computes the units of stats jobs (docs/PROTOCOL.md); the
  // server only leases them to workers that accept them, which every lane does. `sender`
  // (may be null) is told of each spooled result; `clock` null means the steady clock.
  LeaseLoop(UnitEngines* engines, StatsEngine* stats, client::WorkerConnection* connection, SpoolWriter* spool,
            ResultSender* sender, WorkerMetrics* metrics, ShutdownState* shutdown, LeaseLoopOptions options,
            const Clock* clock = nullptr);
  ~LeaseLoop();

  void Start();
  void Join();
  uint64_t units_done() const { return units_done_.load(); }
  // Whether the loop ended because its device failed unit after unit.
  bool gave_up() const { return gave_up_.load(); }

  // One leased unit from start to end: search it (heartbeating, prefetching, cancelling on
  // shutdown, a server stop or a lost lease), then spool and hand on its result, or release
  // it. Run calls it for every lease; public for the tests.
  void RunUnit(const client::Lease& lease);

 private:
  enum class CancelReason { kNone, kShutdown, kServerStop, kLeaseLost };

  void Run();
  // Blocks (with backoff while the server is unreachable) until a unit is leased; false
  // when shutting down, idle too long, or after a fatal refusal.
  bool AcquireLease(client::Lease* out);
  // One attempt, for the prefetch; false when there is no unit now or the call failed.
  bool TryLease(client::Lease* out);
  void Release(const client::Lease& lease, bool failed, const std::string& reason);
  std::chrono::milliseconds HeartbeatInterval() const;
  std::string Name(const client::Lease& lease) const;

  UnitEngines* engines_;
  StatsEngine* stats_;
  client::WorkerConnection* connection_;
  SpoolWriter* spool_;
  ResultSender* sender_;
  WorkerMetrics* metrics_;
  ShutdownState* shutdown_;
  LeaseLoopOptions options_;
  SteadyClock steady_clock_;
  const Clock* clock_;
  std::optional<client::Lease> prefetched_;  // guarded by prefetch_mu_
  std::mutex prefetch_mu_;
  std::atomic<uint64_t> units_done_{0};
  int consecutive_failures_ = 0;
  std::atomic<bool> gave_up_{false};
  std::thread thread_;
};

}  // namespace collatz::worker
