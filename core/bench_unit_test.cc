// The bench unit against a brute-force lease context (every delay below `at` computed),
// and against damaged inputs.
#include "core/bench_unit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "core/records_csv.h"
#include "core/test_support.h"
#include "core/unit_spec.h"

namespace collatz {
namespace {

using testing_support::ReferenceRecords;
using testing_support::SharedData;

struct ReferenceLists {
  std::vector<Record> delays, classes;
};

ReferenceLists Lists() {
  ReferenceLists l;
  l.delays = ReferenceRecords("delay_records.csv", RecordCsvKind::kDelay);
  l.classes = ReferenceRecords("class_records_below_2p28.csv", RecordCsvKind::kClass);
  return l;
}

uint32_t PlainDelay(uint64_t n) {
  uint32_t d = 0;
  for (; n != 1; ++d) n = (n & 1) ? 3 * n + 1 : n / 2;
  return d;
}

// What a lease at `at` gets when everything below it has been searched.
TEST(BenchUnit, EqualsTheContextOfAFullySearchedPrefix) {
  const ReferenceLists lists = Lists();
  const uint64_t at = (1u << 20) + 12345;
  std::vector<bool> seen(2000, false);
  std::vector<Record> records;
  uint32_t floor = 0;
  for (uint64_t n = 1; n < at; ++n) {
    const uint32_t d = PlainDelay(n);
    if (records.empty() || d > floor) records.push_back({n, d});
    floor = std::max(floor, d);
    seen[d] = true;
  }
  std::vector<uint32_t> holes;
  for (uint32_t d = 0; d <= floor; ++d) {
    if (!seen[d]) holes.push_back(d);
  }
  ASSERT_GT(holes.size(), 0u);

  BenchUnit unit;
  ASSERT_TRUE(BuildBenchUnit(lists.delays, lists.classes, at, 1000, Kinds::kDelayAndClass, &unit).ok());
  EXPECT_TRUE(unit.spec.begin == at && unit.spec.end == at + 1000);
  EXPECT_EQ(unit.spec.floor, floor);
  EXPECT_EQ(unit.spec.open_holes, holes);
  EXPECT_EQ(unit.spec.known_records, records);
  EXPECT_TRUE(unit.spec.records_complete_below == at);
  EXPECT_TRUE(unit.delay_complete_below == at && unit.class_complete_below == at);

  // Members found in the inverse tree never close a true hole: with or without the class
  // records, the holes are the true ones or more.
  BenchUnit members_only;
  ASSERT_TRUE(BuildBenchUnit(lists.delays, {}, at, 1000, Kinds::kDelayAndClass, &members_only).ok());
  EXPECT_TRUE(std::includes(members_only.spec.open_holes.begin(), members_only.spec.open_holes.end(), holes.begin(),
                            holes.end()));
  EXPECT_GT(members_only.holes_closed_by_members, 0u);

  // Without the class records the floor and record table are the same, but classes with
  // members below `at` stay open unless a delay record or its doubling closes them.
  BenchUnitOptions no_members;
  no_members.close_holes_by_members = false;
  BenchUnit no_classes;
  ASSERT_TRUE(BuildBenchUnit(lists.delays, {}, at, 1000, Kinds::kDelayAndClass, &no_classes, no_members).ok());
  EXPECT_EQ(no_classes.spec.floor, floor);
  EXPECT_EQ(no_classes.spec.known_records, records);
  EXPECT_GT(no_classes.spec.open_holes.size(), holes.size());
  EXPECT_TRUE(std::includes(no_classes.spec.open_holes.begin(), no_classes.spec.open_holes.end(), holes.begin(),
                            holes.end()));
  EXPECT_TRUE(no_classes.class_complete_below == 1);

  // Delay-only units have no holes.
  BenchUnit delay_only;
  ASSERT_TRUE(BuildBenchUnit(lists.delays, lists.classes, at, 1000, Kinds::kDelay, &delay_only).ok());
  EXPECT_EQ(delay_only.spec.floor, floor);
  EXPECT_TRUE(delay_only.spec.open_holes.empty());
}

TEST(BenchUnit, AtTheFrontierTheClassRecordsCloseClasses) {
  const ReferenceLists lists = Lists();
  uint32_t floor = 0;
  size_t below = 0;
  for (const Record& r : lists.delays) {
    if (r.n < Pow2(60)) floor = std::max(floor, r.delay), ++below;
  }
  BenchUnitOptions no_members;
  no_members.close_holes_by_members = false;
  BenchUnit with, without, with_members;
  ASSERT_TRUE(
      BuildBenchUnit(lists.delays, lists.classes, Pow2(60), Pow2(40), Kinds::kDelayAndClass, &with, no_members).ok());
  ASSERT_TRUE(BuildBenchUnit(lists.delays, {}, Pow2(60), Pow2(40), Kinds::kDelayAndClass, &without, no_members).ok());
  ASSERT_TRUE(BuildBenchUnit(lists.delays, lists.classes, Pow2(60), Pow2(40), Kinds::kDelayAndClass, &with_members).ok());
  EXPECT_EQ(with.spec.floor, floor);
  EXPECT_EQ(with.spec.known_records.size(), below);
  u128 largest_class_n = 0;
  for (const Record& r : lists.classes) largest_class_n = std::max(largest_class_n, r.n);
  EXPECT_TRUE(with.class_complete_below == largest_class_n + 1);
  // Every class record below 2^28 closes its class; fewer holes than without them.
  for (const Record& r : lists.classes) {
    EXPECT_FALSE(std::binary_search(with.spec.open_holes.begin(), with.spec.open_holes.end(), r.delay)) << r.delay;
  }
  EXPECT_LT(with.spec.open_holes.size(), without.spec.open_holes.size());
  // Members found below 2^60 close most of the rest; what stays open lies near the floor.
  EXPECT_TRUE(std::includes(with.spec.open_holes.begin(), with.spec.open_holes.end(),
                            with_members.spec.open_holes.begin(), with_members.spec.open_holes.end()));
  EXPECT_EQ(with_members.holes_closed_by_members, with.spec.open_holes.size() - with_members.spec.open_holes.size());
  EXPECT_LT(with_members.spec.open_holes.size(), with.spec.open_holes.size() / 4);
  ASSERT_FALSE(with_members.spec.open_holes.empty());
  EXPECT_GT(with_members.spec.open_holes.front(), floor - 300);
  std::printf("at 2^60: floor %u, %zu open holes with the class records below 2^28, %zu without, %zu with members "
              "(smallest %u)\n",
              with.spec.floor, with.spec.open_holes.size(), without.spec.open_holes.size(),
              with_members.spec.open_holes.size(), with_members.spec.open_holes.front());

  // Above the last published record nothing beyond it is claimed.
  BenchUnit high;
  ASSERT_TRUE(BuildBenchUnit(lists.delays, lists.classes, Pow2(66), Pow2(30), Kinds::kDelay, &high).ok());
  EXPECT_TRUE(high.delay_complete_below == lists.delays.back().n + 1);
  EXPECT_TRUE(high.spec.records_complete_below == lists.delays.back().n + 1);
  EXPECT_EQ(high.spec.floor, lists.delays.back().delay + 1);  // its doubling lies below 2^66
}

// Known points (collatzctl bench --points, as `import --points` stores them): with the class
// records below 2^20 trusted and the ones in [2^20, 2^24) given as points, a unit at 2^24 has
// exactly the true holes (no member below 2^24 at all); a wrong point is refused.
TEST(BenchUnit, KnownPointsCloseTheClassesTheyHaveMembersOf) {
  const ReferenceLists lists = Lists();
  std::vector<Record> classes20, points;
  for (const Record& r : lists.classes) {
    if (r.n < Pow2(20)) classes20.push_back(r);
    else if (r.n < Pow2(24)) points.push_back(r);
  }
  ASSERT_FALSE(points.empty());
  BenchUnit plain, with;
  BenchUnitOptions options;
  ASSERT_TRUE(BuildBenchUnit(lists.delays, classes20, Pow2(24), Pow2(20), Kinds::kDelayAndClass, &plain, options).ok());
  options.known_points = points;
  ASSERT_TRUE(BuildBenchUnit(lists.delays, classes20, Pow2(24), Pow2(20), Kinds::kDelayAndClass, &with, options).ok());
  EXPECT_EQ(with.spec.floor, plain.spec.floor);
  std::vector<uint32_t> true_holes;
  for (uint32_t d = 0; d <= with.spec.floor; ++d) {
    const auto it = std::find_if(lists.classes.begin(), lists.classes.end(), [d](const Record& r) { return r.delay == d; });
    if (it == lists.classes.end() || it->n >= Pow2(24)) true_holes.push_back(d);
  }
  EXPECT_EQ(with.spec.open_holes, true_holes);
  EXPECT_LT(with.spec.open_holes.size(), plain.spec.open_holes.size());
  EXPECT_GT(with.holes_closed_by_points, 0u);
  std::printf("at 2^24 with class records below 2^20: %zu open holes; %zu with %zu known points in [2^20, 2^24) (%zu "
              "closed by the points themselves)\n",
              plain.spec.open_holes.size(), with.spec.open_holes.size(), points.size(), with.holes_closed_by_points);

  options.known_points.push_back({27, 112});
  const Status st = BuildBenchUnit(lists.delays, classes20, Pow2(24), Pow2(20), Kinds::kDelayAndClass, &with, options);
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("row 27,112 is wrong"), std::string::npos) << st.message();
}

// --context floor is what `collatzctl run` gives a unit on an empty database; --context none
// knows nothing.
TEST(BenchUnit, FloorContextIsTheSpecOfAnEmptyDatabase) {
  const ReferenceLists lists = Lists();
  for (Kinds kinds : {Kinds::kDelay, Kinds::kDelayAndClass}) {
    for (u128 at : {Pow2(40), Pow2(60), Pow2(66)}) {
      SCOPED_TRACE(ToDecimal(at));
      BenchUnitOptions floor_only;
      floor_only.context = BenchContext::kFloor;
      BenchUnit unit;
      ASSERT_TRUE(BuildBenchUnit(lists.delays, lists.classes, at, Pow2(20), kinds, &unit, floor_only).ok());
      UnitSpec empty_db;
      ASSERT_TRUE(MakeUnitSpec(MergedRecords{}, at, at + Pow2(20), kinds, nullptr, &empty_db).ok());
      EXPECT_EQ(unit.spec.floor, empty_db.floor);
      EXPECT_GT(unit.spec.floor, 1000u);
      EXPECT_EQ(unit.spec.open_holes, empty_db.open_holes);
      EXPECT_TRUE(unit.spec.known_records.empty());
      EXPECT_TRUE(unit.spec.records_complete_below == 0);
      EXPECT_TRUE(unit.delay_complete_below == 1 && unit.class_complete_below == 1);

      BenchUnitOptions none;
      none.context = BenchContext::kNone;
      ASSERT_TRUE(BuildBenchUnit(lists.delays, lists.classes, at, Pow2(20), kinds, &unit, none).ok());
      EXPECT_EQ(unit.spec.floor, 0u);
      EXPECT_TRUE(unit.spec.open_holes.empty());
      EXPECT_TRUE(unit.spec.records_complete_below == 0);
    }
  }
  BenchContext c;
  EXPECT_TRUE(ParseBenchContext("floor", &c).ok() && c == BenchContext::kFloor);
  EXPECT_FALSE(ParseBenchContext("trust", &c).ok());
}

TEST(BenchUnit, RefusesWrongRowsAndRanges) {
  const ReferenceLists lists = Lists();
  BenchUnit unit;
  std::vector<Record> wrong = lists.delays;
  wrong[30].delay += 1;
  Status st = BuildBenchUnit(wrong, lists.classes, Pow2(40), 100, Kinds::kDelay, &unit);
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("delay records: row " + ToDecimal(wrong[30].n)), std::string::npos) << st.ToString();

  std::vector<Record> not_records = lists.delays;
  std::swap(not_records[10].delay, not_records[11].delay);
  EXPECT_FALSE(BuildBenchUnit(not_records, lists.classes, Pow2(40), 100, Kinds::kDelay, &unit).ok());
  EXPECT_FALSE(BuildBenchUnit({lists.delays.begin() + 1, lists.delays.end()}, {}, Pow2(40), 100, Kinds::kDelay, &unit)
                   .ok());  // does not start at 1

  std::vector<Record> wrong_class = lists.classes;
  wrong_class[500].n += 2;
  EXPECT_FALSE(BuildBenchUnit(lists.delays, wrong_class, Pow2(40), 100, Kinds::kDelay, &unit).ok());
  std::vector<Record> repeated = lists.classes;
  repeated.push_back(repeated[7]);
  EXPECT_FALSE(BuildBenchUnit(lists.delays, repeated, Pow2(40), 100, Kinds::kDelay, &unit).ok());

  EXPECT_FALSE(BuildBenchUnit(lists.delays, lists.classes, 0, 100, Kinds::kDelay, &unit).ok());
  EXPECT_FALSE(BuildBenchUnit(lists.delays, lists.classes, 5, 0, Kinds::kDelay, &unit).ok());
  EXPECT_FALSE(BuildBenchUnit(lists.delays, lists.classes, kU128Max - 5, 6, Kinds::kDelay, &unit).ok());
  EXPECT_TRUE(BuildBenchUnit(lists.delays, lists.classes, kU128Max - 5, 5, Kinds::kDelay, &unit).ok());
}

TEST(BenchUnit, LoadNamesTheFileWithTheWrongRow) {
  const std::string path = ::testing::TempDir() + "bench_unit_test_classes.csv";
  {
    std::ofstream out(path);
    out << "delay,n\n0,1\n1,2\n2,4\n7,3\n8,7\n";  // delay(7) = 16
  }
  BenchUnit unit;
  Status st = LoadBenchUnit(SharedData("delay_records.csv"), path, Pow2(40), 100, Kinds::kDelayAndClass, &unit);
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(st.message().rfind(path + ": class records: row 7,8", 0), 0u) << st.ToString();
  st = LoadBenchUnit("/nonexistent/delay.csv", "", Pow2(40), 100, Kinds::kDelay, &unit);
  EXPECT_NE(st.message().find("/nonexistent/delay.csv"), std::string::npos) << st.ToString();
  ASSERT_TRUE(LoadBenchUnit(SharedData("delay_records.csv"), SharedData("class_records_below_2p28.csv"), Pow2(40), 100,
                            Kinds::kDelayAndClass, &unit)
                  .ok());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace collatz
