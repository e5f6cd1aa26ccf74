#include "core/ancestor_bounds.h"

#include <gtest/gtest.h>

#include <random>

#include "core/delay.h"
#include "core/early_termination.h"
#include "core/test_support.h"

namespace collatz {
namespace {

// Each option is a real ancestor of every value of its class: u = (2^a v - c) / 3^b for an
// integer c >= 0, u < v, and u reaches v in a + b steps (checked with the exact delays).
TEST(AncestorBoundsTest, OptionsAreAncestorsOfEveryValueOfTheirClass) {
  std::mt19937_64 rng(20261127);
  size_t total = 0;
  for (unsigned r = 0; r < kAncestorModulus; ++r) {
    total += AncestorOptions(r).size();
    for (int i = 0; i < 20; ++i) {
      const u128 v = static_cast<u128>((uint64_t{1} << 10) + rng() % (uint64_t{1} << 40)) * kAncestorModulus + r;
      for (const AncestorOption& o : AncestorOptions(r)) {
        // The largest ancestor below 2^a v / 3^b with a + b steps to v: search c upwards.
        u128 pow3 = 1;
        for (int j = 0; j < o.thirds; ++j) pow3 *= 3;
        const u128 top = (v << o.doublings) / pow3;
        bool found = false;
        for (u128 u = top; u + 64 > top && u >= 2 && !found; --u) {
          found = SlowDelay(u) == SlowDelay(v) + o.doublings + o.thirds && u < v;
          // u must reach v: walk it forward a + b steps.
          if (found) {
            u128 x = u;
            for (int j = 0; j < o.doublings + o.thirds; ++j) x = (x & 1) != 0 ? 3 * x + 1 : x / 2;
            found = x == v;
          }
        }
        EXPECT_TRUE(found) << "v " << ToDecimal(v) << " a " << int{o.doublings} << " b " << int{o.thirds};
      }
    }
  }
  EXPECT_GT(total, kAncestorModulus);  // more than one option a class on average
  // The classes of the walk's predecessor bounds are among them: v = 2 (mod 3) has (1, 1).
  for (unsigned r = 2; r < kAncestorModulus; r += 3) {
    bool has = false;
    for (const AncestorOption& o : AncestorOptions(r)) has = has || (o.doublings == 1 && o.thirds == 1);
    EXPECT_TRUE(has) << r;
  }
}

// A value below its threshold cannot be a record: s + delay(v) <= floor by its true delay;
// and the thresholds stop values that stop_below and the four value classes do not.
TEST(AncestorBoundsTest, ThresholdStopsOnlyValuesThatCannotBeRecords) {
  std::mt19937_64 rng(20261128);
  UnitSpec spec = testing_support::SpecBelowPublished(Pow2(40), Pow2(40) + 1000, Kinds::kDelay, true);
  spec.records_complete_below = Pow2(30);
  const EarlyTermination et(spec);
  ASSERT_TRUE(et.enabled());
  const std::vector<u128>& L = et.stop_below();
  uint64_t beyond_classes = 0;
  for (int i = 0; i < 200000; ++i) {
    const unsigned b = 17 + static_cast<unsigned>(rng() % 16);
    const u128 v = Pow2(b - 1) + static_cast<u128>(rng()) % Pow2(b - 1);
    const uint32_t s = static_cast<uint32_t>(rng() % (spec.floor + 12));
    if (v >= AncestorThreshold(L, s, static_cast<unsigned>(v % kAncestorModulus))) continue;
    ASSERT_LE(s + SlowDelay(v), spec.floor) << "v " << ToDecimal(v) << " s " << s;
    if (!et.CanStopInClass(s, v, ValueClassOfResidue9(static_cast<unsigned>(v % 9)))) ++beyond_classes;
  }
  EXPECT_GT(beyond_classes, 0u);
  // Never below the plain threshold; 0 past the table.
  for (size_t s = 0; s < L.size(); s += 97) EXPECT_GE(AncestorThreshold(L, s, 1), L[s]);
  EXPECT_EQ(AncestorThreshold(L, L.size() + 20, 80), 0u);
}

}  // namespace
}  // namespace collatz

namespace collatz {
namespace {

// The table form equals the single thresholds.
TEST(AncestorBoundsTest, TableEqualsThresholds) {
  UnitSpec spec = testing_support::SpecBelowPublished(Pow2(50), Pow2(50) + 1000, Kinds::kDelay, true);
  const EarlyTermination et(spec);
  const std::vector<u128>& L = et.stop_below();
  const size_t rows = L.size() + 13;
  const std::vector<u128> table = AncestorThresholds(L, rows);
  ASSERT_EQ(table.size(), rows * kAncestorModulus);
  for (size_t s = 0; s < rows; ++s) {
    for (unsigned r = 0; r < kAncestorModulus; ++r) {
      ASSERT_EQ(table[s * kAncestorModulus + r], AncestorThreshold(L, s, r)) << "s " << s << " r " << r;
    }
  }
}

}  // namespace
}  // namespace collatz

namespace collatz {
namespace {

// The claim the prelude's checks rest on (gpu/kernels/group_prelude_kernel.cu, GroupBelow; the CPU's
// StopsWithinFirstSteps): numbers 9 2^m t apart take the same parities for m T-steps, and
// after j < m of them, a odd, differ by 9 3^a 2^(m - j) t: they share v mod 9 always, v mod
// 162 once a >= 2 (and j < m), so one residue's bound serves them all.
TEST(AncestorBoundsTest, NumbersNineTimesAPowerOfTwoApartShareTheResidue) {
  std::mt19937_64 rng(20261129);
  for (int trial = 0; trial < 2000; ++trial) {
    const int m = 5 + static_cast<int>(rng() % 20);
    const u128 base = (static_cast<u128>(rng()) << 20) | 1;
    std::vector<u128> v;
    for (uint64_t t = 0; t < 6; ++t) v.push_back(base + static_cast<u128>(9 * (rng() % 1000)) * Pow2(m));
    int odd = 0;
    for (int j = 1; j < m; ++j) {
      const bool is_odd = (v[0] & 1) != 0;
      odd += is_odd ? 1 : 0;
      for (u128& x : v) {
        ASSERT_EQ((x & 1) != 0, is_odd) << "parities differ at step " << j;
        x = is_odd ? x + (x >> 1) + 1 : x >> 1;
      }
      for (const u128& x : v) {
        ASSERT_EQ(x % 9, v[0] % 9) << "m " << m << " step " << j;
        if (odd >= 2) ASSERT_EQ(x % kAncestorModulus, v[0] % kAncestorModulus) << "m " << m << " step " << j;
      }
    }
  }
}

}  // namespace
}  // namespace collatz
