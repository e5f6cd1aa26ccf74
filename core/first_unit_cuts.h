// Where the first unit-size block of a search is cut (collatzctl run's plan and the
// coordinator's submitted pieces both use it).
#pragma once

#include "core/u128.h"

namespace collatz {

// A search from 1 knows nothing below its first unit: that unit has floor 0, so early
// termination stops none of its numbers (billions with the GPU's units of 2^32 and more).
// Cutting the first unit-size block at 2^20, 2^24, 2^28, 2^32 (16-fold steps, units that
// take milliseconds), then at 2^33, 2^34, ... (doubling) below unit_size, and then at
// unit_size keeps the floor-0 unit small and gives each later unit the floor and record
// table of everything below it: a unit [x, 2x) waits at most one bit for its numbers to fall
// below the table, [x, 16x) up to four (H200, [1, 2^44) both kinds: [2^36, 2^40) in one
// unit 1.22 s). The records found are the same; only the work changes.
constexpr int kFirstUnitBits = 20;
constexpr int kFirstUnitsGrowBits = 4;
constexpr int kFirstUnitsDoubleFromBits = 32;

// The end of the unit that starts at x (x < unit_size) in the first unit-size block.
u128 FirstUnitCut(u128 x, u128 unit_size);

}  // namespace collatz
