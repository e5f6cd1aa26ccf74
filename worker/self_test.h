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
// was checked and how long it took.
Status RunSelfTest(SearchEngine& engine, const SearchTables& tables, std::string* summary);

}  // namespace collatz::worker
