// Schema version 12: imported known points (core/known_points.h, docs/DATABASE.md).
// Appended to the migration list in schema.cc; like every migration it is never edited
// once released.
#pragma once

namespace collatz {

// known_point_imports: one row an import (where the points came from, when).
// known_points: numbers with their exact delays (checked before they are stored), one row
//   a number; a number imported again keeps its first row.
inline constexpr const char* kKnownPointsSchemaV12 = R"sql(
CREATE TABLE known_point_imports (
  id          INTEGER PRIMARY KEY,
  source      TEXT NOT NULL,
  imported_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TABLE known_points (
  n         TEXT PRIMARY KEY CHECK (length(n) = 39 AND n > '000000000000000000000000000000000000000'),
  delay     INTEGER NOT NULL CHECK (delay >= 0),
  import_id INTEGER NOT NULL REFERENCES known_point_imports (id) ON DELETE CASCADE
);

CREATE VIEW v_known_points AS
  SELECT ltrim(p.n, '0') AS n, p.delay, i.source, i.imported_at
  FROM known_points p JOIN known_point_imports i ON i.id = p.import_id ORDER BY p.n;
)sql";

}  // namespace collatz
