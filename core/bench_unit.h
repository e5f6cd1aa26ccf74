// The unit a benchmark at height `at` searches: the unit a real frontier search would be
// leased there. Trusted record lists stand for the searches a real frontier has behind
// it: published delay records (complete up to their largest n) and exhaustive class
// records (complete up to their largest n). From them come the floor, the open holes
// (classes <= floor with no known member below `at`) and the record table for early
// termination, exactly as ComputeLeaseContext gives them to a lease. Used by
// `collatzctl bench` and gpu/gpu_bench.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "core/unit.h"

namespace collatz {

struct BenchUnit {
  UnitSpec spec;                  // [at, at + numbers) with floor, open holes, record table
  size_t holes_closed_by_points = 0;  // holes the known points closed (and their members, found from them)
  u128 delay_complete_below = 1;  // the delay list was trusted below this: min(at, largest n + 1) (1: not trusted)
  u128 class_complete_below = 1;  // likewise the class list (1: none given or not trusted)
  size_t holes_closed_by_members = 0;  // holes the class-member search closed (delay+class only)
};

// What the bench unit knows, i.e. which of the three situations of a search it measures.
enum class BenchContext {
  kNone,     // floor 0, no open holes, no record table: nothing is known below the unit
  kFloor,    // the provable floor and holes from the delay list's numbers below the unit, each
             // delay recomputed, none trusted: no record table, so no early termination; what
             // `collatzctl run` gives a unit on an empty database (core/unit_spec.h)
  kTrusted,  // the lists imported as trusted: floor, holes and the record table (the default)
};
const char* BenchContextName(BenchContext context);  // "none", "floor", "trusted"
Status ParseBenchContext(const std::string& text, BenchContext* out);

struct BenchUnitOptions {
  BenchContext context = BenchContext::kTrusted;
  // Delay+class units: close the holes that members found below `at` in the inverse tree of
  // the delay records fill (core/class_members.h). This stands in for the published class
  // records of a real frontier, which ../shared/data lacks above 2^28; without it nearly
  // every class above delay 956 stays open and almost no number can stop early.
  bool close_holes_by_members = true;
  // Known points (core/known_points.h) as a database would hold them after `collatzctl
  // import --points`: in the floor and trusted contexts they raise the floor and close classes
  // below `at`, and seed the member search. Checked like an import of them (every delay
  // recomputed; none may contradict the trusted lists).
  std::vector<Record> known_points;
};

// delay_records: (n, delay), complete up to their largest n; must start at n = 1.
// class_records: (n, delay), each the smallest n of its delay, complete up to their
//   largest n; may be empty (classes are then closed only by the delay records and their
//   doublings, so a delay+class unit has many more open holes).
// Every row's delay is recomputed exactly; a wrong row, a repeated n or delay, or a delay
// list that is no record list is InvalidArgument. Needs at >= 1, numbers >= 1 and
// at + numbers <= 2^128 - 1.
Status BuildBenchUnit(const std::vector<Record>& delay_records, const std::vector<Record>& class_records, u128 at,
                      u128 numbers, Kinds kinds, BenchUnit* out, const BenchUnitOptions& options = {});

// The same from CSV files (core/records_csv.h: delay_csv "n,delay", class_csv "delay,n";
// an empty class_csv path: no class records). Errors name the file.
Status LoadBenchUnit(const std::string& delay_csv, const std::string& class_csv, u128 at, u128 numbers, Kinds kinds,
                     BenchUnit* out, const BenchUnitOptions& options = {});

// BuildBenchUnit's error with the source of the list whose rows are wrong in front (the
// file, or how a caller names a built-in copy); other errors and Ok unchanged.
Status NameBenchUnitError(const Status& st, const std::string& delay_source, const std::string& class_source);

}  // namespace collatz
