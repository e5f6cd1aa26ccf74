#include "storage/schema.h"

#include "storage/audit_schema.h"
#include "storage/coordinator_schema.h"
#include "storage/dashboard_schema.h"
#include "storage/known_points_schema.h"
#include "storage/sqlite_statement.h"
#include "storage/stats_schema.h"
#include "storage/token_schema.h"
#include "storage/trust_schema.h"
#include "storage/unit_sieve_schema.h"
#include "storage/work_hash_schema.h"

namespace collatz {

namespace {

// Version 1: units and their results, trusted imports, the derived merged records, and
// read-only views that show numbers as plain decimals for people using sqlite3 directly.
// Every N is TEXT of 39 zero-padded digits (storage/n_text.h): lossless and sortable.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE units (
  id          INTEGER PRIMARY KEY,
  begin_n     TEXT NOT NULL CHECK (length(begin_n) = 39),
  end_n       TEXT NOT NULL CHECK (length(end_n) = 39 AND end_n > begin_n),
  kinds       TEXT NOT NULL CHECK (kinds IN ('delay', 'delay,class')),
  state       TEXT NOT NULL CHECK (state IN ('pending', 'leased', 'finished')),
  created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  finished_at TEXT
);
CREATE INDEX units_by_begin ON units (begin_n);
CREATE INDEX units_by_state ON units (state, begin_n);

CREATE TABLE unit_results (
  unit_id     INTEGER PRIMARY KEY REFERENCES units (id) ON DELETE CASCADE,
  floor       INTEGER NOT NULL,
  open_holes  INTEGER NOT NULL,
  candidates  INTEGER NOT NULL,
  tally_count INTEGER NOT NULL,
  tally_sum   TEXT NOT NULL,
  work_hash   TEXT NOT NULL CHECK (length(work_hash) = 16),
  engine      TEXT NOT NULL,
  seconds     REAL NOT NULL
);

CREATE TABLE unit_ladder (
  unit_id INTEGER NOT NULL REFERENCES units (id) ON DELETE CASCADE,
  n       TEXT NOT NULL CHECK (length(n) = 39),
  delay   INTEGER NOT NULL,
  PRIMARY KEY (unit_id, n)
);

CREATE TABLE unit_class_minima (
  unit_id INTEGER NOT NULL REFERENCES units (id) ON DELETE CASCADE,
  delay   INTEGER NOT NULL,
  n       TEXT NOT NULL CHECK (length(n) = 39),
  PRIMARY KEY (unit_id, delay)
);

CREATE TABLE imports (
  id             INTEGER PRIMARY KEY,
  complete_below TEXT NOT NULL CHECK (length(complete_below) = 39),
  source         TEXT NOT NULL,
  imported_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TABLE import_records (
  import_id INTEGER NOT NULL REFERENCES imports (id) ON DELETE CASCADE,
  kind      TEXT NOT NULL CHECK (kind IN ('delay', 'class')),
  n         TEXT NOT NULL CHECK (length(n) = 39),
  delay     INTEGER NOT NULL,
  PRIMARY KEY (import_id, kind, n, delay)
);

-- (No WITHOUT ROWID tables: SQLite 3.40 quick_check falsely reports NULLs in some of them.)
-- Derived: rewritten as a whole from units and imports after every change.
CREATE TABLE final_records (
  kind   TEXT NOT NULL CHECK (kind IN ('delay', 'class')),
  status TEXT NOT NULL CHECK (status IN ('final', 'candidate')),
  n      TEXT NOT NULL CHECK (length(n) = 39),
  delay  INTEGER NOT NULL,
  PRIMARY KEY (kind, n, delay)
);

CREATE TABLE merge_state (
  id                   INTEGER PRIMARY KEY CHECK (id = 1),
  covered_prefix       TEXT NOT NULL CHECK (length(covered_prefix) = 39),
  class_covered_prefix TEXT NOT NULL CHECK (length(class_covered_prefix) = 39),
  merged_at            TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE VIEW v_units AS
  SELECT u.id, ltrim(u.begin_n, '0') AS begin_n, ltrim(u.end_n, '0') AS end_n, u.kinds, u.state,
         r.floor, r.open_holes, r.candidates, r.tally_count, r.tally_sum, r.work_hash, r.engine,
         r.seconds, u.created_at, u.finished_at
  FROM units u LEFT JOIN unit_results r ON r.unit_id = u.id
  ORDER BY u.begin_n, u.id;

CREATE VIEW v_unit_ladder AS
  SELECT unit_id, ltrim(n, '0') AS n, delay FROM unit_ladder ORDER BY n, unit_id;

CREATE VIEW v_unit_class_minima AS
  SELECT unit_id, delay, ltrim(n, '0') AS n FROM unit_class_minima ORDER BY delay, n;

CREATE VIEW v_imports AS
  SELECT id, ltrim(complete_below, '0') AS complete_below, source, imported_at,
         (SELECT count(*) FROM import_records r WHERE r.import_id = imports.id AND r.kind = 'delay') AS delay_records,
         (SELECT count(*) FROM import_records r WHERE r.import_id = imports.id AND r.kind = 'class') AS class_records
  FROM imports ORDER BY id;

CREATE VIEW v_delay_records AS
  SELECT ltrim(n, '0') AS n, delay, status FROM final_records WHERE kind = 'delay' ORDER BY final_records.n;

CREATE VIEW v_class_records AS
  SELECT delay, ltrim(n, '0') AS n, status FROM final_records WHERE kind = 'class' ORDER BY delay;

CREATE VIEW v_coverage AS
  SELECT ltrim(covered_prefix, '0') AS covered_prefix,
         ltrim(class_covered_prefix, '0') AS class_covered_prefix, merged_at
  FROM merge_state;
)sql";

}  // namespace

const std::vector<SchemaMigration>& SchemaMigrations() {
  static const std::vector<SchemaMigration> kMigrations = {
      {1, "units, unit results, imports, merged records, decimal views", kSchemaV1},
      {2, "coordinator: submissions, workers, unit bookkeeping, leases, attempts, audits", kCoordinatorSchemaV2},
      {3, "stats jobs: jobs, batch-aligned units with their results, leases, attempts", kStatsSchemaV3},
      {4, "work hash version of unit results and workers", kWorkHashSchemaV4},
      {5, "flagged worker identities; audits keep the audited token, the auditor's result and a verdict", kAuditSchemaV5},
      {6, "dashboard: finished work per minute, events", kDashboardSchemaV6},
      {7, "dashboard: finished stats work per minute", kDashboardSchemaV7},
      {8, "the sieve width of each unit; workers that search each unit with its width", kUnitSieveSchemaV8},
      {9, "access tokens per host and role (hashed); the token each worker registered with", kTokenSchemaV9},
      {10, "trust: when results were counted, who checked them, what each lease depended on, trust earned",
       kTrustSchemaV10},
      {11, "events: a flag cleared by an operator (worker_unflagged)", kEventsSchemaV11},
      {12, "known points: numbers with exact delays imported to close classes", kKnownPointsSchemaV12},
  };
  return kMigrations;
}

int LatestSchemaVersion() { return SchemaMigrations().back().to_version; }

Status MigrateSchema(sqlite3* db, int current_version) {
  for (const SchemaMigration& m : SchemaMigrations()) {
    if (m.to_version <= current_version) continue;
    SqliteTransaction txn(db);
    if (!txn.status().ok()) return txn.status();
    Status st = SqliteExec(db, m.sql);
    if (!st.ok()) {
      return Status::Internal("schema migration to v" + std::to_string(m.to_version) + " failed: " + st.message());
    }
    // Both pragmas live in the file header and are part of the transaction.
    st = SqliteExec(db, "PRAGMA application_id = " + std::to_string(kRecordDbApplicationId));
    if (!st.ok()) return st;
    st = SqliteExec(db, "PRAGMA user_version = " + std::to_string(m.to_version));
    if (!st.ok()) return st;
    st = txn.Commit();
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

}  // namespace collatz
