// The startup self-test: known-answer searches on an engine before it takes work. Each
// expected result is computed on the spot with the plain reference path
// (SearchRangeSimple, no early termination) and checked against facts that do not depend
// on this code at all (published records, the delay of 1980976057694848447).
#pragma once

#include <string>

#include "core/search_engine.h"
#include "core/status.h"
#include "core/unit_search.h"

namespace collatz::worker {

// Runs every case; Internal with the first difference on failure. *summary says what
// was checked and how long it took. window_numbers: the size of the production-kind case (a
// unit aligned as the coordinator cuts them around a published record near 2^60): 2^40 on a
// GPU (its residue groups, two-step walks and stop tables), less on a CPU (seconds).
Status RunSelfTest(SearchEngine& engine, const SearchTables& tables, std::string* summary,
                   u128 window_numbers = u128{1} << 28);

}  // namespace collatz::worker
