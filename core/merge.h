// Merging (SPEC section 5): finished units and trusted imports -> delay records and class
// records, final below the covered prefix P, candidates above it; even records derived by
// rule 1 (2m is a delay record iff m is one and the next record after m is >= 2m;
// classrec(d) = min(smallest odd n with delay d, 2 classrec(d-1))).
#pragma once

#include <cstdint>
#include <vector>

#include "core/unit.h"

namespace collatz {

// Records trusted to be complete over [1, complete_below).
struct TrustedImport {
  u128 complete_below = 1;
  std::vector<Record> delay_records;  // every delay record below complete_below (any order)
  std::vector<Record> class_records;  // every class record below complete_below: (n, delay)
};

// An import covers the class search of its range only when it carries class records (a
// complete list below any bound >= 2 holds at least class 0 -> 1); a list of delay records
// alone says nothing about the smallest members of classes.
inline bool ImportCoversClasses(const TrustedImport& import) { return !import.class_records.empty(); }

struct FinishedUnit {
  u128 begin = 0;
  u128 end = 0;
  Kinds kinds = Kinds::kDelayAndClass;
  UnitResult result;
};

struct MergedRecords {
  u128 covered_prefix = 1;          // P: [1, P) is covered
  u128 class_covered_prefix = 1;    // the same, counting only class-searched units and imports
  std::vector<Record> delay_final;       // ascending n, n < P
  std::vector<Record> delay_candidates;  // ascending n, n >= P
  std::vector<Record> class_final;       // ascending delay, n < class P
  std::vector<Record> class_candidates;  // ascending delay
  // Imported known points (core/known_points.h): numbers with their exact delays, at any
  // height, ascending by n. They raise floors and close classes like every other known
  // point, and seed the class-member search; they are never records themselves.
  std::vector<Record> known_points;
};

MergedRecords MergeRecords(const std::vector<TrustedImport>& imports, const std::vector<FinishedUnit>& units,
                           const std::vector<Record>& known_points = {});

// Known points as MergedRecords holds them: ascending by n, one row a number (their delays
// are exact, so rows of one number agree).
void SortKnownPoints(std::vector<Record>* points);

// What a unit starting at `begin` is searched with, from everything known: floor, open
// holes and the record table for early termination.
struct LeaseContext {
  uint32_t floor = 0;
  std::vector<uint32_t> open_holes;
  std::vector<Record> known_records;
  u128 records_complete_below = 0;
};
// The floor is the largest delay of a known point below `begin` or of one of its doublings
// below it; the open holes (class searches) are the classes <= floor that no such number
// has. Known points: every record, candidate and known point of `merged`, plus `extra_points`, numbers
// with their exact delays (e.g. PublishedDelayPoints()); no completeness is needed for
// either (docs/FLOOR.md). The record table needs it: it comes from coverage alone
// (RecordTableBelow).
LeaseContext ComputeLeaseContext(const MergedRecords& merged, u128 begin, Kinds kinds,
                                 const std::vector<Record>& extra_points = {});

// The record table for early termination of a unit at `begin`: the final delay records
// below min(P, begin), complete there; none (and 0) when nothing is covered.
void RecordTableBelow(const MergedRecords& merged, u128 begin, std::vector<Record>* records, u128* complete_below);

// Removes from ctx->open_holes every class that a member below `begin`, or a doubling of
// one, fills (members: numbers with their exact delays, e.g. from FindClassMembers).
void CloseHoles(const std::vector<Record>& members, u128 begin, LeaseContext* ctx);

// The end of the contiguous covered prefix [1, P) of a set of half-open intervals.
u128 CoveredPrefix(std::vector<std::pair<u128, u128>> intervals);

}  // namespace collatz
