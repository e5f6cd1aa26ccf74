// The published delay records as known points: (n, delay(n)) with every delay recomputed
// exactly in this process (SlowDelay), never read from the list's column.
//
// A delay record at N beats the delay of every smaller number, so the exact delay of any
// number below a unit is a provable floor for it, and a number of delay d below a unit
// closes class d there (docs/FLOOR.md). Neither needs the list to be complete or even to
// hold records: these points are used for floors and holes only. Completeness (early
// termination, finality) comes only from coverage or a trusted import (`collatzctl import
// --published` makes the same list one, core/import_check.h).
#pragma once

#include <vector>

#include "core/unit.h"

namespace collatz {

// The compiled-in list (core/embedded_records.h), ascending by n, each delay recomputed on
// first use (149 numbers up to about 2^64.6: 0.3 to 0.5 ms). Empty only if the
// compiled-in text does not parse, which core/embedded_records_test.cc rules out.
const std::vector<Record>& PublishedDelayPoints();

}  // namespace collatz
