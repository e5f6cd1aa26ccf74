// Schema version 2: the coordinator's state (submissions, workers, leases and their
// tokens, failed attempts and quarantine, audits). Appended to the migration list in
// schema.cc; like every migration it is never edited once released.
#pragma once

namespace collatz {

// Units keep living in the v1 `units` table (state pending/leased/finished); a quarantined
// unit is a pending unit with unit_work.quarantined = 1.
inline constexpr const char* kCoordinatorSchemaV2 = R"sql(
CREATE TABLE submissions (
  id         INTEGER PRIMARY KEY,
  begin_n    TEXT NOT NULL CHECK (length(begin_n) = 39),
  end_n      TEXT NOT NULL CHECK (length(end_n) = 39 AND end_n > begin_n),
  kinds      TEXT NOT NULL CHECK (kinds IN ('delay', 'delay,class')),
  unit_size  TEXT NOT NULL CHECK (length(unit_size) = 39),
  priority   INTEGER NOT NULL DEFAULT 0,
  cancelled  INTEGER NOT NULL DEFAULT 0 CHECK (cancelled IN (0, 1)),
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TABLE workers (
  id               INTEGER PRIMARY KEY,
  host             TEXT NOT NULL,
  gpus             TEXT NOT NULL,  -- "model|uuid" per GPU, separated by newlines
  driver           TEXT NOT NULL,
  binary_version   TEXT NOT NULL,
  backend          TEXT NOT NULL,
  sieve_bits       INTEGER NOT NULL,
  flagged          INTEGER NOT NULL DEFAULT 0 CHECK (flagged IN (0, 1)),
  flag_reason      TEXT NOT NULL DEFAULT '',
  units_finished   INTEGER NOT NULL DEFAULT 0,
  numbers_finished TEXT NOT NULL DEFAULT '000000000000000000000000000000000000000' CHECK (length(numbers_finished) = 39),
  seconds          REAL NOT NULL DEFAULT 0,
  registered_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- Coordinator bookkeeping of each unit (one row per row of units).
CREATE TABLE unit_work (
  unit_id       INTEGER PRIMARY KEY REFERENCES units (id) ON DELETE CASCADE,
  submission_id INTEGER NOT NULL REFERENCES submissions (id),
  priority      INTEGER NOT NULL,
  failures      INTEGER NOT NULL DEFAULT 0,
  quarantined   INTEGER NOT NULL DEFAULT 0 CHECK (quarantined IN (0, 1)),
  last_error    TEXT NOT NULL DEFAULT '',
  finished_by   INTEGER REFERENCES workers (id),
  finished_token TEXT,
  audit_state   TEXT NOT NULL DEFAULT 'none' CHECK (audit_state IN ('none', 'wanted', 'passed'))
);
CREATE INDEX unit_work_by_submission ON unit_work (submission_id);

-- Every lease ever issued. The token is a random 128-bit hex string.
CREATE TABLE leases (
  token       TEXT PRIMARY KEY CHECK (length(token) = 32),
  unit_id     INTEGER NOT NULL REFERENCES units (id) ON DELETE CASCADE,
  worker_id   INTEGER NOT NULL REFERENCES workers (id),
  purpose     TEXT NOT NULL CHECK (purpose IN ('search', 'audit')),
  state       TEXT NOT NULL CHECK (state IN ('active', 'expired', 'released', 'completed', 'superseded', 'revoked', 'rejected')),
  floor       INTEGER NOT NULL,
  open_holes  TEXT NOT NULL,  -- comma-separated delays, ascending
  issued_ms   INTEGER NOT NULL,
  deadline_ms INTEGER NOT NULL
);
CREATE INDEX leases_by_unit ON leases (unit_id);
CREATE INDEX leases_active ON leases (state, deadline_ms);

-- Failed attempts (expired lease, failed release, rejected result): the quarantine count.
CREATE TABLE attempts (
  id        INTEGER PRIMARY KEY,
  unit_id   INTEGER NOT NULL REFERENCES units (id) ON DELETE CASCADE,
  worker_id INTEGER,
  token     TEXT,
  kind      TEXT NOT NULL CHECK (kind IN ('expired', 'released', 'rejected', 'audit_mismatch', 'revoked')),
  error     TEXT NOT NULL,
  at_ms     INTEGER NOT NULL
);

CREATE TABLE audits (
  id                INTEGER PRIMARY KEY,
  unit_id           INTEGER NOT NULL REFERENCES units (id) ON DELETE CASCADE,
  original_worker   INTEGER,
  auditor_worker    INTEGER NOT NULL,
  token             TEXT NOT NULL,
  outcome           TEXT NOT NULL CHECK (outcome IN ('matched', 'mismatch')),
  detail            TEXT NOT NULL,
  at_ms             INTEGER NOT NULL
);

CREATE VIEW v_leases AS
  SELECT l.token, l.unit_id, ltrim(u.begin_n, '0') AS begin_n, ltrim(u.end_n, '0') AS end_n, l.worker_id,
         l.purpose, l.state, l.floor, l.issued_ms, l.deadline_ms
  FROM leases l JOIN units u ON u.id = l.unit_id ORDER BY l.issued_ms;

CREATE VIEW v_workers AS
  SELECT id, host, backend, sieve_bits, flagged, flag_reason, units_finished,
         ltrim(numbers_finished, '0') AS numbers_finished, seconds, registered_at
  FROM workers ORDER BY id;

CREATE VIEW v_quarantine AS
  SELECT u.id, ltrim(u.begin_n, '0') AS begin_n, ltrim(u.end_n, '0') AS end_n, w.failures, w.last_error
  FROM units u JOIN unit_work w ON w.unit_id = u.id WHERE w.quarantined = 1 ORDER BY u.begin_n;

CREATE VIEW v_submissions AS
  SELECT s.id, ltrim(s.begin_n, '0') AS begin_n, ltrim(s.end_n, '0') AS end_n, s.kinds, s.priority, s.cancelled,
         (SELECT count(*) FROM unit_work w WHERE w.submission_id = s.id) AS units,
         (SELECT count(*) FROM unit_work w JOIN units u ON u.id = w.unit_id
           WHERE w.submission_id = s.id AND u.state = 'finished') AS finished
  FROM submissions s ORDER BY s.id;
)sql";

}  // namespace collatz
