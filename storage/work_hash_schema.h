// Schema version 4: the version of each stored work hash (core/work_hash.h). Appended to
// the migration list in schema.cc; like every migration it is never edited once released.
// Rows written before it were computed by binaries of work hash version 1; audits compare
// work hashes only between results of the same version (UnitResult::operator==).
#pragma once

namespace collatz {

// Workers registered before it were binaries of version 1 too: the coordinator refuses
// them until they register again as the server's version (docs/PROTOCOL.md). v_units is
// recreated to show the new column.
inline constexpr const char* kWorkHashSchemaV4 = R"sql(
ALTER TABLE unit_results ADD COLUMN work_hash_version INTEGER NOT NULL DEFAULT 1 CHECK (work_hash_version >= 1);
ALTER TABLE workers ADD COLUMN work_hash_version INTEGER NOT NULL DEFAULT 1;

DROP VIEW v_units;
CREATE VIEW v_units AS
  SELECT u.id, ltrim(u.begin_n, '0') AS begin_n, ltrim(u.end_n, '0') AS end_n, u.kinds, u.state,
         r.floor, r.open_holes, r.candidates, r.tally_count, r.tally_sum, r.work_hash, r.work_hash_version, r.engine,
         r.seconds, u.created_at, u.finished_at
  FROM units u LEFT JOIN unit_results r ON r.unit_id = u.id
  ORDER BY u.begin_n, u.id;
)sql";

}  // namespace collatz
