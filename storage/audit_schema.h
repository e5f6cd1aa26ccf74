// Schema version 5: audits that settle a mismatch (docs/PROTOCOL.md, "Lying workers and
// audits"). Appended to the migration list in schema.cc; like every migration it is never
// edited once released.
#pragma once

namespace collatz {

// flagged_identities: the GPUs (by UUID) or, for a worker without GPUs, the installation
// (workers.instance_id, new here) or else the host of every flagged worker, so that
// registering again does not wash a flag off. audits gains the
// token of the result that was audited, the auditor's whole result (DescribeUnitResult) and
// the verdict; an `open` mismatch waits for a third opinion and is reloaded on restart.
// Rows from before it have verdict '' and are never reloaded.
inline constexpr const char* kAuditSchemaV5 = R"sql(
CREATE TABLE flagged_identities (
  identity   TEXT PRIMARY KEY,  -- 'gpu:UUID' or 'host:NAME'
  worker_id  INTEGER NOT NULL,  -- the worker whose flag put it here
  reason     TEXT NOT NULL,
  flagged_ms INTEGER NOT NULL
);

ALTER TABLE workers ADD COLUMN instance_id TEXT NOT NULL DEFAULT '';

ALTER TABLE audits ADD COLUMN audited_token TEXT NOT NULL DEFAULT '';
ALTER TABLE audits ADD COLUMN auditor_result TEXT NOT NULL DEFAULT '';
ALTER TABLE audits ADD COLUMN verdict TEXT NOT NULL DEFAULT '';
)sql";

}  // namespace collatz
