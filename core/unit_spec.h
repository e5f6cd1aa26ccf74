// The spec of a unit from everything known: the one function behind `collatzctl run` and
// the coordinator's leases, so that the same unit gets the same spec whoever runs it.
//
// Floor and open holes come from every known point below the unit: the records and
// candidates of the merge (ladders, class minima, imports) and the published delay records,
// each delay recomputed (core/published_points.h); members found in the inverse tree of
// those points close more holes (core/class_members.h). None of this needs completeness, so
// no unit above 2 runs with floor 0. The record table for early termination does: it holds
// only final records, below min(P, begin) (docs/FLOOR.md).
#pragma once

#include <cstddef>
#include <string>

#include "core/class_member_cache.h"
#include "core/merge.h"
#include "core/status.h"
#include "core/unit.h"

namespace collatz {

struct UnitSpecNotes {
  size_t holes_closed_by_members = 0;  // holes the class-member search closed
  // Why the member search left holes open (empty when it ran): costs speed, never exactness.
  std::string member_search_error;
};

// [begin, end) of `kinds`, from `merged`. `cache` (may be null) reuses the class-member
// search of consecutive leases. InvalidArgument for an empty or invalid range.
Status MakeUnitSpec(const MergedRecords& merged, u128 begin, u128 end, Kinds kinds, ClassMemberCache* cache,
                    UnitSpec* spec, UnitSpecNotes* notes = nullptr);

}  // namespace collatz
