#include "cli/unit_plan.h"

#include <gtest/gtest.h>

#include <random>

namespace collatz::cli {
namespace {

std::vector<std::pair<u128, u128>> AsPairs(const std::vector<PlannedUnit>& plan) {
  std::vector<std::pair<u128, u128>> out;
  for (const PlannedUnit& p : plan) out.push_back({p.begin, p.end});
  return out;
}

TEST(PlanUnits, CutsAtMultiplesOfTheUnitSize) {
  auto plan = AsPairs(PlanUnits(1, 100, {}, 32));
  std::vector<std::pair<u128, u128>> expect = {{1, 32}, {32, 64}, {64, 96}, {96, 100}};
  EXPECT_EQ(plan, expect);
}

TEST(PlanUnits, SkipsCoveredParts) {
  auto plan = AsPairs(PlanUnits(1, 100, {{1, 40}, {50, 60}, {55, 70}}, 32));
  std::vector<std::pair<u128, u128>> expect = {{40, 50}, {70, 96}, {96, 100}};
  EXPECT_EQ(plan, expect);
  EXPECT_TRUE(PlanUnits(10, 20, {{1, 15}, {15, 30}}, 4).empty());
}

TEST(PlanUnits, WorksAtTheTopOf128Bits) {
  const u128 top = kU128Max;
  auto plan = PlanUnits(top - 10, top, {}, Pow2(127));
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_TRUE(plan[0].begin == top - 10 && plan[0].end == top);
}

TEST(PlanUnits, RandomCoverAgreesWithBruteForce) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const u128 from = 1 + rng() % 50, to = from + 1 + rng() % 200, size = 1 + rng() % 40;
    std::vector<std::pair<u128, u128>> cover;
    for (int i = rng() % 5; i > 0; --i) {
      const u128 b = 1 + rng() % 260;
      cover.push_back({b, b + 1 + rng() % 40});
    }
    auto plan = PlanUnits(from, to, cover, size);
    std::vector<bool> in_plan(300, false);
    u128 prev_end = 0;
    for (const PlannedUnit& p : plan) {
      ASSERT_LT(p.begin, p.end);
      ASSERT_GE(p.begin, prev_end);  // ascending, disjoint
      prev_end = p.end;
      // No unit crosses a multiple of the unit size.
      ASSERT_EQ(p.begin / size, (p.end - 1) / size);
      for (u128 x = p.begin; x < p.end; ++x) in_plan[static_cast<size_t>(x)] = true;
    }
    for (u128 x = 1; x < 300; ++x) {
      bool covered = false;
      for (auto& [b, e] : cover) covered |= (x >= b && x < e);
      const bool want = x >= from && x < to && !covered;
      ASSERT_EQ(in_plan[static_cast<size_t>(x)], want) << "trial " << trial << " x " << static_cast<uint64_t>(x);
    }
  }
}

TEST(PlanUnits, CutsTheFirstBlockAtGrowingPowersOfTwo) {
  // GPU-sized units from 1: the floor-0 unit is [1, 2^20); each later one starts above
  // the records of everything before it.
  std::vector<std::pair<u128, u128>> expect = {{1, Pow2(20)},        {Pow2(20), Pow2(24)}, {Pow2(24), Pow2(28)},
                                               {Pow2(28), Pow2(32)}, {Pow2(32), Pow2(33)}, {Pow2(33), Pow2(33) + 5}};
  EXPECT_EQ(AsPairs(PlanUnits(1, Pow2(33) + 5, {}, Pow2(32))), expect);
  // A unit size that is no power of two: the cuts stop below it, then the grid goes on.
  expect = {{1, Pow2(20)}, {Pow2(20), Pow2(24)}, {Pow2(24), 20000000}, {20000000, 40000000}, {40000000, 45000000}};
  EXPECT_EQ(AsPairs(PlanUnits(1, 45000000, {}, 20000000)), expect);
  // Starting inside the first block, or after a covered part of it.
  expect = {{Pow2(22), Pow2(24)}, {Pow2(24), Pow2(28)}, {Pow2(28), Pow2(28) + 1}};
  EXPECT_EQ(AsPairs(PlanUnits(Pow2(22), Pow2(28) + 1, {}, Pow2(28))), expect);
  expect = {{Pow2(21), Pow2(24)}, {Pow2(24), Pow2(26)}};
  EXPECT_EQ(AsPairs(PlanUnits(1, Pow2(26), {{1, Pow2(21)}}, Pow2(28))), expect);
  // Units of 2^20 or less: no cuts but the grid.
  expect = {{1, Pow2(20)}, {Pow2(20), Pow2(21)}};
  EXPECT_EQ(AsPairs(PlanUnits(1, Pow2(21), {}, Pow2(20))), expect);
  EXPECT_EQ(PlanUnits(1, Pow2(24), {}, Pow2(16)).size(), 256u);
  // The CPU's smallest default unit (2^30 on one thread): cuts at 2^20, 2^24, 2^28, then units.
  EXPECT_EQ(PlanUnits(1, Pow2(32), {}, DefaultUnitSize(Pow2(32), false, 1, Kinds::kDelay)).size(), 4u + 3u);
}

TEST(CoveredIntervals, ClassSearchesNeedClassUnits) {
  std::vector<TrustedImport> imports(1);
  imports[0].complete_below = 10;
  std::vector<FinishedUnit> units(2);
  units[0].begin = 10, units[0].end = 20, units[0].kinds = Kinds::kDelay;
  units[1].begin = 20, units[1].end = 30, units[1].kinds = Kinds::kDelayAndClass;
  std::vector<std::pair<u128, u128>> delay = {{1, 10}, {10, 20}, {20, 30}};
  std::vector<std::pair<u128, u128>> classes = {{1, 10}, {20, 30}};
  // An import of delay records alone does not cover class searches.
  EXPECT_EQ(CoveredIntervals(imports, units, Kinds::kDelay), delay);
  EXPECT_EQ(CoveredIntervals(imports, units, Kinds::kDelayAndClass), (std::vector<std::pair<u128, u128>>{{20, 30}}));
  // With its class records it does.
  imports[0].class_records = {{1, 0}, {2, 1}, {4, 2}, {8, 3}};
  EXPECT_EQ(CoveredIntervals(imports, units, Kinds::kDelay), delay);
  EXPECT_EQ(CoveredIntervals(imports, units, Kinds::kDelayAndClass), classes);
}

TEST(DefaultUnitSize, StaysWithinBounds) {
  EXPECT_TRUE(DefaultUnitSize(100, false, 1, Kinds::kDelay) == Pow2(30));
  EXPECT_TRUE(DefaultUnitSize(Pow2(36), false, 1, Kinds::kDelay) == Pow2(33));
  EXPECT_TRUE(DefaultUnitSize(Pow2(100), false, 1, Kinds::kDelay) == Pow2(40));
  // At least 2^30 numbers a CPU thread.
  EXPECT_TRUE(DefaultUnitSize(Pow2(32), false, 2, Kinds::kDelay) == Pow2(31));
  EXPECT_TRUE(DefaultUnitSize(Pow2(32), false, 16, Kinds::kDelay) == Pow2(34));
  EXPECT_TRUE(DefaultUnitSize(Pow2(32), false, 12, Kinds::kDelay) == Pow2(34));
  EXPECT_TRUE(DefaultUnitSize(Pow2(32), false, 0, Kinds::kDelay) == Pow2(30));
  EXPECT_TRUE(DefaultUnitSize(Pow2(32), false, 1u << 20, Kinds::kDelay) == Pow2(40));
  EXPECT_TRUE(DefaultUnitSize(Pow2(36), true, 16, Kinds::kDelay) == Pow2(36));
  EXPECT_TRUE(DefaultUnitSize(Pow2(44), true, 1, Kinds::kDelay) == Pow2(44));
  EXPECT_TRUE(DefaultUnitSize(Pow2(44) + 1, true, 1, Kinds::kDelay) == Pow2(45));
  EXPECT_TRUE(DefaultUnitSize(Pow2(52) + 1, true, 1, Kinds::kDelay) == Pow2(53));
  EXPECT_TRUE(DefaultUnitSize(Pow2(100), true, 1, Kinds::kDelay) == Pow2(54));
  EXPECT_TRUE(DefaultUnitSize(Pow2(100), true, 1, Kinds::kDelay) == kMaxUnitSize);
  // Delay+class GPU units stop at 2^52 (an hour at 2^66 at 2^54); the CPU ignores the kinds.
  EXPECT_TRUE(DefaultUnitSize(Pow2(52) + 1, true, 1, Kinds::kDelayAndClass) == Pow2(52));
  EXPECT_TRUE(DefaultUnitSize(Pow2(100), true, 1, Kinds::kDelayAndClass) == Pow2(52));
  EXPECT_TRUE(DefaultUnitSize(Pow2(44), true, 1, Kinds::kDelayAndClass) == Pow2(44));
  EXPECT_TRUE(DefaultUnitSize(Pow2(100), false, 1, Kinds::kDelayAndClass) == Pow2(40));
}

}  // namespace
}  // namespace collatz::cli
