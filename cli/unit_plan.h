// Which units `collatzctl run` searches: the part of [from, to) that no finished unit
// (of sufficient kinds) or trusted import covers yet, cut at multiples of the unit size
// (and at growing powers of two inside the first unit-size block), ascending. A rerun of the same command therefore finds nothing left to do, and an
// interrupted run resumes at the first unit that was not stored.
#pragma once

#include <utility>
#include <vector>

#include "core/first_unit_cuts.h"
#include "core/merge.h"
#include "core/u128.h"

namespace collatz::cli {

struct PlannedUnit {
  u128 begin = 0;
  u128 end = 0;
};

// Half-open intervals that already hold the results a search of `kinds` needs: every
// import ([1, complete_below) holds both kinds), every delay+class unit, and delay-only
// units when only delay records are wanted.
std::vector<std::pair<u128, u128>> CoveredIntervals(const std::vector<TrustedImport>& imports,
                                                    const std::vector<FinishedUnit>& units, Kinds kinds);

// [from, to) minus the covered intervals, cut at multiples of unit_size (>= 1) and, below
// unit_size, at 2^20, 2^24, 2^28, 2^32, 2^33, 2^34, ... (core/first_unit_cuts.h).
std::vector<PlannedUnit> PlanUnits(u128 from, u128 to, std::vector<std::pair<u128, u128>> covered, u128 unit_size);

// The unit size used when --unit-size is not given: about 1/8 of the range as a power of
// two, at least 2^30 numbers a CPU thread (four chunks of 2^28 each) and at most 2^40 (GPU:
// the range, within [2^32, 2^54] delay-only and [2^32, 2^52] with classes; cpu_threads is
// then unused, kinds is unused on the CPU).
u128 DefaultUnitSize(u128 range, bool gpu, unsigned cpu_threads, Kinds kinds);

// Largest unit --unit-size takes (a GPU campaign's units are 2^54, about 400 s on an H200:
// docs/OPERATIONS.md section 13), also the largest default delay-only GPU unit.
constexpr u128 kMaxUnitSize = static_cast<u128>(1) << 54;

}  // namespace collatz::cli
