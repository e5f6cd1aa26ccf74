#include "cli/verify_result.h"

#include "core/delay.h"

namespace collatz::cli {

namespace {

Status CheckEntry(const UnitSpec& spec, const Record& r, const char* what) {
  if (r.n < spec.begin || r.n >= spec.end) {
    return Status::Internal(std::string(what) + " entry " + ToDecimal(r.n) + " lies outside the unit");
  }
  const uint32_t exact = SlowDelay(r.n);
  if (exact != r.delay) {
    return Status::Internal(std::string(what) + " entry " + ToDecimal(r.n) + " reports delay " +
                            std::to_string(r.delay) + " but its exact delay is " + std::to_string(exact));
  }
  return Status::Ok();
}

}  // namespace

Status VerifyUnitResult(const UnitSpec& spec, const UnitResult& result) {
  uint32_t running = spec.floor;
  u128 prev_n = 0;
  for (const Record& r : result.ladder) {
    Status st = CheckEntry(spec, r, "ladder");
    if (!st.ok()) return st;
    if (r.delay <= running || (prev_n != 0 && r.n <= prev_n)) {
      return Status::Internal("ladder entry " + ToDecimal(r.n) + " is out of order");
    }
    running = r.delay;
    prev_n = r.n;
  }
  uint32_t prev_delay = 0;
  bool first = true;
  for (const Record& r : result.class_minima) {
    Status st = CheckEntry(spec, r, "class minimum");
    if (!st.ok()) return st;
    if (!first && r.delay <= prev_delay) return Status::Internal("class minima are out of order");
    first = false;
    prev_delay = r.delay;
  }
  return Status::Ok();
}

}  // namespace collatz::cli
