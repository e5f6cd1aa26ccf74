// The merged record table (final_records and merge_state, docs/DATABASE.md), written the
// same way by collatzctl's RecordDb and the coordinator's store.
#pragma once

#include <sqlite3.h>

#include "core/merge.h"
#include "core/status.h"

namespace collatz {

// Replaces final_records and merge_state with `merged`. The caller holds the transaction.
Status WriteMergedRecordsTable(sqlite3* db, const MergedRecords& merged);

}  // namespace collatz
