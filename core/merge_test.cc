#include "core/merge.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "core/cpu_engine.h"
#include "core/tail_table.h"
#include "core/test_support.h"

namespace collatz {
namespace {

using testing_support::SpecFromKnowledge;

constexpr int kBits = 22;

// Records of [1, 2^22) by brute force over exact delays.
struct BruteForce {
  std::vector<Record> delay_records;
  std::vector<Record> class_records;  // ascending delay
  BruteForce() {
    TailTable exact(kBits);
    std::map<uint32_t, uint64_t> first;
    uint32_t best = 0;
    for (uint64_t n = 1; n < exact.limit(); ++n) {
      const uint32_t d = exact[n];
      if (n == 1 || d > best) {
        delay_records.push_back({n, d});
        best = d;
      }
      first.emplace(d, n);
    }
    for (const auto& [d, n] : first) class_records.push_back({n, d});
  }
};

class MergeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(SearchTables::Build(12, 12, 16, &tables_).ok());
    brute_ = new BruteForce();
  }
  static void TearDownTestSuite() {
    tables_.reset();
    delete brute_;
  }

  // Searches [1, 2^kBits) cut at `cuts`, units in `order`, each leased with what is known then.
  // With known points, *holes_closed counts the holes they closed over all units.
  static MergedRecords SearchInUnits(std::vector<u128> cuts, const std::vector<size_t>& order, Kinds kinds,
                                     const std::vector<TrustedImport>& imports = {},
                                     const std::vector<Record>& points = {}, size_t* holes_closed = nullptr) {
    CpuEngine engine(tables_, CpuEngineOptions{2, 1 << 14});
    std::vector<FinishedUnit> done;
    for (size_t i : order) {
      const MergedRecords known = MergeRecords(imports, done, points);
      UnitSpec spec = SpecFromKnowledge(known, cuts[i], cuts[i + 1], kinds);
      if (holes_closed != nullptr) {  // open without the points, closed with them
        const UnitSpec without = SpecFromKnowledge(MergeRecords(imports, done), cuts[i], cuts[i + 1], kinds);
        for (uint32_t d : without.open_holes) {
          *holes_closed += std::binary_search(spec.open_holes.begin(), spec.open_holes.end(), d) ? 0 : 1;
        }
      }
      FinishedUnit u{spec.begin, spec.end, kinds, {}};
      EXPECT_TRUE(engine.Search(spec, &u.result).ok());
      done.push_back(u);
    }
    return MergeRecords(imports, done, points);
  }

  static std::shared_ptr<const SearchTables> tables_;
  static BruteForce* brute_;
};
std::shared_ptr<const SearchTables> MergeTest::tables_;
BruteForce* MergeTest::brute_ = nullptr;

TEST_F(MergeTest, CoveredPrefix) {
  EXPECT_EQ(CoveredPrefix({}), 1u);
  EXPECT_EQ(CoveredPrefix({{1, 10}, {10, 20}, {25, 30}}), 20u);
  EXPECT_EQ(CoveredPrefix({{5, 10}}), 1u);
  EXPECT_EQ(CoveredPrefix({{1, 10}, {3, 8}, {8, 40}}), 40u);
}

TEST_F(MergeTest, OneUnitGivesExactRecords) {
  for (Kinds kinds : {Kinds::kDelay, Kinds::kDelayAndClass}) {
    const MergedRecords m = SearchInUnits({1, Pow2(kBits)}, {0}, kinds);
    EXPECT_EQ(m.covered_prefix, Pow2(kBits));
    EXPECT_EQ(m.delay_final, brute_->delay_records);
    if (kinds == Kinds::kDelayAndClass) {
      // Classes whose record is below 2^22 are final; the recurrence may name larger candidates.
      EXPECT_EQ(m.class_final, brute_->class_records);
    } else {
      EXPECT_TRUE(m.class_final.empty());
    }
  }
}

TEST_F(MergeTest, RandomSplitsInAnyOrderGiveTheSameRecords) {
  std::mt19937_64 rng(11);
  const MergedRecords whole = SearchInUnits({1, Pow2(kBits)}, {0}, Kinds::kDelayAndClass);
  for (int t = 0; t < 6; ++t) {
    std::vector<u128> cuts = {1, Pow2(kBits)};
    const int pieces = 2 + static_cast<int>(rng() % 12);
    for (int i = 0; i < pieces; ++i) cuts.push_back(2 + rng() % (Pow2(kBits) - 3));
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    std::vector<size_t> order(cuts.size() - 1);
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    if (t % 2) std::shuffle(order.begin(), order.end(), rng);
    const MergedRecords m = SearchInUnits(cuts, order, Kinds::kDelayAndClass);
    EXPECT_EQ(m.delay_final, whole.delay_final);
    EXPECT_EQ(m.class_final, whole.class_final);
    EXPECT_EQ(m.class_final, brute_->class_records);
  }
}

// Imported known points (core/known_points.h) close classes in the units above them and
// raise their floors, and the records stay exact: the smallest member of a class, if below
// a point, lies in a unit where that class stays open. Points are never records themselves.
TEST_F(MergeTest, KnownPointsCloseClassesAndKeepRecordsExact) {
  std::mt19937_64 rng(46);
  TailTable exact(kBits);
  // The second smallest member of every class whose record lies above 2^16 (so that units
  // above it, searched before the unit of the record, see the class closed only through the
  // point), none of them a record of either kind.
  std::map<uint32_t, std::vector<uint64_t>> members;
  for (uint64_t n = 1; n < exact.limit(); ++n) {
    std::vector<uint64_t>& m = members[exact[n]];
    if (m.size() < 2) m.push_back(n);
  }
  std::vector<Record> points;
  for (const auto& [d, m] : members) {
    if (m.size() == 2 && m[0] >= Pow2(16)) points.push_back({m[1], d});
  }
  ASSERT_GT(points.size(), 50u);
  for (int t = 0; t < 4; ++t) {
    std::vector<u128> cuts = {1, Pow2(kBits)};
    for (int i = 0; i < 10; ++i) cuts.push_back(2 + rng() % (Pow2(kBits) - 3));
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    std::vector<size_t> order(cuts.size() - 1);
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    size_t closed = 0;
    const MergedRecords m = SearchInUnits(cuts, order, Kinds::kDelayAndClass, {}, points, &closed);
    EXPECT_GT(closed, 0u) << "the points closed no class in any unit: the test proves nothing";
    EXPECT_EQ(m.delay_final, brute_->delay_records);
    EXPECT_EQ(m.class_final, brute_->class_records);
    for (const Record& p : points) {  // no point became a record (none is one)
      EXPECT_EQ(std::count(m.delay_candidates.begin(), m.delay_candidates.end(), p), 0) << ToDecimal(p.n);
      EXPECT_EQ(std::count(m.class_candidates.begin(), m.class_candidates.end(), p), 0) << ToDecimal(p.n);
    }
    EXPECT_EQ(m.known_points.size(), points.size());
  }
  // A point raises the floor of the units above it, doublings included, and closes its classes.
  const MergedRecords one = MergeRecords({}, {}, {{27, 111}});
  const LeaseContext above = ComputeLeaseContext(one, 1000, Kinds::kDelayAndClass);
  EXPECT_EQ(above.floor, 116u);  // 864 = 27 * 2^5 has delay 116
  for (uint32_t d = 111; d <= 116; ++d) {
    EXPECT_FALSE(std::binary_search(above.open_holes.begin(), above.open_holes.end(), d)) << d;
  }
  EXPECT_TRUE(std::binary_search(above.open_holes.begin(), above.open_holes.end(), 110u));
  EXPECT_EQ(ComputeLeaseContext(one, 27, Kinds::kDelayAndClass).floor, 0u);  // not below the unit
}

// Below every covered prefix the final class records are exactly the brute force's, the top
// ones included when they are doublings past every class the units reported (classrec(d) =
// 2 classrec(d - 1) with no odd n of delay d below the prefix).
TEST_F(MergeTest, EveryPrefixHasExactlyTheClassRecordsBelowIt) {
  CpuEngine engine(tables_, CpuEngineOptions{2, 1 << 14});
  std::vector<FinishedUnit> done;
  int top_doublings = 0;
  // Prefixes just above the even delay records below 2^22 (2, 6, 18, 54: each doubles the
  // record before it), then every 2^11.
  const std::vector<u128> first_ends = {3, 7, 19, 55};
  for (u128 begin = 1; begin < Pow2(kBits);) {
    u128 end = std::min<u128>(Pow2(kBits), (begin | (Pow2(11) - 1)) + 1);
    for (u128 e : first_ends) {
      if (e > begin) {
        end = e;
        break;
      }
    }
    UnitSpec spec = SpecFromKnowledge(MergeRecords({}, done), begin, end, Kinds::kDelayAndClass);
    FinishedUnit u{spec.begin, spec.end, Kinds::kDelayAndClass, {}};
    ASSERT_TRUE(engine.Search(spec, &u.result).ok());
    done.push_back(u);
    const MergedRecords m = MergeRecords({}, done);
    std::vector<Record> want;
    for (const Record& r : brute_->class_records) {
      if (r.n < m.class_covered_prefix) want.push_back(r);
    }
    ASSERT_EQ(m.class_final, want) << "class prefix " << ToDecimal(m.class_covered_prefix);
    if (!want.empty() && want.back().n % 2 == 0) ++top_doublings;
    begin = end;
  }
  EXPECT_GT(top_doublings, 0);  // the case above happened
}

TEST_F(MergeTest, PartialCoverageGivesCandidatesAboveThePrefix) {
  // [1, 2^20) and [2^21, 2^22): final below 2^20 only.
  CpuEngine engine(tables_, CpuEngineOptions{2, 1 << 14});
  std::vector<FinishedUnit> done;
  for (auto [a, b] : {std::pair<u128, u128>{1, Pow2(20)}, {Pow2(21), Pow2(22)}}) {
    UnitSpec spec = SpecFromKnowledge(MergeRecords({}, done), a, b, Kinds::kDelayAndClass);
    FinishedUnit u{a, b, Kinds::kDelayAndClass, {}};
    ASSERT_TRUE(engine.Search(spec, &u.result).ok());
    done.push_back(u);
  }
  const MergedRecords m = MergeRecords({}, done);
  EXPECT_EQ(m.covered_prefix, Pow2(20));
  for (const Record& r : m.delay_final) EXPECT_LT(r.n, Pow2(20));
  for (const Record& r : m.delay_candidates) EXPECT_GE(r.n, Pow2(20));
  std::vector<Record> expected_final;
  for (const Record& r : brute_->delay_records) if (r.n < Pow2(20)) expected_final.push_back(r);
  EXPECT_EQ(m.delay_final, expected_final);
  for (const Record& r : m.class_final) EXPECT_LT(r.n, Pow2(20));
}

TEST_F(MergeTest, TrustedImportsCombineWithUnits) {
  TrustedImport imp;
  imp.complete_below = Pow2(15) + 1;
  for (const Record& r : brute_->delay_records) if (r.n < imp.complete_below) imp.delay_records.push_back(r);
  for (const Record& r : brute_->class_records) if (r.n < imp.complete_below) imp.class_records.push_back(r);
  const MergedRecords m = SearchInUnits({Pow2(15) + 1, Pow2(18) + 7, Pow2(kBits)}, {0, 1}, Kinds::kDelayAndClass, {imp});
  EXPECT_EQ(m.covered_prefix, Pow2(kBits));
  EXPECT_EQ(m.delay_final, brute_->delay_records);
  EXPECT_EQ(m.class_final, brute_->class_records);
}

// A list of delay records says nothing about class records: units above it must not make
// their class minima final.
TEST_F(MergeTest, DelayOnlyImportDoesNotCoverClasses) {
  TrustedImport imp;
  imp.complete_below = Pow2(16);
  for (const Record& r : brute_->delay_records) if (r.n < imp.complete_below) imp.delay_records.push_back(r);
  EXPECT_FALSE(ImportCoversClasses(imp));
  const MergedRecords m = SearchInUnits({Pow2(16), Pow2(kBits)}, {0}, Kinds::kDelayAndClass, {imp});
  EXPECT_EQ(m.covered_prefix, Pow2(kBits));
  EXPECT_EQ(m.class_covered_prefix, 1u);
  EXPECT_TRUE(m.class_final.empty());
  EXPECT_EQ(m.delay_final, brute_->delay_records);
}

TEST_F(MergeTest, LeaseContextFromKnowledge) {
  TrustedImport imp;
  imp.complete_below = Pow2(20);
  for (const Record& r : brute_->delay_records) if (r.n < imp.complete_below) imp.delay_records.push_back(r);
  for (const Record& r : brute_->class_records) if (r.n < imp.complete_below) imp.class_records.push_back(r);
  const MergedRecords m = MergeRecords({imp}, {});
  const LeaseContext ctx = ComputeLeaseContext(m, Pow2(20), Kinds::kDelayAndClass);
  // Floor: the largest delay below 2^20.
  uint32_t floor = 0;
  for (const Record& r : brute_->delay_records) if (r.n < Pow2(20)) floor = r.delay;
  EXPECT_EQ(ctx.floor, floor);
  // Holes: exactly the classes <= floor whose record is >= 2^20.
  std::vector<uint32_t> holes;
  std::vector<bool> closed(floor + 1, false);
  for (const Record& r : brute_->class_records) if (r.n < Pow2(20) && r.delay <= floor) closed[r.delay] = true;
  for (uint32_t d = 0; d <= floor; ++d) if (!closed[d]) holes.push_back(d);
  EXPECT_EQ(ctx.open_holes, holes);
  EXPECT_EQ(ctx.records_complete_below, Pow2(20));
}

}  // namespace
}  // namespace collatz
