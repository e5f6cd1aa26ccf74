// Known answers of the GPU engine in its production configuration (issue 24): the default
// sieve (19 bits) and default options (13-bit residue groups, two-step walk rounds, join maps,
// the engine's own record table), units cut as the coordinator cuts them (aligned, 2^38 to
// 2^40 numbers), at heights where the answer is known and not empty: windows that hold
// published delay records near 2^60, 2^63.7 and 2^64.6, leased with the records below them
// (trusted, as a coordinator with imports gives them) and with a provable floor alone (an
// empty database), and class units whose open classes are constructed to be filled. Each
// whole UnitResult is compared with the plain path (no groups, queue, join map or own table)
// and, on a sub-unit, with the CPU engine. Built with -DCOLLATZ_GPU_MUTATION=1 (the walk ends
// one step early) or 2 (a carry of the walk's product dropped) this suite must fail
// (gpu/device_run.sh mutation). Skips without a GPU; needs ../shared/data.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/cpu_engine.h"
#include "core/delay.h"
#include "core/records_csv.h"
#include "core/test_support.h"
#include "core/unit_search.h"
#include "gpu/gpu_engine.h"

namespace collatz {
namespace {

// The published delay records, ascending; a missing or damaged file fails the test with its
// path (core/test_support.h).
const std::vector<Record>& PublishedRecords() { return testing_support::PublishedRecordsByN(); }

// The production tables, as cli/ and worker/ build them.
std::shared_ptr<const SearchTables> ProductionTables() {
  static const std::shared_ptr<const SearchTables> tables = [] {
    std::shared_ptr<const SearchTables> t;
    const Status st = SearchTables::Build(19, kDefaultStepBits, kDefaultTailBits, &t);
    if (!st.ok()) {
      std::fprintf(stderr, "gpu_known_answer_test: %s\n", st.ToString().c_str());
      std::exit(2);
    }
    return t;
  }();
  return tables;
}

std::unique_ptr<SearchEngine> MakeEngine(const GpuEngineOptions& options) {
  std::unique_ptr<SearchEngine> engine;
  const Status st = MakeGpuEngine(ProductionTables(), options, &engine);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return engine;
}

// The plain path: one thread a number (with the record table's early termination where the
// unit has one), none of the residue groups, walk queue, join maps or own record table.
GpuEngineOptions PlainOptions() {
  GpuEngineOptions o;
  o.residue_groups = false;
  o.walk_queue = false;
  o.class_walk_queue = false;
  o.join_map_bits = 0;
  o.delay_join_map = false;
  o.self_record_bits = 0;
  return o;
}

UnitResult SearchOn(SearchEngine& engine, const UnitSpec& spec) {
  UnitResult r;
  const Status st = engine.Search(spec, &r);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return r;
}

// A lease at `begin` with the published records below it: the floor, and (trusted) the
// record table complete below begin.
UnitSpec Lease(u128 begin, u128 end, Kinds kinds, bool trusted) {
  UnitSpec spec = testing_support::SpecBelowPublished(begin, end, kinds, trusted);
  if (trusted) spec.records_complete_below = begin;
  return spec;
}

// The odd published record nearest 2^bits (records are odd or derived from odd ones).
Record RecordNear(double bits) {
  const double target = std::pow(2.0, bits);
  Record best;
  double best_gap = 1e300;
  for (const Record& r : PublishedRecords()) {
    const double gap = std::abs(static_cast<double>(r.n) - target);
    if (r.n % 2 == 1 && gap < best_gap) {
      best = r;
      best_gap = gap;
    }
  }
  return best;
}

bool HasGpu() { return GpuDeviceCount() > 0; }

std::string Describe(const UnitSpec& spec) {
  return "unit [" + ToDecimal(spec.begin) + ", " + ToDecimal(spec.end) + ") floor " + std::to_string(spec.floor) +
         " records " + std::to_string(spec.known_records.size()) + " holes " + std::to_string(spec.open_holes.size());
}

class GpuKnownAnswerTest : public ::testing::TestWithParam<double> {};

// A 2^40 unit aligned as the coordinator cuts them, holding a published record: the record
// is on its ladder with its exact delay, and the production engine (with the records below
// as a trusted table, and with the provable floor alone) equals the plain path; the 2^36
// sub-unit around the record equals the CPU engine.
TEST_P(GpuKnownAnswerTest, PublishedRecordWindow) {
  if (!HasGpu()) GTEST_SKIP() << "no CUDA device";
  const Record record = RecordNear(GetParam());
  ASSERT_EQ(SlowDelay(record.n), record.delay) << "the published row disagrees with the exact delay";
  const u128 block = Pow2(40);
  const u128 begin = record.n / block * block;
  auto production = MakeEngine(GpuEngineOptions{});
  auto plain = MakeEngine(PlainOptions());
  ASSERT_NE(production, nullptr);
  ASSERT_NE(plain, nullptr);
  const UnitSpec trusted = Lease(begin, begin + block, Kinds::kDelay, true);
  const UnitSpec floor_only = Lease(begin, begin + block, Kinds::kDelay, false);
  SCOPED_TRACE(Describe(trusted) + ", record " + ToDecimal(record.n));
  const UnitResult want = SearchOn(*plain, trusted);
  EXPECT_NE(std::find(want.ladder.begin(), want.ladder.end(), record), want.ladder.end()) << DescribeUnitResult(want);
  const UnitResult got = SearchOn(*production, trusted);
  EXPECT_EQ(got, want) << "production: " << DescribeUnitResult(got) << "\nplain: " << DescribeUnitResult(want);
  EXPECT_GT(LastGpuSearchStats(*production).group_launches, 0u);
  // The ladder, class minima and tallies depend on the floor alone, not on the table.
  const UnitResult got_floor = SearchOn(*production, floor_only);
  EXPECT_EQ(got_floor, want) << "floor only: " << DescribeUnitResult(got_floor);
  EXPECT_GT(LastGpuSearchStats(*production).self_record_bits, 0);
  EXPECT_GT(LastGpuSearchStats(*production).join_skipped_groups, 0u);
  // The CPU engine on the 2^36 block holding the record.
  const u128 sub = Pow2(36);
  const UnitSpec small = Lease(record.n / sub * sub, record.n / sub * sub + sub, Kinds::kDelay, true);
  CpuEngine cpu(ProductionTables(), CpuEngineOptions{});
  const UnitResult cpu_result = SearchOn(cpu, small);
  EXPECT_EQ(SearchOn(*production, small), cpu_result) << "cpu: " << DescribeUnitResult(cpu_result);
  EXPECT_NE(std::find(cpu_result.ladder.begin(), cpu_result.ladder.end(), record), cpu_result.ladder.end());
}

INSTANTIATE_TEST_SUITE_P(Heights, GpuKnownAnswerTest, ::testing::Values(60.0, 63.7, 64.6));

// A delay+class unit of 2^38 numbers (64-member groups of 13 bits, the 32-bit join map) whose
// open classes are filled inside it: the CPU computes the class minima of the unit's first
// 2^28 numbers (few: consecutive numbers with a shared high part meet quickly, so such a
// window holds only a few dozen delays); the classes those fill near the top of what occurs there are opened (the
// floor set to the largest delay met, so that the class test can stop numbers); the GPU
// must find exactly those minima, and equal the plain path on the whole unit.
// A delay+class lease of [begin, begin + size) whose open classes are filled inside it: the
// classes the CPU finds in its first 2^prefix_bits numbers near the top of what occurs there
// (the floor set to the largest delay met, so that the class test can stop numbers). `want`
// gets each opened class's minimum.
UnitSpec ConstructedHoles(u128 begin, u128 size, int prefix_bits, std::map<uint32_t, u128>* want) {
  UnitSpec prefix = Lease(begin, begin + Pow2(prefix_bits), Kinds::kDelayAndClass, false);
  prefix.floor = 0;  // every class open: the CPU's minima of the prefix
  CpuEngine cpu(ProductionTables(), CpuEngineOptions{});
  const UnitResult minima = SearchOn(cpu, prefix);
  EXPECT_GT(minima.class_minima.size(), 15u);
  UnitSpec spec = Lease(begin, begin + size, Kinds::kDelayAndClass, true);
  if (minima.class_minima.empty()) return spec;
  spec.floor = minima.class_minima.back().delay;
  for (const Record& m : minima.class_minima) {
    if (m.delay * 4 >= spec.floor * 3 && m.delay <= spec.floor) {
      spec.open_holes.push_back(m.delay);
      (*want)[m.delay] = m.n;
    }
  }
  return spec;
}

TEST(GpuKnownAnswerClassTest, ConstructedHolesAreFilled) {
  if (!HasGpu()) GTEST_SKIP() << "no CUDA device";
  const u128 block = Pow2(38);
  for (const double bits : {60.0, 64.6}) {
    std::map<uint32_t, u128> want;
    const UnitSpec spec = ConstructedHoles(RecordNear(bits).n / block * block, block, 28, &want);
    ASSERT_GE(want.size(), 3u);
    SCOPED_TRACE(Describe(spec));
    auto production = MakeEngine(GpuEngineOptions{});
    auto plain = MakeEngine(PlainOptions());
    const UnitResult got = SearchOn(*production, spec);
    EXPECT_GT(LastGpuSearchStats(*production).group_launches, 0u);
    EXPECT_GT(LastGpuSearchStats(*production).join_skipped_groups, 0u);
    for (const Record& m : got.class_minima) {
      if (m.delay <= spec.floor) {
        EXPECT_EQ(want.count(m.delay), 1u) << "class " << m.delay << " was not opened";
        EXPECT_EQ(m.n, want[m.delay]) << "class " << m.delay;
        want.erase(m.delay);
      }
    }
    EXPECT_TRUE(want.empty()) << want.size() << " opened classes not filled";
    const UnitResult plain_result = SearchOn(*plain, spec);
    EXPECT_EQ(got, plain_result) << "production: " << DescribeUnitResult(got)
                                 << "\nplain: " << DescribeUnitResult(plain_result);
  }
}

// Units as `collatzctl run --from 1` cuts them low down (2^38 numbers, aligned): from about
// 2^33 up the 13-bit residue groups (and with them the join map) serve them, from about 2^45
// two-step walk rounds (the sieve's fewest odd steps bound the members after k + G steps).
// Both kinds equal the plain path; trusted delay leases carry the published records below.
TEST(GpuKnownAnswerLowUnitsTest, RunFromOneUnitsEqualThePlainPath) {
  if (!HasGpu()) GTEST_SKIP() << "no CUDA device";
  const u128 size = Pow2(38);
  auto production = MakeEngine(GpuEngineOptions{});
  auto plain = MakeEngine(PlainOptions());
  for (const int height : {37, 40, 43, 46}) {
    const u128 begin = Pow2(height);
    const UnitSpec delay = Lease(begin, begin + size, Kinds::kDelay, true);
    SCOPED_TRACE(Describe(delay));
    const UnitResult got = SearchOn(*production, delay);
    EXPECT_GT(LastGpuSearchStats(*production).group_launches, 0u);
    EXPECT_EQ(got, SearchOn(*plain, delay)) << "production: " << DescribeUnitResult(got);
    std::map<uint32_t, u128> want;
    const UnitSpec classes = ConstructedHoles(begin, size, 24, &want);
    SCOPED_TRACE(Describe(classes));
    const UnitResult got_classes = SearchOn(*production, classes);
    EXPECT_GT(LastGpuSearchStats(*production).group_launches, 0u);
    EXPECT_GT(LastGpuSearchStats(*production).join_skipped_groups, 0u);  // 13-bit groups
    for (const auto& [d, n] : want) {
      EXPECT_NE(std::find(got_classes.class_minima.begin(), got_classes.class_minima.end(), Record{n, d}),
                got_classes.class_minima.end())
          << "opened class " << d << " (minimum " << ToDecimal(n) << ") not filled";
    }
    const UnitResult plain_classes = SearchOn(*plain, classes);
    EXPECT_EQ(got_classes, plain_classes) << "production: " << DescribeUnitResult(got_classes)
                                          << "\nplain: " << DescribeUnitResult(plain_classes);
  }
}

}  // namespace
}  // namespace collatz
