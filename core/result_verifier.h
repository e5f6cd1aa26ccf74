// The one verification of a UnitResult before anything of it is stored (SPEC section 5),
// for the coordinator (workers' results) and collatzctl (its own engines' results): every
// ladder entry and class minimum is recomputed with SlowDelay (the plain definition, no
// code shared with the engines) and checked for plausibility: inside the unit, a number
// the engines examine (core's IsExamined), a delay the unit could report (above the floor
// / an open class), in the right order, counts consistent with each other.
#pragma once

#include <cstddef>

#include "core/sieve.h"
#include "core/status.h"
#include "core/unit.h"
#include "core/unit_search.h"

namespace collatz {

// The largest ladder or class-minima list accepted; real results are far smaller.
constexpr size_t kMaxResultEntries = 200000;

// Ok, or InvalidArgument naming the first entry that is wrong. `sieve` is the sieve the
// unit was searched with: its entries must be numbers it examines, and its candidates
// exactly the numbers of the unit it examines (CountExamined: a result searched with
// another sieve width, or one that skipped numbers, is refused). Null skips both checks.
Status VerifyUnitResult(const Sieve* sieve, const UnitSpec& spec, const UnitResult& result);

inline Status VerifyUnitResult(const SearchTables& tables, const UnitSpec& spec, const UnitResult& result) {
  return VerifyUnitResult(tables.sieve.get(), spec, result);
}

}  // namespace collatz
