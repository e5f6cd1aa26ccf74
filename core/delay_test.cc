#include "core/delay.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>

namespace collatz {
namespace {

class DelayTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fast_ = new FastDelay(std::make_shared<StepTable>(19), std::make_shared<TailTable>(20));
  }
  static void TearDownTestSuite() { delete fast_; }
  static FastDelay* fast_;
};
FastDelay* DelayTest::fast_ = nullptr;

u128 Parse(const char* s) {
  u128 v;
  EXPECT_TRUE(ParseU128(s, &v).ok());
  return v;
}

TEST_F(DelayTest, KnownDelays) {
  EXPECT_EQ(SlowDelay(1), 0u);
  EXPECT_EQ(SlowDelay(2), 1u);
  EXPECT_EQ(SlowDelay(3), 7u);
  EXPECT_EQ(SlowDelay(27), 111u);
  EXPECT_EQ(SlowDelay(2610744987u), 1050u);
  EXPECT_EQ(SlowDelay(Parse("1980976057694848447")), 1475u);
  EXPECT_EQ(fast_->Delay(1), 0u);
  EXPECT_EQ(fast_->Delay(27), 111u);
  EXPECT_EQ(fast_->Delay(2610744987u), 1050u);
  EXPECT_EQ(fast_->Delay(Parse("1980976057694848447")), 1475u);
}

TEST_F(DelayTest, TailTableIsExact) {
  const TailTable& tail = fast_->tail();
  for (uint64_t n = 1; n < tail.limit(); n += 997) EXPECT_EQ(tail[n], SlowDelay(n)) << n;
}

TEST_F(DelayTest, StepTableMatchesTSteps) {
  const StepTable& steps = fast_->steps();
  std::mt19937_64 rng(7);
  for (int t = 0; t < 1000; ++t) {
    const uint64_t i = rng() & steps.mask();
    const u128 h = 1 + (rng() & 0xFFFFFFFF);
    u128 n = (h << steps.bits()) + i;
    for (int s = 0; s < steps.bits(); ++s) n = (n & 1) ? (3 * n + 1) / 2 : n / 2;
    EXPECT_EQ(n, kPow3[steps.p(i)] * h + steps.c(i));
  }
}

// The table is built width by width; every entry must be the S T-steps of its residue.
TEST(StepTableTest, EveryEntryIsItsResiduesSteps) {
  for (const int bits : {1, 2, 7, 13, 16}) {
    const StepTable table(bits);
    for (uint64_t i = 0; i <= table.mask(); ++i) {
      uint32_t p;
      uint64_t c;
      TStepsOfResidue(i, bits, &p, &c);
      ASSERT_EQ(table.p(i), p) << bits << " " << i;
      ASSERT_EQ(table.c(i), c) << bits << " " << i;
    }
  }
}

// Numbers whose trajectories pass 2^64 and 2^128 go through the overflow check and the
// wide path: the fast result must equal the plain definition.
TEST_F(DelayTest, TrajectoriesPast64And128Bits) {
  std::vector<u128> starts = {12327829503u, Parse("1980976057694848447"), Parse("48503373501652785087")};
  // Every value of 48503373501652785087's trajectory before its peak passes 2^128 later.
  u128 x = Parse("48503373501652785087");
  int passing128 = 0;
  while (true) {
    if ((x & 1) && x > (kU128Max - 1) / 3) break;  // the next step leaves 128 bits
    x = (x & 1) ? 3 * x + 1 : x / 2;
    starts.push_back(x);
    ++passing128;
  }
  EXPECT_GT(passing128, 100);
  // Doublings keep the peak.
  for (u128 n = Parse("48503373501652785087"); n < Pow2(127); n *= 2) starts.push_back(n);
  for (u128 n : starts) EXPECT_EQ(fast_->Delay(n), SlowDelay(n)) << ToDecimal(n);
  EXPECT_EQ(WideDelay(Parse("48503373501652785087"), nullptr), SlowDelay(Parse("48503373501652785087")));
}

TEST_F(DelayTest, FastEqualsSlowOnRandomNumbersOfEveryWidth) {
  std::mt19937_64 rng(2024);
  int count = 0;
  for (int bits = 1; bits <= 127; ++bits) {
    for (int t = 0; t < 4000; ++t) {
      u128 n = MakeU128(rng(), rng());
      n &= Pow2(bits) - 1;
      n |= Pow2(bits - 1);
      ASSERT_EQ(fast_->Delay(n), SlowDelay(n)) << ToDecimal(n);
      ++count;
    }
  }
  EXPECT_EQ(count, 127 * 4000);
}

TEST_F(DelayTest, NarrowTablesAgree) {
  FastDelay narrow(std::make_shared<StepTable>(5), std::make_shared<TailTable>(8));
  std::mt19937_64 rng(5);
  for (int t = 0; t < 20000; ++t) {
    const u128 n = MakeU128(rng() >> (rng() % 64), rng()) | 1;
    ASSERT_EQ(narrow.Delay(n), fast_->Delay(n)) << ToDecimal(n);
  }
}

}  // namespace
}  // namespace collatz
