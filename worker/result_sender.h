// Sends spooled results to the server and removes each file only after the server
// acknowledged it. One thread per process; lanes wake it after spooling a result. While
// the server is unreachable it retries with capped, jittered exponential backoff; the
// search lanes keep running meanwhile.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "worker/backoff.h"
#include "client/worker_connection.h"
#include "worker/metrics.h"
#include "worker/spool.h"

namespace collatz::worker {

class ResultSender {
 public:
  ResultSender(Spool* spool, client::WorkerConnection* connection, WorkerMetrics* metrics, BackoffOptions backoff);
  ~ResultSender();

  // Sends what the spool holds, retrying until it is empty or `stop` is set. Returns
  // whether the spool is empty. (At start: the spool goes out before new work is taken.)
  bool Drain(const std::atomic<bool>& stop);

  void Start();
  // A new result is in the spool.
  void Notify();
  // Keeps sending until the spool is empty or `deadline` passes, then stops the thread.
  // Returns the number of results left in the spool (sent on the next start).
  size_t Finish(std::chrono::steady_clock::time_point deadline);

 private:
  enum class Pass { kEmpty, kRetryLater };
  // One pass over the spool. Results the server refuses for good are moved aside.
  Pass SendAll();
  void Run();

  Spool* spool_;
  client::WorkerConnection* connection_;
  WorkerMetrics* metrics_;
  Backoff backoff_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool pending_ = false;
  bool finishing_ = false;
  std::atomic<bool> stop_now_{false};
  bool idle_empty_ = false;
  bool unreachable_logged_ = false;  // one warning per outage, not one per retry
  std::thread thread_;
};

}  // namespace collatz::worker
