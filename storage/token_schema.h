// Schema version 9: access tokens per host and role (collatzctl tokens, docs/OPERATIONS.md),
// and the token each worker registered with. Appended to the migration list in schema.cc;
// like every migration it is never edited once released.
#pragma once

namespace collatz {

// tokens: one row per issued token, kept after it is revoked (names are never reused: a
// flag sticks to "token:NAME", docs/PROTOCOL.md). Only the SHA-256 of a token is stored;
// tokens are 256 random bits, so no salt is needed and a lookup by digest stays possible.
// workers.token_name: the stored token the worker registered with; '' for the server's
// shared token, no token, and workers registered before v9. v_workers is recreated to
// show it; v_tokens shows the tokens without their digests.
inline constexpr const char* kTokenSchemaV9 = R"sql(
CREATE TABLE tokens (
  name         TEXT PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64),
  role         TEXT NOT NULL CHECK (role IN ('worker', 'admin')),
  sha256       TEXT NOT NULL UNIQUE CHECK (length(sha256) = 64),
  created_ms   INTEGER NOT NULL,
  revoked_ms   INTEGER NOT NULL DEFAULT 0,  -- 0: valid
  last_used_ms INTEGER NOT NULL DEFAULT 0   -- 0: never (written about once a minute)
);

ALTER TABLE workers ADD COLUMN token_name TEXT NOT NULL DEFAULT '';

DROP VIEW v_workers;
CREATE VIEW v_workers AS
  SELECT id, host, backend, sieve_bits, unit_sieve_bits, token_name, flagged, flag_reason, units_finished,
         ltrim(numbers_finished, '0') AS numbers_finished, seconds, registered_at
  FROM workers ORDER BY id;

CREATE VIEW v_tokens AS
  SELECT name, role, strftime('%Y-%m-%dT%H:%M:%SZ', created_ms / 1000, 'unixepoch') AS created,
         CASE WHEN revoked_ms = 0 THEN NULL
              ELSE strftime('%Y-%m-%dT%H:%M:%SZ', revoked_ms / 1000, 'unixepoch') END AS revoked,
         CASE WHEN last_used_ms = 0 THEN NULL
              ELSE strftime('%Y-%m-%dT%H:%M:%SZ', last_used_ms / 1000, 'unixepoch') END AS last_used
  FROM tokens ORDER BY name;
)sql";

}  // namespace collatz
