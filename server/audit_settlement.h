// Settling an audit mismatch: which of two differing results of one unit is wrong.
// Both results have passed VerifyUnitResult with the same spec, so every entry either
// reports is a number the search examines, inside the unit, with its exact delay. From
// those points alone the true ladder and class minima of the unit follow wherever a
// correct result would have to contain them, which proves a worker wrong without
// re-running anything (docs/PROTOCOL.md, "Lying workers and audits").
#pragma once

#include "core/unit.h"

namespace collatz::server {

struct EntryVerdict {
  bool first_wrong = false, second_wrong = false;
};

// Takes the union U of the verified entries of `first` and `second` (ladders and class
// minima). A correct result's ladder is the running-maximum ladder of U above spec.floor
// and its class minima are, for every open class with a member in U, the smallest such
// member (both contain the correct result's own entries, and nothing examined beats
// them). A result whose ladder or class minima differ from those is wrong. Finds
// nothing when the results differ only in counts, tallies or work hashes.
EntryVerdict WrongByEntries(const UnitSpec& spec, const UnitResult& first, const UnitResult& second);

}  // namespace collatz::server
