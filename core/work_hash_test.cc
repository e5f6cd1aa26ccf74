#include "core/work_hash.h"

#include <random>

#include <gtest/gtest.h>

namespace collatz {
namespace {

uint64_t SlowProgression(uint64_t w, uint64_t d, uint64_t n) {
  uint64_t sum = 0, x = w;
  for (uint64_t t = 0; t < n; ++t, x += d) sum += WorkHashTerm(x);
  return sum;
}

TEST(WorkHashTest, ProgressionEqualsTermByTermSum) {
  std::mt19937_64 rng(20261122);
  for (uint64_t n = 0; n < 200; ++n) {  // every residue of n mod 6, and then some
    const uint64_t w = rng(), d = rng();
    ASSERT_EQ(WorkHashProgression(w, d, n), SlowProgression(w, d, n)) << "n=" << n;
  }
  for (int i = 0; i < 50; ++i) {
    const uint64_t n = 1000 + rng() % 100000;
    const uint64_t w = rng(), d = rng();
    ASSERT_EQ(WorkHashProgression(w, d, n), SlowProgression(w, d, n)) << "n=" << n;
  }
  // Wrapping values and steps.
  EXPECT_EQ(WorkHashProgression(~uint64_t{0}, ~uint64_t{0}, 77), SlowProgression(~uint64_t{0}, ~uint64_t{0}, 77));
}

TEST(WorkHashTest, LargeCountsUseExactDivisions) {
  // n(n-1)(2n-1)/6 overflows 64 bits long before n reaches 2^62, so the divisions must be
  // exact on the factors: check the closed form against the recurrence
  // S(n) = S(n - 1) + Term(w + d (n - 1)) and against splitting [0, n) in two.
  const uint64_t w = 0x1234567890abcdefULL, d = 0xfedcba0987654321ULL;
  for (uint64_t n : {uint64_t{1} << 40, (uint64_t{1} << 61) + 12345, (uint64_t{1} << 62) - 1}) {
    const uint64_t a = WorkHashProgression(w, d, n - 1);
    const uint64_t b = WorkHashProgression(w, d, n);
    EXPECT_EQ(b - a, WorkHashTerm(w + d * (n - 1))) << n;
    // Splitting [0, n) at m: the second part is a progression starting at w + d m.
    const uint64_t m = n / 3;
    EXPECT_EQ(b, WorkHashProgression(w, d, m) + WorkHashProgression(w + d * m, d, n - m)) << n;
  }
}

TEST(WorkHashTest, MissingOrExtraNumbersChangeTheSum) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 1000; ++i) {
    const uint64_t x = rng();
    if (x == 0 || x == 0 - kWorkHashOdd) continue;
    EXPECT_NE(WorkHashTerm(x), 0u);
  }
  EXPECT_EQ(WorkHashTerm(0), 0u);
  EXPECT_EQ(WorkHashTerm(0 - kWorkHashOdd), 0u);
}

}  // namespace
}  // namespace collatz
