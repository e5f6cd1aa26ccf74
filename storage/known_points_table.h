// The known points tables (schema v12, docs/DATABASE.md), written and read the same way by
// collatzctl's RecordDb and the coordinator's store.
#pragma once

#include <sqlite3.h>

#include <cstddef>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/unit.h"

namespace collatz {

// Inserts one import of known points (checked by the caller: core/known_points.h); numbers
// already stored keep their rows. *added: the new ones. The caller holds the transaction.
Status InsertKnownPoints(sqlite3* db, const std::vector<Record>& points, const std::string& source, size_t* added);

// Every stored known point, ascending by n.
Status LoadKnownPointsTable(sqlite3* db, std::vector<Record>* out);

}  // namespace collatz
