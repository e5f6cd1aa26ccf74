// Helpers shared by the core tests: the reference data and contexts built from it.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/merge.h"
#include "core/records_csv.h"
#include "core/unit.h"

namespace collatz::testing_support {

inline std::string SharedData(const std::string& name) { return std::string(COLLATZ_SHARED_DATA) + "/" + name; }

// The published delay records as a trusted import, complete up to their last row.
inline TrustedImport PublishedDelayRecords() {
  TrustedImport imp;
  Status st = ReadRecordsCsv(SharedData("delay_records.csv"), RecordCsvKind::kDelay, &imp.delay_records);
  EXPECT_TRUE(st.ok()) << st.ToString();
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
