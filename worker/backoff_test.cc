#include "worker/backoff.h"

#include <gtest/gtest.h>

namespace collatz::worker {
namespace {

TEST(BackoffTest, GrowsWithJitterAndStaysUnderTheCap) {
  Backoff b({std::chrono::milliseconds(100), std::chrono::milliseconds(1000)}, 42);
  int64_t max_seen = 0;
  for (int k = 0; k < 40; ++k) {
    const int64_t d = b.Next().count();
    const int64_t ceiling = std::min<int64_t>(1000, int64_t{100} << std::min(k, 20));
    EXPECT_GE(d, 51) << "attempt " << k;
    EXPECT_LE(d, ceiling) << "attempt " << k;
    max_seen = std::max(max_seen, d);
  }
  EXPECT_GT(max_seen, 500);  // it did grow towards the cap
  b.Reset();
  EXPECT_LE(b.Next().count(), 100);
}

TEST(BackoffTest, JitterSpreadsWorkersApart) {
  Backoff a({std::chrono::milliseconds(1000), std::chrono::milliseconds(60000)}, 1);
  Backoff b({std::chrono::milliseconds(1000), std::chrono::milliseconds(60000)}, 2);
  int differing = 0;
  for (int k = 0; k < 10; ++k) differing += a.Next() != b.Next();
  EXPECT_GE(differing, 8);
}

TEST(BackoffTest, SleepWakesOnStop) {
  std::atomic<bool> stop{true};
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(SleepUnlessStopped(std::chrono::seconds(10), stop));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  std::atomic<bool> go{false};
  EXPECT_TRUE(SleepUnlessStopped(std::chrono::milliseconds(10), go));
}

}  // namespace
}  // namespace collatz::worker
