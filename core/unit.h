// A work unit and what searching it returns (SPEC section 5).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "core/sieve.h"
#include "core/u128.h"
#include "core/work_hash.h"

namespace collatz {

struct Record {
  u128 n = 0;
  uint32_t delay = 0;
  bool operator==(const Record& o) const { return n == o.n && delay == o.delay; }
};
// For test failure messages: "n:delay".
inline void PrintTo(const Record& r, std::ostream* os) { *os << ToDecimal(r.n) << ":" << r.delay; }

// What a unit is searched with. Everything here is known at lease time.
struct UnitSpec {
  u128 begin = 1;  // a (>= 1)
  u128 end = 1;    // b (exclusive, > a)
  Kinds kinds = Kinds::kDelayAndClass;
  // F: the largest delay of any N < a known at lease time (0 if none).
  uint32_t floor = 0;
  // Open classes: every d > floor, plus these holes d <= floor (ascending) for which no
  // N < a with delay d is known.
  std::vector<uint32_t> open_holes;
  // For exact early termination (SPEC 3): delay records, ascending by n, complete below
  // `records_complete_below` (0 disables early termination). Must start with n = 1.
  std::vector<Record> known_records;
  u128 records_complete_below = 0;
};

// What searching a unit returns. Identical on every engine for the same spec and sieve.
struct UnitResult {
  // Every computed N, ascending, whose delay exceeds the floor and every delay before it
  // in the unit.
  std::vector<Record> ladder;
  // For each open class d hit in the unit, the smallest computed N with delay d; ascending by delay.
  std::vector<Record> class_minima;
  // Numbers examined: every N of [a, b) that survives the sieve and the kind's mod rule.
  uint64_t candidates = 0;
  // Audit tallies over the examined N whose delay is open (> floor, or an open hole): how
  // many and the sum of their delays (mod 2^64). These are defined by the mathematics alone,
  // so engines that terminate early in different places still agree.
  uint64_t tally_count = 0;
  uint64_t tally_sum = 0;
  // Checksum over the examined N (core/work_hash.h): sum (mod 2^64) of WorkHashTerm(low 64
  // bits of the value after the first k T-steps; in the first block, of N).
  uint64_t work_hash = 0;
  // The definition work_hash follows: kWorkHashVersion for results computed by this
  // binary; results stored by older binaries keep theirs.
  uint32_t work_hash_version = kWorkHashVersion;

  // Equal results; work hashes of different versions are not comparable and are skipped.
  bool operator==(const UnitResult& o) const {
    return ladder == o.ladder && class_minima == o.class_minima && candidates == o.candidates &&
           tally_count == o.tally_count && tally_sum == o.tally_sum &&
           (work_hash_version != o.work_hash_version || work_hash == o.work_hash);
  }
};

// splitmix64's finalizer: a cheap, well-mixing 64-bit function (audit sampling).
inline constexpr uint64_t Mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// Checks a spec for consistency (a < b, holes ascending and <= floor, records ascending).
Status ValidateUnitSpec(const UnitSpec& spec);

// Combines results of consecutive sub-ranges (in ascending order) searched with the same
// floor and open classes into the result of their union.
class UnitResultCombiner {
 public:
  explicit UnitResultCombiner(uint32_t floor) : running_max_(floor) {}
  void Add(const UnitResult& part);
  UnitResult Finish();

 private:
  uint32_t running_max_;
  UnitResult out_;
  std::vector<u128> min_by_delay_;
  std::vector<bool> has_min_;
};

std::string DescribeUnitResult(const UnitResult& r);

}  // namespace collatz
