// The coordinator's unit cuts: the first unit-size block at 2^20, 2^24, 2^28, 2^32, 2^33, ...
// (core/first_unit_cuts.h, as `collatzctl run` plans them), then unit-size steps.
#include "server/submission_units.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace collatz::server {
namespace {

using Units = std::vector<std::pair<u128, u128>>;

Units Cut(u128 begin, u128 end, u128 unit_size) {
  Units out;
  for (u128 x = begin; x < end; x = out.back().second) out.push_back({x, UnitEnd(x, end, unit_size)});
  EXPECT_TRUE(CountUnits(begin, end, unit_size) == out.size()) << ToDecimal(CountUnits(begin, end, unit_size));
  return out;
}

TEST(SubmissionUnits, FirstBlockIsCutAtEverySixteenfoldPowerOfTwoBelowTheUnitSize) {
  EXPECT_EQ(Cut(1, Pow2(34), Pow2(32)), (Units{{1, Pow2(20)},
                                              {Pow2(20), Pow2(24)},
                                              {Pow2(24), Pow2(28)},
                                              {Pow2(28), Pow2(32)},
                                              {Pow2(32), Pow2(32) * 2},
                                              {Pow2(32) * 2, Pow2(32) * 3},
                                              {Pow2(32) * 3, Pow2(34)}}));
  // Unit sizes that are not cut points: the last cut is the unit size itself.
  EXPECT_EQ(Cut(1, Pow2(26), Pow2(22)).size(), 17u);
  EXPECT_EQ(Cut(1, Pow2(23), Pow2(22)), (Units{{1, Pow2(20)}, {Pow2(20), Pow2(22)}, {Pow2(22), Pow2(23)}}));
  EXPECT_EQ(Cut(1, Pow2(24), Pow2(21) * 3),
            (Units{{1, Pow2(20)}, {Pow2(20), Pow2(21) * 3}, {Pow2(21) * 3, Pow2(21) * 6}, {Pow2(21) * 6, Pow2(24)}}));
  // Units of 2^20 or less: only the cut at the unit size.
  EXPECT_EQ(Cut(1, Pow2(21) + 5, Pow2(20)), (Units{{1, Pow2(20)}, {Pow2(20), Pow2(21)}, {Pow2(21), Pow2(21) + 5}}));
  EXPECT_EQ(Cut(1, 1000, 300), (Units{{1, 300}, {300, 600}, {600, 900}, {900, 1000}}));
}

TEST(SubmissionUnits, PiecesStartingInsideOrAboveTheFirstBlock) {
  // After an import below 2^20 + 5: the piece is cut at the next power of the ladder.
  EXPECT_EQ(Cut(Pow2(20) + 5, Pow2(29), Pow2(28)),
            (Units{{Pow2(20) + 5, Pow2(24)}, {Pow2(24), Pow2(28)}, {Pow2(28), Pow2(29)}}));
  // A piece that ends inside the first block.
  EXPECT_EQ(Cut(1000, Pow2(22), Pow2(32)), (Units{{1000, Pow2(20)}, {Pow2(20), Pow2(22)}}));
  // At or above the unit size: unit-size steps from the piece's start, as before.
  EXPECT_EQ(Cut(Pow2(32) + 7, Pow2(33) + 9, Pow2(32)),
            (Units{{Pow2(32) + 7, Pow2(33) + 7}, {Pow2(33) + 7, Pow2(33) + 9}}));
  // The count never makes the units (a refused submission of 2^100 units).
  EXPECT_TRUE(CountUnits(1, Pow2(100), 1) == Pow2(100) - 1);
  EXPECT_TRUE(CountUnits(1, Pow2(100), Pow2(40)) == Pow2(60) + 11);  // 12 units below 2^40
}

}  // namespace
}  // namespace collatz::server
