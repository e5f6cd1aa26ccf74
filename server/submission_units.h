// How the coordinator cuts a submitted piece of uncovered numbers into units.
#pragma once

#include "core/first_unit_cuts.h"
#include "core/u128.h"

namespace collatz::server {

// A submission from 1 knows nothing below its first unit, so, as `collatzctl run` does, a
// piece that starts below unit_size is cut at 2^20, 2^24, 2^28, 2^32, 2^33, ... below unit_size and
// then at unit_size (core/first_unit_cuts.h); the records are the same.

// The end of the unit that starts at x in a piece that ends at piece_end: FirstUnitCut
// below unit_size, x + unit_size above it; never past piece_end.
u128 UnitEnd(u128 x, u128 piece_end, u128 unit_size);

// How many units UnitEnd makes of [begin, end), without making them (a submission that
// would make too many is refused before anything is stored).
u128 CountUnits(u128 begin, u128 end, u128 unit_size);

}  // namespace collatz::server
