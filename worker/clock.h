// The lease loop's time: steady milliseconds for heartbeats, prefetch, grace periods and a
// unit's duration. Production uses the steady clock; tests move a fake one by hand.
#pragma once

#include <chrono>
#include <cstdint>

namespace collatz::worker {

// steady_clock milliseconds since its epoch.
inline int64_t SteadyNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t NowMs() const = 0;
};

class SteadyClock final : public Clock {
 public:
  int64_t NowMs() const override { return SteadyNowMs(); }
};

}  // namespace collatz::worker
