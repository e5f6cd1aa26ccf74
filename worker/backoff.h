// Exponential backoff with full jitter, capped: the delay before retry k is uniform in
// [initial/2, min(cap, initial * 2^k)], so many workers that lost the same server do
// not come back in lockstep.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>

namespace collatz::worker {

struct BackoffOptions {
  std::chrono::milliseconds initial{500};
  std::chrono::milliseconds cap{30000};
};

class Backoff {
 public:
  explicit Backoff(BackoffOptions options = {}, uint64_t seed = std::random_device{}());
  // The delay to wait before the next attempt; grows with each call until Reset.
  std::chrono::milliseconds Next();
  void Reset() { attempt_ = 0; }
  int attempt() const { return attempt_; }

 private:
  BackoffOptions options_;
  std::mt19937_64 rng_;
  int attempt_ = 0;
};

// Sleeps for `d`, waking early (and returning false) once *stop is true.
bool SleepUnlessStopped(std::chrono::milliseconds d, const std::atomic<bool>& stop);

}  // namespace collatz::worker
