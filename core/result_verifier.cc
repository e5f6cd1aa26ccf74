#include "core/result_verifier.h"

#include <algorithm>

#include "core/delay.h"

namespace collatz {

namespace {

bool IsOpen(const UnitSpec& spec, uint32_t d) {
  return d > spec.floor || std::binary_search(spec.open_holes.begin(), spec.open_holes.end(), d);
}

Status CheckEntry(const Sieve* sieve, const UnitSpec& spec, const Record& r, const char* what) {
  const std::string name = std::string(what) + " entry " + ToDecimal(r.n) + ":" + std::to_string(r.delay);
  if (r.n < spec.begin || r.n >= spec.end) return Status::InvalidArgument(name + " lies outside the unit");
  if (sieve != nullptr && !IsExamined(*sieve, spec.kinds, r.n)) {
    return Status::InvalidArgument(name + " is not a number the sieve and mod rule keep");
  }
  const uint32_t exact = SlowDelay(r.n);
  if (exact != r.delay) {
    return Status::InvalidArgument(name + " is wrong: the exact delay is " + std::to_string(exact));
  }
  return Status::Ok();
}

}  // namespace

Status VerifyUnitResult(const Sieve* sieve, const UnitSpec& spec, const UnitResult& result) {
  if (result.ladder.size() > kMaxResultEntries || result.class_minima.size() > kMaxResultEntries) {
    return Status::InvalidArgument("result has implausibly many entries");
  }
  const u128 size = spec.end - spec.begin;
  if (static_cast<u128>(result.candidates) > size / 2 + 1) {
    return Status::InvalidArgument("candidates exceed the odd numbers of the unit");
  }
  if (sieve != nullptr) {
    // A count of residues, the same on every engine: cheap to check exactly.
    const u128 examined = CountExamined(*sieve, spec.kinds, spec.begin, spec.end);
    if (static_cast<u128>(result.candidates) != examined) {
      return Status::InvalidArgument("candidates: the unit holds " + ToDecimal(examined) + " numbers that the " +
                                     std::to_string(sieve->bits()) + "-bit sieve and the mod rule keep, the result " +
                                     std::to_string(result.candidates) + " (searched with another sieve width?)");
    }
  }
  if (result.tally_count > result.candidates) return Status::InvalidArgument("tally_count exceeds candidates");
  if (result.ladder.size() > result.candidates || result.class_minima.size() > result.candidates) {
    return Status::InvalidArgument("more entries than examined numbers");
  }
  uint32_t running = spec.floor;
  u128 prev_n = 0;
  for (const Record& r : result.ladder) {
    if (r.delay <= running || (prev_n != 0 && r.n <= prev_n)) {
      return Status::InvalidArgument("ladder entry " + ToDecimal(r.n) + " is out of order or not above the floor");
    }
    Status st = CheckEntry(sieve, spec, r, "ladder");
    if (!st.ok()) return st;
    running = r.delay;
    prev_n = r.n;
  }
  if (spec.kinds == Kinds::kDelay && !result.class_minima.empty()) {
    return Status::InvalidArgument("class minima in a delay-only unit");
  }
  bool first = true;
  uint32_t prev_delay = 0;
  for (const Record& r : result.class_minima) {
    if (!first && r.delay <= prev_delay) return Status::InvalidArgument("class minima are out of order");
    if (!IsOpen(spec, r.delay)) {
      return Status::InvalidArgument("class minimum for delay " + std::to_string(r.delay) + " is not an open class");
    }
    Status st = CheckEntry(sieve, spec, r, "class minimum");
    if (!st.ok()) return st;
    first = false;
    prev_delay = r.delay;
  }
  // Cross-check: a ladder entry of an open class is a member of that class, so the class
  // minimum must exist and be no larger.
  if (spec.kinds == Kinds::kDelayAndClass) {
    for (const Record& r : result.ladder) {
      auto it = std::lower_bound(result.class_minima.begin(), result.class_minima.end(), r.delay,
                                 [](const Record& m, uint32_t d) { return m.delay < d; });
      if (it == result.class_minima.end() || it->delay != r.delay || it->n > r.n) {
        return Status::InvalidArgument("ladder entry " + ToDecimal(r.n) + " has no class minimum at or below it");
      }
    }
  }
  if (result.tally_count < result.ladder.size()) return Status::InvalidArgument("tally_count below the ladder size");
  return Status::Ok();
}

}  // namespace collatz
