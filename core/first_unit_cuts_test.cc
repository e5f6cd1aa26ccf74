#include "core/first_unit_cuts.h"

#include <gtest/gtest.h>

namespace collatz {
namespace {

TEST(FirstUnitCut, IsTheNextPowerOfTwoOfTheRampBelowTheUnitSize) {
  EXPECT_TRUE(FirstUnitCut(1, Pow2(40)) == Pow2(20));
  EXPECT_TRUE(FirstUnitCut(Pow2(20) - 1, Pow2(40)) == Pow2(20));
  EXPECT_TRUE(FirstUnitCut(Pow2(20), Pow2(40)) == Pow2(24));
  EXPECT_TRUE(FirstUnitCut(Pow2(20) + 5, Pow2(28)) == Pow2(24));
  EXPECT_TRUE(FirstUnitCut(Pow2(28), Pow2(40)) == Pow2(32));
  // From 2^32 up the cuts double.
  EXPECT_TRUE(FirstUnitCut(Pow2(32), Pow2(40)) == Pow2(33));
  EXPECT_TRUE(FirstUnitCut(Pow2(36), Pow2(40)) == Pow2(37));
  EXPECT_TRUE(FirstUnitCut(Pow2(39) + 5, Pow2(40)) == Pow2(40));
  EXPECT_TRUE(FirstUnitCut(Pow2(36), Pow2(37)) == Pow2(37));
  EXPECT_TRUE(FirstUnitCut(Pow2(20), Pow2(21) * 3) == Pow2(21) * 3);  // not a cut point itself
  EXPECT_TRUE(FirstUnitCut(1, Pow2(20)) == Pow2(20));                 // units of 2^20 or less
  EXPECT_TRUE(FirstUnitCut(5, 10) == 10);
  EXPECT_TRUE(FirstUnitCut(Pow2(120), kU128Max) == Pow2(121));
  EXPECT_TRUE(FirstUnitCut(Pow2(127), kU128Max) == kU128Max);
}

}  // namespace
}  // namespace collatz
