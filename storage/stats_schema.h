// Schema version 3: stats jobs (issue 6), batch statistics distributed like searches.
// Appended to the migration list in schema.cc; like every migration it is never edited
// once released. Stats units, their leases and attempts have their own tables (a stats
// unit has no kinds, floor or records; its result is one stats file).
#pragma once

namespace collatz {

inline constexpr const char* kStatsSchemaV3 = R"sql(
CREATE TABLE stats_jobs (
  id         INTEGER PRIMARY KEY,
  begin_n    TEXT NOT NULL CHECK (length(begin_n) = 39),
  end_n      TEXT NOT NULL CHECK (length(end_n) = 39 AND end_n > begin_n),
  batch      INTEGER NOT NULL CHECK (batch >= 2),
  unit_size  TEXT NOT NULL CHECK (length(unit_size) = 39),
  priority   INTEGER NOT NULL DEFAULT 0,
  cancelled  INTEGER NOT NULL DEFAULT 0 CHECK (cancelled IN (0, 1)),
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- A unit is batch aligned: begin_n and end_n are multiples of the job's batch.
-- result: the unit's batches as a stats file (docs/STATS_FORMAT.md), NULL until finished.
CREATE TABLE stats_units (
  id             INTEGER PRIMARY KEY,
  job_id         INTEGER NOT NULL REFERENCES stats_jobs (id) ON DELETE CASCADE,
  begin_n        TEXT NOT NULL CHECK (length(begin_n) = 39),
  end_n          TEXT NOT NULL CHECK (length(end_n) = 39 AND end_n > begin_n),
  state          TEXT NOT NULL CHECK (state IN ('pending', 'leased', 'finished')),
  failures       INTEGER NOT NULL DEFAULT 0,
  quarantined    INTEGER NOT NULL DEFAULT 0 CHECK (quarantined IN (0, 1)),
  last_error     TEXT NOT NULL DEFAULT '',
  finished_by    INTEGER REFERENCES workers (id),
  finished_token TEXT,
  result         BLOB,
  engine         TEXT,
  seconds        REAL,
  finished_at    TEXT,
  CHECK ((state = 'finished') = (result IS NOT NULL))
);
CREATE INDEX stats_units_by_job ON stats_units (job_id, begin_n);

CREATE TABLE stats_leases (
  token         TEXT PRIMARY KEY CHECK (length(token) = 32),
  stats_unit_id INTEGER NOT NULL REFERENCES stats_units (id) ON DELETE CASCADE,
  worker_id     INTEGER NOT NULL REFERENCES workers (id),
  state         TEXT NOT NULL CHECK (state IN ('active', 'expired', 'released', 'completed', 'superseded', 'revoked', 'rejected')),
  issued_ms     INTEGER NOT NULL,
  deadline_ms   INTEGER NOT NULL
);
CREATE INDEX stats_leases_by_unit ON stats_leases (stats_unit_id);

-- Failed attempts of stats units (the quarantine count), as `attempts` for search units.
CREATE TABLE stats_attempts (
  id            INTEGER PRIMARY KEY,
  stats_unit_id INTEGER NOT NULL REFERENCES stats_units (id) ON DELETE CASCADE,
  worker_id     INTEGER,
  token         TEXT,
  kind          TEXT NOT NULL CHECK (kind IN ('expired', 'released', 'rejected', 'revoked')),
  error         TEXT NOT NULL,
  at_ms         INTEGER NOT NULL
);

CREATE VIEW v_stats_jobs AS
  SELECT j.id, coalesce(nullif(ltrim(j.begin_n, '0'), ''), '0') AS begin_n, ltrim(j.end_n, '0') AS end_n, j.batch, j.priority, j.cancelled,
         (SELECT count(*) FROM stats_units u WHERE u.job_id = j.id) AS units,
         (SELECT count(*) FROM stats_units u WHERE u.job_id = j.id AND u.state = 'finished') AS finished,
         j.created_at
  FROM stats_jobs j ORDER BY j.id;

CREATE VIEW v_stats_units AS
  SELECT id, job_id, coalesce(nullif(ltrim(begin_n, '0'), ''), '0') AS begin_n, ltrim(end_n, '0') AS end_n, state, failures, quarantined,
         last_error, finished_by, length(result) AS result_bytes, engine, seconds, finished_at
  FROM stats_units ORDER BY job_id, begin_n;
)sql";

}  // namespace collatz
