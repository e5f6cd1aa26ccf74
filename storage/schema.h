// The record database's schema and its migrations. The schema version is SQLite's
// PRAGMA user_version; migration i takes a database from version i-1 to i, each in its
// own transaction. A new version appends one entry to the list in schema.cc and never
// edits an earlier one (databases in the field were created by it).
#pragma once

#include <sqlite3.h>

#include <string>
#include <vector>

#include "core/status.h"

namespace collatz {

// PRAGMA application_id of every record database ("CLZ1"), to refuse foreign SQLite files.
constexpr int kRecordDbApplicationId = 0x434C5A31;

struct SchemaMigration {
  int to_version;
  const char* description;
  const char* sql;
};

// All migrations, in order; to_version is 1, 2, 3, ...
const std::vector<SchemaMigration>& SchemaMigrations();

// The version this binary writes (the last migration's to_version).
int LatestSchemaVersion();

// Brings a database at `current_version` up to LatestSchemaVersion().
Status MigrateSchema(sqlite3* db, int current_version);

}  // namespace collatz
