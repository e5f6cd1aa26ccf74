// The free check of a record table (issue 41, item 5): below the published bound, a table
// that claims to hold every delay record of [1, B) must hold exactly the published ones.
// The published list (core/published_points.h, compiled in) is complete below its last
// record (about 2^64.6, data/README.md), so where both are complete they must agree, record
// for record; a missing, an extra or a wrong record is a bug (or a broken device) in what
// built the table, and nothing built on it can be trusted.
#pragma once

#include <vector>

#include "core/status.h"
#include "core/u128.h"
#include "core/unit.h"

namespace collatz {

// Ok when `table` (the delay records of [1, complete_below), ascending by n) and
// `published` (the published records, complete below `published_complete_below`, ascending
// by n) hold the same records (n and delay) below min(complete_below,
// published_complete_below); else FailedPrecondition naming `what` and the first
// difference by n: a published record the table misses, a table record that is not
// published, or one n with two delays. Records at or above that bound are not compared.
Status CheckRecordsAgainstPublished(const std::vector<Record>& table, u128 complete_below,
                                    const std::vector<Record>& published, u128 published_complete_below,
                                    const std::string& what);

// The same against the compiled-in list (PublishedDelayPoints(), each delay recomputed),
// complete below its last record's n + 1.
Status CheckRecordsAgainstPublished(const std::vector<Record>& table, u128 complete_below, const std::string& what);

}  // namespace collatz
