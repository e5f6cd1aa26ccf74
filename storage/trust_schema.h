// Schema version 10: the trust policy's bookkeeping (docs/PROTOCOL.md, "Trust model").
// Appended to the migration list in schema.cc; like every migration it is never edited
// once released.
#pragma once

namespace collatz {

// unit_work.counted_seq: when the unit's result first entered the merge that leases are
//   made from (its place in a sequence the coordinator counts up; 0: never counted).
// unit_work.checked_by: the worker whose agreeing result checked it (0: none, or the
//   server's own re-run), so that a checker flagged later has its checks made again.
// leases.table_seq: the counted_seq of the newest result in the merge the lease's record
//   table, floor and holes came from; a unit depends on every counted result below it
//   with counted_seq <= table_seq, and is searched again when one of them is revoked.
// workers.checks_agreed: agreeing checks of the worker's results since its last
//   disagreement (adaptive double checks check a trusted worker less often).
inline constexpr const char* kTrustSchemaV10 = R"sql(
ALTER TABLE unit_work ADD COLUMN counted_seq INTEGER NOT NULL DEFAULT 0 CHECK (counted_seq >= 0);
ALTER TABLE unit_work ADD COLUMN checked_by INTEGER NOT NULL DEFAULT 0;
ALTER TABLE leases ADD COLUMN table_seq INTEGER NOT NULL DEFAULT 0 CHECK (table_seq >= 0);
ALTER TABLE workers ADD COLUMN checks_agreed INTEGER NOT NULL DEFAULT 0 CHECK (checks_agreed >= 0);
)sql";

}  // namespace collatz
