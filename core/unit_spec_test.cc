// Floors and holes from known numbers that no search or import vouches for (docs/FLOOR.md):
// exactly what those numbers prove, never more than the truth, and searches leased with
// them still merge into exactly the true records.
#include "core/unit_spec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "core/class_members.h"
#include "core/cpu_engine.h"
#include "core/delay.h"
#include "core/published_points.h"
#include "core/records_csv.h"
#include "core/tail_table.h"
#include "core/test_support.h"

namespace collatz {
namespace {

constexpr int kBits = 18;

// Exact delays of every n < 2^kBits and the true records.
struct Truth {
  TailTable delay{kBits};
  std::vector<Record> delay_records, class_records;  // class records ascending by delay
  Truth() {
    std::map<uint32_t, uint64_t> first;
    uint32_t best = 0;
    for (uint64_t n = 1; n < delay.limit(); ++n) {
      if (n == 1 || delay[n] > best) delay_records.push_back({n, best = delay[n]});
      first.emplace(delay[n], n);
    }
    for (const auto& [d, n] : first) class_records.push_back({n, d});
  }
};

const Truth& T() {
  static const Truth* truth = new Truth();
  return *truth;
}

// Some of the true records (every third) and some arbitrary numbers, with exact delays:
// a partial, unordered knowledge that proves something but not everything.
std::vector<Record> SomeKnownNumbers() {
  std::vector<Record> known;
  for (size_t i = 0; i < T().delay_records.size(); i += 3) known.push_back(T().delay_records[i]);
  std::mt19937_64 rng(23);
  for (int i = 0; i < 40; ++i) {
    const uint64_t n = 1 + rng() % (T().delay.limit() - 1);
    known.push_back({n, T().delay[n]});
  }
  return known;
}

// What the known numbers prove at `begin`, by brute force: every number below begin that
// is a known number times a power of two, with its delay from the table.
void Proven(const std::vector<Record>& known, uint64_t begin, uint32_t* floor, std::vector<uint32_t>* holes) {
  std::vector<bool> has;
  *floor = 0;
  for (const Record& r : known) {
    for (uint64_t x = static_cast<uint64_t>(r.n); x < begin; x *= 2) {
      const uint32_t d = T().delay[x];
      *floor = std::max(*floor, d);
      if (has.size() <= d) has.resize(d + 1, false);
      has[d] = true;
    }
  }
  holes->clear();
  for (uint32_t d = 0; d <= *floor; ++d) {
    if (d >= has.size() || !has[d]) holes->push_back(d);
  }
}

TEST(UnitSpecFloor, FloorAndHolesAreExactlyWhatTheKnownNumbersProve) {
  const std::vector<Record> known = SomeKnownNumbers();
  for (uint64_t begin : {2ull, 3ull, 28ull, 100ull, 1000ull, 4097ull, 30000ull, 77031ull, 200000ull, 262143ull}) {
    SCOPED_TRACE(begin);
    const LeaseContext ctx = ComputeLeaseContext(MergedRecords{}, begin, Kinds::kDelayAndClass, known);
    uint32_t floor;
    std::vector<uint32_t> holes;
    Proven(known, begin, &floor, &holes);
    EXPECT_EQ(ctx.floor, floor);
    EXPECT_EQ(ctx.open_holes, holes);
    // Nothing covered: no record table, whatever is known.
    EXPECT_TRUE(ctx.known_records.empty());
    EXPECT_TRUE(ctx.records_complete_below == 0);

    // Never more than the truth: the floor is at most the largest delay below begin, and
    // every class without a member below begin stays open.
    uint32_t true_max = 0;
    std::vector<bool> has(floor + 1, false);
    for (uint64_t n = 1; n < begin; ++n) {
      true_max = std::max<uint32_t>(true_max, T().delay[n]);
      if (T().delay[n] <= floor) has[T().delay[n]] = true;
    }
    EXPECT_LE(ctx.floor, true_max);
    for (uint32_t d = 0; d <= floor; ++d) {
      if (!has[d]) EXPECT_TRUE(std::binary_search(holes.begin(), holes.end(), d)) << "class " << d << " closed";
    }

    // Members found in the inverse tree close only classes that have a member below begin.
    LeaseContext closed = ctx;
    ASSERT_TRUE(CloseHolesFromKnownPoints(MergedRecords{}, begin, &closed, known).ok());
    for (uint32_t d : ctx.open_holes) {
      const bool still_open = std::binary_search(closed.open_holes.begin(), closed.open_holes.end(), d);
      if (!still_open) EXPECT_TRUE(has[d]) << "class " << d << " closed without a member below " << begin;
    }
  }
}

// Units leased with floors and holes from the partial knowledge (never in any ladder), in a
// scrambled order: the merge of their results is exactly the truth, and records found above
// an uncovered gap stay candidates.
TEST(UnitSpecFloor, SearchesWithUnvouchedFloorsMergeIntoTheTrueRecords) {
  std::shared_ptr<const SearchTables> tables;
  ASSERT_TRUE(SearchTables::Build(12, 12, 16, &tables).ok());
  CpuEngine engine(tables, CpuEngineOptions{2, 1 << 12});
  const std::vector<Record> known = SomeKnownNumbers();
  const std::vector<u128> cuts = {1, 1 << 12, 5000, 1 << 14, 40000, 1 << 16, 100003, 1 << 17, 1 << kBits};
  const std::vector<size_t> order = {7, 3, 0, 5, 1, 6, 2, 4};
  std::vector<FinishedUnit> done;
  for (size_t i : order) {
    const MergedRecords now = MergeRecords({}, done);
    const LeaseContext ctx = ComputeLeaseContext(now, cuts[i], Kinds::kDelayAndClass, known);
    UnitSpec spec;
    spec.begin = cuts[i];
    spec.end = cuts[i + 1];
    spec.floor = ctx.floor;
    spec.open_holes = ctx.open_holes;
    spec.known_records = ctx.known_records;
    spec.records_complete_below = ctx.records_complete_below;
    if (spec.begin > 1) EXPECT_GT(spec.floor, 0u) << ToDecimal(spec.begin);
    FinishedUnit u{spec.begin, spec.end, Kinds::kDelayAndClass, {}};
    ASSERT_TRUE(engine.Search(spec, &u.result).ok());
    // Every true record of the unit is in its ladder, whatever the floor came from.
    for (const Record& r : T().delay_records) {
      if (r.n > 1 && r.n >= spec.begin && r.n < spec.end && (r.n & 1)) {  // 1 (delay 0) exceeds no floor
        EXPECT_NE(std::find(u.result.ladder.begin(), u.result.ladder.end(), r), u.result.ladder.end())
            << ToDecimal(r.n) << " missing from the ladder of [" << ToDecimal(spec.begin) << ", " << ToDecimal(spec.end)
            << ") with floor " << spec.floor;
      }
    }
    done.push_back(u);
    if (i == 7) {
      // Only the top unit is done: its records are candidates, none final.
      const MergedRecords top = MergeRecords({}, done);
      EXPECT_TRUE(top.delay_final.empty());
      EXPECT_TRUE(top.class_final.empty());
    }
  }
  const MergedRecords all = MergeRecords({}, done);
  EXPECT_TRUE(all.covered_prefix == (1 << kBits));
  EXPECT_EQ(all.delay_final, T().delay_records);
  EXPECT_EQ(all.class_final, T().class_records);
  for (const Record& r : all.delay_candidates) EXPECT_TRUE(r.n >= all.covered_prefix);  // evens derived above P
}

// Below a class-covered prefix the holes of MakeUnitSpec are exact without the member search:
// each is a class with no number below the unit (checked against the truth), and the member
// search closes none of them.
TEST(UnitSpecFloor, HolesBelowAClassCoveredPrefixAreExactWithoutTheMemberSearch) {
  std::shared_ptr<const SearchTables> tables;
  ASSERT_TRUE(SearchTables::Build(12, 12, 16, &tables).ok());
  CpuEngine engine(tables, CpuEngineOptions{2, 1 << 12});
  std::vector<FinishedUnit> done;
  for (const auto& [a, b] : {std::pair<u128, u128>{1, 1 << 12}, {1 << 12, 1 << 16}}) {
    UnitSpec spec;
    ASSERT_TRUE(MakeUnitSpec(MergeRecords({}, done), a, b, Kinds::kDelayAndClass, nullptr, &spec).ok());
    FinishedUnit u{a, b, Kinds::kDelayAndClass, {}};
    ASSERT_TRUE(engine.Search(spec, &u.result).ok());
    done.push_back(u);
  }
  const MergedRecords merged = MergeRecords({}, done);
  ASSERT_TRUE(merged.class_covered_prefix == (1 << 16));
  UnitSpec spec;
  UnitSpecNotes notes;
  ASSERT_TRUE(MakeUnitSpec(merged, 1 << 16, 1 << 17, Kinds::kDelayAndClass, nullptr, &spec, &notes).ok());
  EXPECT_EQ(notes.holes_closed_by_members, 0u);
  ASSERT_FALSE(spec.open_holes.empty());
  for (uint32_t d : spec.open_holes) {
    for (const Record& c : T().class_records) {
      if (c.delay == d) EXPECT_GE(c.n, u128{1} << 16) << "class " << d << " has a member below the unit";
    }
  }
  LeaseContext searched = ComputeLeaseContext(merged, 1 << 16, Kinds::kDelayAndClass, PublishedDelayPoints());
  ASSERT_TRUE(CloseHolesFromKnownPoints(merged, 1 << 16, &searched, PublishedDelayPoints()).ok());
  EXPECT_EQ(searched.open_holes, spec.open_holes);
}

// The floor of a unit on an empty database: from the published records alone, recomputed.
TEST(UnitSpecFloor, EmptyDatabaseGetsTheFloorOfThePublishedRecordsAtEveryHeight) {
  const std::vector<Record>& published = PublishedDelayPoints();
  ASSERT_EQ(published.size(), 149u);
  std::vector<Record> listed;
  ASSERT_TRUE(ReadRecordsCsv(testing_support::SharedData("delay_records.csv"), RecordCsvKind::kDelay, &listed).ok());
  EXPECT_EQ(published, listed);  // every published delay is exact
  for (u128 begin : {Pow2(20) + 1, Pow2(32), Pow2(60), static_cast<u128>(1278775404785934855ull), Pow2(64),
                     Pow2(66), Pow2(100), kU128Max - 1}) {
    SCOPED_TRACE(ToDecimal(begin));
    UnitSpec spec;
    ASSERT_TRUE(MakeUnitSpec(MergedRecords{}, begin, begin + 1, Kinds::kDelay, nullptr, &spec).ok());
    // The last record below begin, doubled while it stays below (rule 1).
    uint32_t want = 0;
    for (const Record& r : published) {
      uint32_t d = r.delay;
      for (u128 x = r.n; x < begin; x *= 2, ++d) {
        want = std::max(want, d);
        if (x > kU128Max / 2) break;
      }
    }
    EXPECT_GT(spec.floor, 0u);
    EXPECT_EQ(spec.floor, want);
    EXPECT_TRUE(spec.known_records.empty());
    EXPECT_TRUE(spec.records_complete_below == 0);  // no trust without an import
  }
  // Below its last row the published list is complete, so at 2^60 the floor is the true
  // largest delay below 2^60: the delay of the last row below it.
  UnitSpec at60;
  ASSERT_TRUE(MakeUnitSpec(MergedRecords{}, Pow2(60), Pow2(60) + Pow2(20), Kinds::kDelayAndClass, nullptr, &at60).ok());
  uint32_t largest_below = 0;
  for (const Record& r : listed) {
    if (r.n < Pow2(60)) largest_below = r.delay;
  }
  EXPECT_EQ(at60.floor, largest_below);
  // Class searches: members found from the published records close most classes below the floor.
  // (84 left at 2^60; 921 from the records and their doublings alone, without the member search.)
  EXPECT_LT(at60.open_holes.size(), 200u);
}

// A covered prefix brings the record table (early termination), only below min(P, begin).
TEST(UnitSpecFloor, RecordTableOnlyFromCoverage) {
  TrustedImport imp;
  for (const Record& r : T().delay_records) {
    if (r.n < (1 << 16)) imp.delay_records.push_back(r);
  }
  imp.complete_below = 1 << 16;
  const MergedRecords merged = MergeRecords({imp}, {});
  UnitSpec below, above;
  ASSERT_TRUE(MakeUnitSpec(merged, 1 << 15, 1 << 16, Kinds::kDelay, nullptr, &below).ok());
  EXPECT_TRUE(below.records_complete_below == (1 << 15));
  EXPECT_TRUE(below.known_records.back().n < (1 << 15));
  ASSERT_TRUE(MakeUnitSpec(merged, Pow2(40), Pow2(40) + 1, Kinds::kDelay, nullptr, &above).ok());
  EXPECT_TRUE(above.records_complete_below == (1 << 16));
  EXPECT_EQ(above.known_records, imp.delay_records);
  EXPECT_GT(above.floor, imp.delay_records.back().delay);  // the published records above 2^16 count too
  // The same unit gets the same spec through the coordinator's cache.
  ClassMemberCache cache;
  UnitSpec cached;
  ASSERT_TRUE(MakeUnitSpec(merged, Pow2(40), Pow2(40) + 1, Kinds::kDelay, &cache, &cached).ok());
  EXPECT_EQ(cached.floor, above.floor);
  EXPECT_EQ(cached.known_records, above.known_records);
}

TEST(UnitSpecFloor, EmptyRangeIsRefused) {
  UnitSpec spec;
  EXPECT_EQ(MakeUnitSpec(MergedRecords{}, 10, 10, Kinds::kDelay, nullptr, &spec).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(MakeUnitSpec(MergedRecords{}, 0, 10, Kinds::kDelay, nullptr, &spec).code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace collatz
