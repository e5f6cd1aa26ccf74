// Known points: numbers with their exact delays imported from outside the search (a partial
// list of class members, numbers another search found), with no claim of completeness.
//
// A class search keeps every number walking until it can no longer reach an open class, so
// each class that stays open for lack of a known member costs speed (docs/PERFORMANCE.md,
// session 45). A point m of delay d closes class d (and d + j through 2^j m) for every unit
// above m and raises those units' floors to d; the smallest member of d, if below m, lies in
// a unit below m, where d stays open, so no record is lost. Points seed the class-member
// search too. They are never records themselves: the search finds the records.
#pragma once

#include <cstddef>
#include <vector>

#include "core/merge.h"
#include "core/status.h"
#include "core/unit.h"

namespace collatz {

// At most this many points an import: each delay is recomputed on GMP integers.
constexpr size_t kMaxKnownPointsPerImport = 100000;

// InvalidArgument, naming the row at fault, unless every point has n >= 1 and its exact
// delay (recomputed on GMP integers: seconds for the largest lists) and the list is not
// empty and holds at most kMaxKnownPointsPerImport rows.
Status CheckKnownPointRows(const std::vector<Record>& points);

// InvalidArgument, naming the import, if a point (its delay already checked) refutes a
// stored trusted import: a number below an import's bound with more delay than its records
// allow, or a smaller member of a class than its class record. Exact points prove such a
// list incomplete, and the records derived from it wrong.
Status CheckKnownPointsFitImports(const std::vector<Record>& points, const std::vector<TrustedImport>& imports);

// Both: CheckKnownPointRows, then CheckKnownPointsFitImports.
Status CheckKnownPoints(const std::vector<Record>& points, const std::vector<TrustedImport>& imports);

}  // namespace collatz
