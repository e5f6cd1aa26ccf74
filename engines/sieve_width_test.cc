#include "engines/sieve_width.h"

#include <gtest/gtest.h>

#include "engines/engine_factory.h"

namespace collatz::engines {
namespace {

// The coordinator's defaults: delay+class units of 2^46 numbers get 25 bits, delay-only
// units and smaller class units (a submission's first cuts, a short last unit) the base.
TEST(UnitSieveBits, WideClassUnitsGetTheClassWidth) {
  const int base = kDefaultSieveBits, wide = kWideUnitClassSieveBits;
  const u128 unit = kWideClassUnitNumbers;
  EXPECT_EQ(UnitSieveBits(Kinds::kDelayAndClass, unit, base, wide), 25);
  EXPECT_EQ(UnitSieveBits(Kinds::kDelayAndClass, 4 * unit, base, wide), 25);
  EXPECT_EQ(UnitSieveBits(Kinds::kDelay, unit, base, wide), 19);
  EXPECT_EQ(UnitSieveBits(Kinds::kDelayAndClass, unit - 1, base, wide), 19);
  EXPECT_EQ(UnitSieveBits(Kinds::kDelayAndClass, Pow2(20), base, wide), 19);
}

// Units of 2^48 numbers and more (a GPU campaign's) get 30 bits when the caller names the
// wide width, delay+class ones included; smaller ones keep theirs.
TEST(UnitSieveBits, WideDelayUnitsGetTheDelayWidth) {
  const int base = kDefaultSieveBits, wide_class = kWideUnitClassSieveBits, wide = kWideUnitDelaySieveBits;
  const u128 unit = kWideDelayUnitNumbers, class_min = kWideClassUnitNumbers;
  EXPECT_EQ(UnitSieveBits(Kinds::kDelay, unit, base, wide_class, class_min, wide), 30);
  EXPECT_EQ(UnitSieveBits(Kinds::kDelay, 2 * unit, base, wide_class, class_min, wide), 30);
  EXPECT_EQ(UnitSieveBits(Kinds::kDelay, unit - 1, base, wide_class, class_min, wide), 19);
  EXPECT_EQ(UnitSieveBits(Kinds::kDelayAndClass, unit, base, wide_class, class_min, wide), 30);
  EXPECT_EQ(UnitSieveBits(Kinds::kDelayAndClass, unit - 1, base, wide_class, class_min, wide), 25);
  EXPECT_EQ(UnitSieveBits(Kinds::kDelay, unit, base, wide_class, class_min, 0), 19);  // one delay width
  EXPECT_EQ(UnitSieveBits(Kinds::kDelayAndClass, unit, base, wide_class, class_min, 0), 25);
  EXPECT_EQ(UnitSieveBits(Kinds::kDelay, unit, base, wide_class), 19);              // not named
  EXPECT_EQ(UnitSieveBits(Kinds::kDelay, Pow2(30), 16, 18, Pow2(22), 20, Pow2(30)), 20);
  EXPECT_EQ(UnitSieveBits(Kinds::kDelay, Pow2(30) - 1, 16, 18, Pow2(22), 20, Pow2(30)), 16);
  EXPECT_TRUE(IsUnitSieveBits(wide));
}

// A wide delay+class unit takes the wider of the two widths: an operator's class width wider
// than the wide one stays, and a class width of 0 (the base) still gets the wide one.
TEST(UnitSieveBits, WideClassUnitsTakeTheWiderOfTheTwoWidths) {
  const u128 wide_min = Pow2(30), class_min = Pow2(22);
  EXPECT_EQ(UnitSieveBits(Kinds::kDelayAndClass, wide_min, 16, 22, class_min, 20, wide_min), 22);
  EXPECT_EQ(UnitSieveBits(Kinds::kDelayAndClass, wide_min, 16, 18, class_min, 20, wide_min), 20);
  EXPECT_EQ(UnitSieveBits(Kinds::kDelayAndClass, wide_min, 16, 0, class_min, 20, wide_min), 20);
  EXPECT_EQ(UnitSieveBits(Kinds::kDelayAndClass, wide_min - 1, 16, 0, class_min, 20, wide_min), 16);
  // A wide threshold below the class one: the class width does not apply below its own.
  EXPECT_EQ(UnitSieveBits(Kinds::kDelayAndClass, Pow2(20), 16, 22, class_min, 20, Pow2(20)), 20);
}

TEST(UnitSieveBits, ClassWidthZeroMeansOneWidthAndTheThresholdIsAnArgument) {
  EXPECT_EQ(UnitSieveBits(Kinds::kDelayAndClass, kWideClassUnitNumbers, 19, 0), 19);
  EXPECT_EQ(UnitSieveBits(Kinds::kDelayAndClass, Pow2(22), 16, 18, Pow2(22)), 18);
  EXPECT_EQ(UnitSieveBits(Kinds::kDelayAndClass, Pow2(22) - 1, 16, 18, Pow2(22)), 16);
  EXPECT_EQ(UnitSieveBits(Kinds::kDelay, Pow2(30), 16, 18, Pow2(22)), 16);
}

// collatzctl run and the coordinator agree where they overlap: a GPU run of delay+class work
// in whole units takes the width the coordinator cuts those units with.
TEST(UnitSieveBits, SieveBitsForRunAgreesWithTheCoordinatorsDefault) {
  const u128 at = Pow2(66);
  for (u128 unit : {Pow2(40), Pow2(44), kWideClassUnitNumbers, kWideDelayUnitNumbers, Pow2(49), Pow2(50)}) {
    for (Kinds kinds : {Kinds::kDelay, Kinds::kDelayAndClass}) {
      // Records complete near the unit: the floor-context rule of delay-only runs stays out.
      const int run = SieveBitsForRun(Backend::kGpu, kinds, Pow2(64), at, 4 * unit, unit);
      EXPECT_EQ(run, UnitSieveBits(kinds, unit, DefaultSieveBits(Backend::kGpu), kWideUnitClassSieveBits,
                                   kWideClassUnitNumbers, kWideUnitDelaySieveBits))
          << ToDecimal(unit);
    }
  }
}

TEST(UnitSieveBits, UnitWidthsAreOneToThirty) {
  EXPECT_FALSE(IsUnitSieveBits(0));
  EXPECT_TRUE(IsUnitSieveBits(1));
  EXPECT_TRUE(IsUnitSieveBits(kWideUnitClassSieveBits));
  EXPECT_TRUE(IsUnitSieveBits(kMaxUnitSieveBits));
  EXPECT_FALSE(IsUnitSieveBits(kMaxUnitSieveBits + 1));
  EXPECT_LE(kWideUnitClassSieveBits, kMaxUnitSieveBits);
}

}  // namespace
}  // namespace collatz::engines
