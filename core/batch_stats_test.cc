#include "core/batch_stats.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>

namespace collatz {
namespace {

std::shared_ptr<const FastDelay> Fast() {
  static const auto fast =
      std::make_shared<const FastDelay>(std::make_shared<const StepTable>(16), std::make_shared<const TailTable>(20));
  return fast;
}

void ExpectSameAsSlow(u128 from, u128 to, uint32_t batch, int threads) {
  std::vector<BatchStats> fast, slow;
  ASSERT_TRUE(ComputeBatchStats(*Fast(), from, to, batch, threads, &fast).ok());
  ASSERT_TRUE(ComputeBatchStatsSlow(from, to, batch, &slow).ok());
  ASSERT_EQ(fast.size(), static_cast<size_t>((to - from) / batch));
  ASSERT_EQ(fast.size(), slow.size());
  for (size_t b = 0; b < fast.size(); ++b) {
    const u128 start = from + static_cast<u128>(b) * batch;
    EXPECT_EQ(fast[b], slow[b]) << "batch at " << ToDecimal(start);
    EXPECT_EQ(fast[b].count, BatchCount(start, batch));
  }
}

TEST(BatchStats, FirstBatchByHand) {
  // delays of 1..7: 0 1 7 2 5 8 16 (N = 0 is not counted).
  std::vector<BatchStats> s;
  ASSERT_TRUE(ComputeBatchStats(*Fast(), 0, 16, 8, 2, &s).ok());
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].count, 7u);
  EXPECT_EQ(s[0].min, 0);
  EXPECT_EQ(s[0].max, 16);
  EXPECT_EQ(s[0].sum, 39u);
  // 8..15: 3 19 6 14 9 9 17 17
  EXPECT_EQ(s[1].count, 8u);
  EXPECT_EQ(s[1].min, 3);
  EXPECT_EQ(s[1].max, 19);
  EXPECT_EQ(s[1].sum, 94u);
}

TEST(BatchStats, MatchesSlowFromZero) { ExpectSameAsSlow(0, 8 * 1024, 1024, 2); }

TEST(BatchStats, MatchesSlowOnRandomRanges) {
  std::mt19937_64 rng(6);
  const int exponents[] = {20, 33, 40, 63, 64, 70, 90, 120};
  for (int e : exponents) {
    const uint32_t batch = 64u << (rng() % 5);
    u128 start = (static_cast<u128>(1) << e) + (static_cast<u128>(rng()) << (e > 64 ? e - 64 : 0)) % (static_cast<u128>(1) << e);
    start -= start % batch;
    SCOPED_TRACE(ToDecimal(start));
    ExpectSameAsSlow(start, start + 3 * batch, batch, 2);
  }
}

TEST(BatchStats, TrajectoriesPast64And128Bits) {
  // 12327829503 climbs past 2^64; 48503373501652785087 past 2^128 (FastDelay's wide path).
  const u128 past64 = 12327829503u;
  u128 past128 = 0;
  ASSERT_TRUE(ParseDecimalU128("48503373501652785087", &past128).ok());
  for (u128 n : {past64, past128}) {
    const u128 start = n - n % 256;
    ExpectSameAsSlow(start, start + 512, 256, 2);
  }
}

// The property the GPU stats kernel relies on (gpu/stats_kernel.cu): for h >= 1, residues
// i < 2^k (even ones too) with equal (p, c) after k T-steps have equal delays, so a block of
// 2^k numbers needs only one walk per group.
TEST(BatchStats, JoinGroupsOfAllResiduesHaveEqualDelays) {
  std::mt19937_64 rng(16);
  for (int k : {8, 12, 16}) {
    std::map<std::pair<uint32_t, uint64_t>, uint32_t> first_of_group;
    std::vector<uint32_t> rep(size_t{1} << k);
    for (uint32_t i = 0; i < (1u << k); ++i) {
      uint32_t p = 0;
      uint64_t c = 0;
      TStepsOfResidue(i, k, &p, &c);
      rep[i] = first_of_group.emplace(std::make_pair(p, c), i).first->second;
    }
    for (u128 h : {u128{1}, u128{3}, (u128{1} << 30) + rng() % 1000, (u128{1} << 70) + rng(), (u128{1} << 110) + rng()}) {
      const u128 base = h << k;
      size_t bad = 0;
      for (uint32_t i = 0; i < (1u << k); ++i) {
        if (rep[i] != i && Fast()->Delay(base + i) != Fast()->Delay(base + rep[i])) ++bad;
      }
      EXPECT_EQ(bad, 0u) << "k=" << k << " h=" << ToDecimal(h);
    }
    if (k == 16) {
      EXPECT_EQ(first_of_group.size(), 19275u);  // SPEC 2: all residues surviving the 16-bit sieve
    }
  }
}

TEST(BatchStats, RejectsUnalignedAndBadBatches) {
  std::vector<BatchStats> s;
  EXPECT_FALSE(ComputeBatchStats(*Fast(), 1, 1024, 1024, 1, &s).ok());
  EXPECT_FALSE(ComputeBatchStats(*Fast(), 0, 1000, 1024, 1, &s).ok());
  EXPECT_FALSE(ComputeBatchStats(*Fast(), 1024, 1024, 1024, 1, &s).ok());
  EXPECT_FALSE(ComputeBatchStats(*Fast(), 0, 1024, 1, 1, &s).ok());
  EXPECT_TRUE(ValidateStatsRange(2048, 4096, 1024).ok());
  EXPECT_FALSE(ValidateStatsRange(2048, 4096, kMaxStatsBatch + 1).ok());
}

}  // namespace
}  // namespace collatz
