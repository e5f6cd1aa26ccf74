#include "core/early_termination.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/delay.h"
#include "core/test_support.h"

namespace collatz {
namespace {

// R(v): the largest delay of any n <= v, from a complete record list.
uint32_t MaxDelayAtMost(const std::vector<Record>& records, u128 v) {
  uint32_t r = 0;
  for (const Record& rec : records) {
    if (rec.n <= v) r = rec.delay;
  }
  return r;
}

// Delay-only units stop a value exactly when s + R(v) <= floor with v below the table's
// completeness bound, whatever the floor and bound; without a table never.
TEST(EarlyTermination, DelayOnlyStopsExactlyWhereTheTableProvesIt) {
  std::mt19937_64 rng(20261125);
  const std::vector<Record>& published = testing_support::PublishedRecordsByN();
  for (const unsigned bits : {24u, 40u, 60u, 64u}) {
    UnitSpec spec = testing_support::SpecBelowPublished(Pow2(bits), Pow2(bits) + 1000, Kinds::kDelay, true);
    spec.records_complete_below = Pow2(bits - 3);  // the table ends below the unit
    const EarlyTermination et(spec);
    ASSERT_TRUE(et.enabled());
    ASSERT_EQ(et.stop_below().size(), spec.floor + 1u);
    for (int i = 0; i < 20000; ++i) {
      const unsigned b = 1 + static_cast<unsigned>(rng() % bits);
      const u128 v = Pow2(b - 1) + (static_cast<u128>(rng()) << 64 | rng()) % Pow2(b - 1);
      const uint32_t s = static_cast<uint32_t>(rng() % (spec.floor + 50));
      const bool provable = v < spec.records_complete_below && s + MaxDelayAtMost(published, v) <= spec.floor;
      EXPECT_EQ(et.CanStop(s, v), provable) << "v " << ToDecimal(v) << " s " << s << " floor " << spec.floor;
    }
    // At a record the bound steps up: just below it the value can stop with one more step.
    for (const Record& r : spec.known_records) {
      if (r.n < 2 || r.n >= spec.records_complete_below || r.delay > spec.floor) continue;
      const uint32_t s = spec.floor - r.delay;
      EXPECT_TRUE(et.CanStop(s, r.n));
      EXPECT_FALSE(et.CanStop(s + 1, r.n));
    }
  }
  UnitSpec no_table;
  no_table.begin = Pow2(60);
  no_table.end = Pow2(60) + 1000;
  no_table.floor = 2000;
  const EarlyTermination none(no_table);
  EXPECT_FALSE(none.enabled());
  EXPECT_FALSE(none.CanStop(0, 1));
  EXPECT_FALSE(none.CanStop(5000, 1));
}

}  // namespace
}  // namespace collatz

namespace collatz {
namespace {

// The predecessor bounds (CanStopInClass): every value of a class that its bound stops has
// s + delay(v) <= floor, by its true delay; the bounds stop values that stop_below alone
// does not; a value of class 0 gets none; and the class of each residue is its bound's.
TEST(EarlyTermination, PredecessorBoundsStopOnlyValuesThatCannotBeRecords) {
  EXPECT_EQ(ValueClassOfResidue9(2), 1u);
  EXPECT_EQ(ValueClassOfResidue9(5), 1u);
  EXPECT_EQ(ValueClassOfResidue9(4), 2u);
  EXPECT_EQ(ValueClassOfResidue9(8), 3u);
  for (unsigned r : {0u, 1u, 3u, 6u, 7u}) EXPECT_EQ(ValueClassOfResidue9(r), 0u) << r;
  std::mt19937_64 rng(20261126);
  UnitSpec spec = testing_support::SpecBelowPublished(Pow2(40), Pow2(40) + 1000, Kinds::kDelay, true);
  spec.records_complete_below = Pow2(30);
  const EarlyTermination et(spec);
  ASSERT_TRUE(et.enabled());
  uint64_t by_class[4] = {0, 0, 0, 0};
  for (int i = 0; i < 200000; ++i) {
    const unsigned b = 3 + static_cast<unsigned>(rng() % 30);
    const u128 v = Pow2(b - 1) + static_cast<u128>(rng()) % Pow2(b - 1);
    const uint32_t s = static_cast<uint32_t>(rng() % (spec.floor + 10));
    const uint32_t value_class = ValueClassOfResidue9(static_cast<unsigned>(v % 9));
    if (!et.CanStopInClass(s, v, value_class)) continue;
    ASSERT_LE(s + SlowDelay(v), spec.floor) << "v " << ToDecimal(v) << " s " << s << " class " << value_class;
    if (!et.CanStop(s, v)) ++by_class[value_class];
  }
  EXPECT_EQ(by_class[0], 0u);
  for (int c = 1; c < 4; ++c) EXPECT_GT(by_class[c], 0u) << "class " << c;
  // The threshold formulas (gpu/stop_tables.h holds the same): L = stop_below[s - j].
  const std::vector<u128>& L = et.stop_below();
  const size_t s = spec.floor / 2;
  EXPECT_EQ(PredecessorThreshold(L, s, 0), 0u);
  EXPECT_EQ(PredecessorThreshold(L, s, 1), L[s - 2] + L[s - 2] / 2);
  EXPECT_EQ(PredecessorThreshold(L, s, 2), L[s - 5] + L[s - 5] / 8);
  EXPECT_EQ(PredecessorThreshold(L, s, 3), std::max(L[s - 2] + L[s - 2] / 2, 2 * L[s - 4] + L[s - 4] / 4));
  EXPECT_EQ(PredecessorThreshold(L, 1, 1), 0u);  // no step to go back
  EXPECT_EQ(PredecessorThreshold(L, L.size() + 2, 1), 0u);  // past the table
}

}  // namespace
}  // namespace collatz
