#include "worker/self_test.h"

#include <algorithm>
#include <chrono>

#include "core/delay.h"
#include "core/merge.h"
#include "core/published_points.h"

namespace collatz::worker {
namespace {

// A path record that climbs to about 2^125.6: its trajectory needs the full 128 bits, and
// a searcher that loses a carry in its 128-bit multiply reports a false record here.
constexpr u128 kWideN = 1980976057694848447ULL;
constexpr uint32_t kWideDelay = 1475;

bool Contains(const std::vector<Record>& v, Record r) { return std::find(v.begin(), v.end(), r) != v.end(); }

Status Compare(const char* name, const UnitResult& got, const UnitResult& want) {
  if (got == want) return Status::Ok();
  return Status::Internal(std::string(name) + ": engine returned " + DescribeUnitResult(got) + ", the reference " +
                          DescribeUnitResult(want));
}

}  // namespace

Status RunSelfTest(SearchEngine& engine, const SearchTables& tables, std::string* summary, u128 window_numbers) {
  const auto t0 = std::chrono::steady_clock::now();

  // 1. [1, 2^20) from scratch: the first block (unsieved), every kind, floor 0.
  UnitSpec first;
  first.begin = 1;
  first.end = Pow2(20);
  first.kinds = Kinds::kDelayAndClass;
  const UnitResult first_want = SearchRangeSimple(tables, first, first.begin, first.end);
  // Facts independent of this code: 837799 (delay 524) is the largest delay record below
  // 2^20; 77031 has delay 350 (OEIS A006877/A006878).
  if (!Contains(first_want.ladder, {837799, 524}) || !Contains(first_want.ladder, {77031, 350})) {
    return Status::Internal("self-test: the reference path itself misses the delay records 77031 and 837799");
  }
  UnitResult first_got;
  Status st = engine.Search(first, &first_got);
  if (!st.ok()) return Status::Internal("self-test [1, 2^20): " + st.ToString());
  if (st = Compare("self-test [1, 2^20)", first_got, first_want); !st.ok()) return st;

  // 2. A window near 2^60.8 holding 1980976057694848447, with early termination on the
  // records below 2^20 that case 1 established.
  if (SlowDelay(kWideN) != kWideDelay) return Status::Internal("self-test: SlowDelay(1980976057694848447) != 1475");
  FinishedUnit fu;
  fu.begin = first.begin;
  fu.end = first.end;
  fu.kinds = first.kinds;
  fu.result = first_want;
  const MergedRecords merged = MergeRecords({}, {fu});
  UnitSpec wide;
  wide.begin = kWideN - (kWideN % Pow2(15));
  wide.end = wide.begin + Pow2(16);
  wide.kinds = Kinds::kDelayAndClass;
  wide.floor = kWideDelay - 1;
  wide.known_records = merged.delay_final;
  wide.records_complete_below = merged.covered_prefix;
  if (st = ValidateUnitSpec(wide); !st.ok()) return Status::Internal("self-test spec: " + st.ToString());
  const UnitResult wide_want = SearchRangeSimple(tables, wide, wide.begin, wide.end);
  if (!Contains(wide_want.ladder, {kWideN, kWideDelay})) {
    return Status::Internal("self-test: the reference path misses 1980976057694848447 (delay 1475) in its window");
  }
  UnitResult wide_got;
  st = engine.Search(wide, &wide_got);
  if (!st.ok()) return Status::Internal("self-test near 1980976057694848447: " + st.ToString());
  if (st = Compare("self-test near 1980976057694848447", wide_got, wide_want); !st.ok()) return st;

  // 3. A unit of production kind: window_numbers, aligned as the coordinator cuts units, holding
  // the first odd published record above 2^60, leased with the published records below it as
  // a trusted table (each delay recomputed). The record must be on its ladder with its exact
  // delay, and every ladder entry must check.
  Record record;
  for (const Record& r : PublishedDelayPoints()) {
    if (r.n > Pow2(60) && r.n % 2 == 1) {
      record = r;
      break;
    }
  }
  if (record.n == 0) return Status::Internal("self-test: no published record above 2^60");
  UnitSpec window;
  window.begin = record.n - record.n % window_numbers;
  window.end = window.begin + window_numbers;
  window.kinds = Kinds::kDelay;
  for (const Record& r : PublishedDelayPoints()) {
    if (r.n >= window.begin) break;
    window.known_records.push_back(r);
    window.floor = r.delay;
  }
  window.records_complete_below = window.begin;
  if (st = ValidateUnitSpec(window); !st.ok()) return Status::Internal("self-test spec: " + st.ToString());
  UnitResult window_got;
  st = engine.Search(window, &window_got);
  if (!st.ok()) return Status::Internal("self-test near " + ToDecimal(record.n) + ": " + st.ToString());
  if (!Contains(window_got.ladder, record)) {
    return Status::Internal("self-test: the engine misses the published record " + ToDecimal(record.n) + " (delay " +
                            std::to_string(record.delay) + ") in [" + ToDecimal(window.begin) + ", " +
                            ToDecimal(window.end) + "): " + DescribeUnitResult(window_got));
  }
  uint32_t running = window.floor;
  for (const Record& r : window_got.ladder) {
    if (r.n < window.begin || r.n >= window.end || r.delay <= running || SlowDelay(r.n) != r.delay) {
      return Status::Internal("self-test: ladder entry " + ToDecimal(r.n) + ":" + std::to_string(r.delay) +
                              " does not check");
    }
    running = r.delay;
  }

  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  *summary = "[1, 2^20) (" + std::to_string(first_got.ladder.size()) + " ladder entries, " +
             std::to_string(first_got.class_minima.size()) + " class minima) and [" + ToDecimal(wide.begin) + ", " +
             ToDecimal(wide.end) + ") holding 1980976057694848447 (delay 1475) with early termination, equal to the reference, and [" + ToDecimal(window.begin) + ", +" +
             ToDecimal(window_numbers) + ") holding the published record " + ToDecimal(record.n) + " on its ladder, in " +
             std::to_string(static_cast<int>(ms)) + " ms";
  return Status::Ok();
}

}  // namespace collatz::worker
