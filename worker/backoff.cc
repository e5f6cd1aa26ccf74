#include "worker/backoff.h"

#include <algorithm>
#include <thread>

namespace collatz::worker {

Backoff::Backoff(BackoffOptions options, uint64_t seed) : options_(options), rng_(seed) {}

std::chrono::milliseconds Backoff::Next() {
  const int64_t initial = std::max<int64_t>(1, options_.initial.count());
  const int64_t cap = std::max<int64_t>(initial, options_.cap.count());
  // initial * 2^attempt without overflow: stop doubling once past the cap.
  int64_t ceiling = initial;
  for (int i = 0; i < attempt_ && ceiling < cap; ++i) ceiling *= 2;
  ceiling = std::min(ceiling, cap);
  ++attempt_;
  const int64_t low = std::min(initial / 2 + 1, ceiling);
  std::uniform_int_distribution<int64_t> pick(low, ceiling);
  return std::chrono::milliseconds(pick(rng_));
}

bool SleepUnlessStopped(std::chrono::milliseconds d, const std::atomic<bool>& stop) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (!stop.load()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= until) return true;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(until - now, std::chrono::milliseconds(50)));
  }
  return false;
}

}  // namespace collatz::worker
