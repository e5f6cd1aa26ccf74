// Schema version 8: the sieve width of each unit, fixed when the coordinator cuts it
// (collatz-server --class-sieve-bits gives wide delay+class units a wider sieve), and
// whether a worker searches each unit with the width its lease names. Appended to the
// migration list in schema.cc; like every migration it is never edited once released.
#pragma once

namespace collatz {

// units.sieve_bits: the width the unit is searched, verified and audited with; 0 in rows
// from before v8 (and in collatzctl's own units): the coordinator's base width
// (--sieve-bits / --sieve), the only width there was. workers.unit_sieve_bits: 1 when the
// worker registered saying it honours Unit.sieve_bits (RegisterRequest.unit_sieve_bits),
// 0 for workers registered before v8. v_units and v_workers are recreated to show them.
inline constexpr const char* kUnitSieveSchemaV8 = R"sql(
ALTER TABLE units ADD COLUMN sieve_bits INTEGER NOT NULL DEFAULT 0 CHECK (sieve_bits >= 0);
ALTER TABLE workers ADD COLUMN unit_sieve_bits INTEGER NOT NULL DEFAULT 0 CHECK (unit_sieve_bits IN (0, 1));

DROP VIEW v_units;
CREATE VIEW v_units AS
  SELECT u.id, ltrim(u.begin_n, '0') AS begin_n, ltrim(u.end_n, '0') AS end_n, u.kinds, u.sieve_bits, u.state,
         r.floor, r.open_holes, r.candidates, r.tally_count, r.tally_sum, r.work_hash, r.work_hash_version, r.engine,
         r.seconds, u.created_at, u.finished_at
  FROM units u LEFT JOIN unit_results r ON r.unit_id = u.id
  ORDER BY u.begin_n, u.id;

DROP VIEW v_workers;
CREATE VIEW v_workers AS
  SELECT id, host, backend, sieve_bits, unit_sieve_bits, flagged, flag_reason, units_finished,
         ltrim(numbers_finished, '0') AS numbers_finished, seconds, registered_at
  FROM workers ORDER BY id;
)sql";

}  // namespace collatz
