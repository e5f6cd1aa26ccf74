// Schema version 6: what the coordinator's web dashboard (server/dashboard/) reads besides
// its memory: finished work per minute and a log of events. Appended to the migration list
// in schema.cc; like every migration it is never edited once released.
#pragma once

namespace collatz {

inline constexpr const char* kDashboardSchemaV6 = R"sql(
-- Search units accepted per minute (the unit counts when its result is stored; a unit
-- revoked later stays counted: the work was done). minute_ms: start of the minute, in ms
-- since the Unix epoch (UTC).
CREATE TABLE throughput (
  minute_ms INTEGER PRIMARY KEY CHECK (minute_ms % 60000 = 0),
  units     INTEGER NOT NULL,
  numbers   TEXT NOT NULL CHECK (length(numbers) = 39)
);

-- Things an operator wants to hear about, newest last.
CREATE TABLE events (
  id     INTEGER PRIMARY KEY,
  at_ms  INTEGER NOT NULL,
  kind   TEXT NOT NULL CHECK (kind IN ('worker_flagged', 'unit_quarantined', 'stats_unit_quarantined')),
  detail TEXT NOT NULL
);
CREATE INDEX events_by_time ON events (at_ms);

CREATE VIEW v_throughput AS
  SELECT strftime('%Y-%m-%dT%H:%M:%SZ', minute_ms / 1000, 'unixepoch') AS minute, units,
         ltrim(numbers, '0') AS numbers
  FROM throughput ORDER BY minute_ms;

CREATE VIEW v_events AS
  SELECT id, strftime('%Y-%m-%dT%H:%M:%SZ', at_ms / 1000, 'unixepoch') AS at, kind, detail FROM events ORDER BY id;
)sql";

// Schema version 7: the chart's stats units (batch statistics), which v6 did not count.
inline constexpr const char* kDashboardSchemaV7 = R"sql(
-- Stats units accepted per minute, as throughput holds search units.
CREATE TABLE stats_throughput (
  minute_ms INTEGER PRIMARY KEY CHECK (minute_ms % 60000 = 0),
  units     INTEGER NOT NULL,
  numbers   TEXT NOT NULL CHECK (length(numbers) = 39)
);

CREATE VIEW v_stats_throughput AS
  SELECT strftime('%Y-%m-%dT%H:%M:%SZ', minute_ms / 1000, 'unixepoch') AS minute, units,
         ltrim(numbers, '0') AS numbers
  FROM stats_throughput ORDER BY minute_ms;
)sql";

// Schema version 11: the events log also keeps a flag that an operator cleared
// (collatzctl unflag). SQLite cannot change a CHECK, so the table is rebuilt with its rows,
// ids and index; its view is made again.
inline constexpr const char* kEventsSchemaV11 = R"sql(
DROP VIEW v_events;
CREATE TABLE events_v11 (
  id     INTEGER PRIMARY KEY,
  at_ms  INTEGER NOT NULL,
  kind   TEXT NOT NULL CHECK (kind IN ('worker_flagged', 'worker_unflagged', 'unit_quarantined',
                                       'stats_unit_quarantined')),
  detail TEXT NOT NULL
);
INSERT INTO events_v11 (id, at_ms, kind, detail) SELECT id, at_ms, kind, detail FROM events;
DROP TABLE events;
ALTER TABLE events_v11 RENAME TO events;
CREATE INDEX events_by_time ON events (at_ms);
CREATE VIEW v_events AS
  SELECT id, strftime('%Y-%m-%dT%H:%M:%SZ', at_ms / 1000, 'unixepoch') AS at, kind, detail FROM events ORDER BY id;
)sql";

}  // namespace collatz
