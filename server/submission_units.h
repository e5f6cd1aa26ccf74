// How the coordinator cuts a submitted piece of uncovered numbers into units.
#pragma once

#include "core/u128.h"

namespace collatz::server {

// A submission from 1 knows nothing below its first unit: that unit has floor 0, so early
// termination stops none of its numbers (billions with the GPU's units of 2^32 and more).
// As `collatzctl run` does (cli/unit_plan.h, which the server cannot link), a piece that
// starts below unit_size is cut at 2^20, 2^24, 2^28, ... (16-fold steps) below unit_size
// and then at unit_size, so the floor-0 unit stays small and each later unit gets the
// floor and record table of everything below it. The records are the same.
constexpr int kFirstUnitBits = 20;
constexpr int kFirstUnitsGrowBits = 4;

// The end of the unit that starts at x (x < unit_size) in the first unit-size block.
u128 FirstBlockCut(u128 x, u128 unit_size);

// The end of the unit that starts at x in a piece that ends at piece_end: FirstBlockCut
// below unit_size, x + unit_size above it; never past piece_end.
u128 UnitEnd(u128 x, u128 piece_end, u128 unit_size);

// How many units UnitEnd makes of [begin, end), without making them (a submission that
// would make too many is refused before anything is stored).
u128 CountUnits(u128 begin, u128 end, u128 unit_size);

}  // namespace collatz::server
