// Helpers shared by the tests: the reference data and contexts built from it.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/merge.h"
#include "core/records_csv.h"
#include "core/sieve.h"
#include "core/unit.h"

namespace collatz::testing_support {

// ../shared/data as configured (COLLATZ_SHARED_DATA), or $COLLATZ_SHARED_DATA when set.
inline std::string SharedDataDir() {
  const char* env = std::getenv("COLLATZ_SHARED_DATA");
  return env != nullptr && *env != '\0' ? env : COLLATZ_SHARED_DATA;
}

// A test that cannot read its reference data fails with the path and stops there (GoogleTest
// reports the exception as a failure of the test) instead of going on with empty data.
[[noreturn]] inline void FailOnReferenceData(const std::string& what) {
  throw std::runtime_error(what + " (the tests need ../shared/data beside the checkout, or COLLATZ_SHARED_DATA)");
}

// The path of a reference file; a missing file fails the test (FailOnReferenceData).
inline std::string SharedData(const std::string& name) {
  const std::string path = SharedDataDir() + "/" + name;
  if (!std::filesystem::is_regular_file(path)) FailOnReferenceData("reference data file " + path + " is missing");
  return path;
}

// Every row of a reference file; a missing, unreadable or empty file fails the test.
inline std::vector<Record> ReferenceRecords(const std::string& name, RecordCsvKind kind) {
  const std::string path = SharedData(name);
  std::vector<Record> rows;
  const Status st = ReadRecordsCsv(path, kind, &rows);
  if (!st.ok()) FailOnReferenceData("cannot read reference data " + path + ": " + st.ToString());
  if (rows.empty()) FailOnReferenceData("reference data " + path + " holds no records");
  return rows;
}

// The k-bit sieve as Sieve::Generate makes it (a failure fails the test).
inline std::shared_ptr<const Sieve> GeneratedSieve(int bits) {
  std::shared_ptr<const Sieve> s;
  EXPECT_TRUE(Sieve::Generate(bits, &s).ok());
  return s;
}

// The published delay records (delay_records.csv), ascending by n, read once.
inline const std::vector<Record>& PublishedRecordsByN() {
  static const std::vector<Record> records = [] {
    std::vector<Record> r = ReferenceRecords("delay_records.csv", RecordCsvKind::kDelay);
    std::sort(r.begin(), r.end(), [](const Record& a, const Record& b) { return a.n < b.n; });
    return r;
  }();
  return records;
}

// A spec of [begin, end) with the floor that the published delay records below `begin` give
// and, with `with_table`, those records as its record table; where that table counts as
// complete (records_complete_below) is the caller's to say.
inline UnitSpec SpecBelowPublished(u128 begin, u128 end, Kinds kinds, bool with_table) {
  UnitSpec spec;
  spec.begin = begin;
  spec.end = end;
  spec.kinds = kinds;
  for (const Record& r : PublishedRecordsByN()) {
    if (r.n >= begin) break;
    spec.floor = r.delay;
    if (with_table) spec.known_records.push_back(r);
  }
  return spec;
}

// The published delay records as a trusted import, complete up to their last row.
inline TrustedImport PublishedDelayRecords() {
  TrustedImport imp;
  imp.delay_records = ReferenceRecords("delay_records.csv", RecordCsvKind::kDelay);
  imp.complete_below = imp.delay_records.back().n + 1;
  return imp;
}

// A spec for [a, b) with floor, holes and record table as a real search would lease it.
inline UnitSpec SpecFromKnowledge(const MergedRecords& merged, u128 a, u128 b, Kinds kinds) {
  const LeaseContext ctx = ComputeLeaseContext(merged, a, kinds);
  UnitSpec spec;
  spec.begin = a;
  spec.end = b;
  spec.kinds = kinds;
  spec.floor = ctx.floor;
  spec.open_holes = ctx.open_holes;
  spec.known_records = ctx.known_records;
  spec.records_complete_below = ctx.records_complete_below;
  return spec;
}

}  // namespace collatz::testing_support
