// Verification of a worker's UnitResult before anything of it is stored (SPEC section 5):
// every ladder entry and class minimum is recomputed exactly on the CPU, and checked for
// plausibility: inside the unit, odd, a number the sieve and the kind's mod rule keep,
// a delay the unit could report (above the floor / an open class), in the right order.
#pragma once

#include <string>

#include "core/status.h"
#include "core/unit.h"
#include "core/unit_search.h"

namespace collatz::server {

// The largest ladder or class-minima list accepted; real results are far smaller.
constexpr size_t kMaxResultEntries = 200000;

// Ok, or InvalidArgument naming the first entry that is wrong.
Status VerifyUnitResult(const SearchTables& tables, const UnitSpec& spec, const UnitResult& result);

}  // namespace collatz::server
