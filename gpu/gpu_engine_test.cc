// GPU engine vs CPU engine: identical UnitResults on random units of every kind of range
// the engine must handle (the residue groups: gpu_groups_test.cc; the device tables:
// gpu_tables_test.cc). GPU cases skip when no GPU is present (CI); the whole [1, 2^32)
// comparison runs only when COLLATZ_GPU_FULL=1 (on the GPU machine).
#include "gpu/gpu_engine_test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/ancestor_bounds.h"
#include "core/cpu_engine.h"
#include "core/merge.h"
#include "core/delay.h"
#include "core/records_csv.h"
#include "core/sieve.h"
#include "core/step_table.h"
#include "core/test_support.h"
#include "core/unit_search.h"
#include "core/early_termination.h"
#include "gpu/bound_table.h"
#include "gpu/gpu_baseline.h"
#include "gpu/join_map.h"
#include "gpu/search_kernels.h"
#include "gpu/sieve_builder.h"
#include "gpu/stop_tables.h"

namespace collatz {
namespace {

using namespace gpu_test;  // NOLINT: the helpers of these tests

TEST(GpuEngineTest, NoDeviceIsAnErrorNotACrash) {
  GpuEngineOptions options;
  options.device = 1000;
  std::unique_ptr<SearchEngine> engine;
  Status st = MakeGpuEngine(Tables(), options, &engine);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(engine, nullptr);
  EXPECT_FALSE(st.message().empty());
  // A negative device is refused too, before any CUDA call.
  options.device = -1;
  EXPECT_FALSE(MakeGpuEngine(Tables(), options, &engine).ok());
}

TEST(GpuEngineTest, FirstBlockAndSmallUnitsFloorZero) {
  REQUIRE_GPU();
  auto gpu = MakeGpu();
  std::mt19937_64 rng(Seed());
  SCOPED_TRACE("seed " + std::to_string(Seed()));
  for (Kinds kinds : {Kinds::kDelay, Kinds::kDelayAndClass}) {
    UnitSpec whole;
    whole.begin = 1;
    whole.end = Pow2(19);
    whole.kinds = kinds;
    ExpectSame(*gpu, whole);
    whole.end = Pow2(21) + 12345;  // first block and sieved blocks in one unit
    ExpectSame(*gpu, whole);
    for (int i = 0; i < 6; ++i) {
      UnitSpec spec;
      spec.kinds = kinds;
      spec.begin = 1 + rng() % (uint64_t{1} << 19);
      spec.end = spec.begin + 1 + rng() % (uint64_t{1} << 20);
      ExpectSame(*gpu, spec);
    }
  }
}

TEST(GpuEngineTest, RandomUnitsFloorZeroAcrossWidths) {
  REQUIRE_GPU();
  auto gpu = MakeGpu();
  std::mt19937_64 rng(Seed() + 1);
  SCOPED_TRACE("seed " + std::to_string(Seed()));
  for (unsigned bits : {24u, 32u, 40u, 50u, 60u, 63u, 64u, 65u, 66u, 80u, 100u, 120u, 126u}) {
    for (Kinds kinds : {Kinds::kDelay, Kinds::kDelayAndClass}) {
      UnitSpec spec;
      spec.kinds = kinds;
      const u128 start = Pow2(bits) + (static_cast<u128>(rng()) << (bits > 80 ? 40 : 0)) % Pow2(bits - 1);
      spec.begin = start;
      const int size_bits = bits >= 100 ? 16 : 20;  // above 2^100 most numbers take the host's wide path
      spec.end = start + (uint64_t{1} << size_bits) + rng() % (uint64_t{1} << size_bits);
      ExpectSame(*gpu, spec);
    }
  }
}

TEST(GpuEngineTest, RandomUnitsHighFloorsWithRecordsAndHoles) {
  REQUIRE_GPU();
  auto gpu = MakeGpu();
  std::mt19937_64 rng(Seed() + 2);
  SCOPED_TRACE("seed " + std::to_string(Seed()));
  for (unsigned bits : {20u, 28u, 33u, 40u, 48u, 56u, 60u, 62u, 64u}) {
    for (Kinds kinds : {Kinds::kDelay, Kinds::kDelayAndClass}) {
      const u128 begin = Pow2(bits) + static_cast<u128>(rng()) % Pow2(bits - 2);
      const u128 end = begin + (uint64_t{1} << 22) + rng() % (uint64_t{1} << 22);
      const UnitSpec spec = SpecWithRecords(begin, end, kinds, &rng);
      ExpectSame(*gpu, spec);
      // Class units whose open classes lie near the floor take the walk queue.
      if (kinds == Kinds::kDelayAndClass) ExpectSame(*gpu, HolesNearTheFloor(spec));
    }
  }
}

TEST(GpuEngineTest, UnitsHoldingKnownRecordsAndWideTrajectories) {
  REQUIRE_GPU();
  auto gpu = MakeGpu();
  std::mt19937_64 rng(Seed() + 3);
  // 1980976057694848447: delay 1475, passes 2^125. 48503373501652785087: passes 2^128.
  // 12327829503: passes 2^64. Plus published delay records near 2^60 and 2^64.
  std::vector<u128> centers = {1980976057694848447ULL, static_cast<u128>(12327829503ULL)};
  u128 big;
  ASSERT_TRUE(ParseU128("48503373501652785087", &big).ok());
  centers.push_back(big);
  for (const Record& r : PublishedRecords()) {
    if (r.n > Pow2(59) && (rng() % 3 == 0)) centers.push_back(r.n);
  }
  for (u128 c : centers) {
    for (Kinds kinds : {Kinds::kDelay, Kinds::kDelayAndClass}) {
      UnitSpec one;
      one.begin = c;
      one.end = c + 1;
      one.kinds = kinds;
      const UnitResult r = GpuSearch(*gpu, one);
      EXPECT_EQ(r, CpuSearch(one));
      if (r.candidates == 1) {
        ASSERT_EQ(r.ladder.size(), 1u);
        EXPECT_EQ(r.ladder[0].delay, SlowDelay(c)) << ToDecimal(c);
        if (c == 1980976057694848447ULL) EXPECT_EQ(r.ladder[0].delay, 1475u);
      }
      // Around it, floor 0 and with the real floor and record table.
      UnitSpec around;
      around.begin = c - (uint64_t{1} << 21);
      around.end = c + (uint64_t{1} << 21);
      around.kinds = kinds;
      ExpectSame(*gpu, around);
      if (c > Pow2(40)) ExpectSame(*gpu, SpecWithRecords(c - (uint64_t{1} << 23), c + (uint64_t{1} << 23), kinds, &rng));
    }
  }
  // (Whether 48503373501652785087 itself needs the host depends on the step width: the
  // loop only sees every S-th value. BufferOverflowIsDetectedAndRecovered checks host
  // finishing where nearly every number needs it.)
}

TEST(GpuEngineTest, BufferOverflowIsDetectedAndRecovered) {
  REQUIRE_GPU();
  for (int variant : {0, 1}) {
    SCOPED_TRACE(variant == 0 ? "plain kernel" : "walk queue");
    GpuEngineOptions tiny;
    tiny.walk_queue = variant == 1;
    tiny.ladder_capacity = 1;
    tiny.host_finish_capacity = 1;
    tiny.positions_per_launch = 5000;  // many launches: the ladder floor travels between them
    // No own record table: its 2^42 numbers in launches of 5000 would take hours (the engine
    // skips it for such options anyway; this says so where the options are set).
    tiny.self_record_bits = 0;
    auto gpu = MakeGpu(tiny);
    std::mt19937_64 rng(Seed() + 4);
    for (Kinds kinds : {Kinds::kDelay, Kinds::kDelayAndClass}) {
      UnitSpec spec;
      spec.kinds = kinds;
      spec.floor = variant == 1 ? 1 : 0;  // the walk queue serves units with a floor only
      spec.begin = Pow2(60) + rng() % Pow2(50);
      spec.end = spec.begin + (uint64_t{1} << 20);
      ExpectSame(*gpu, spec);
      EXPECT_GT(LastGpuSearchStats(*gpu).split_launches, 0u);
      // Near 2^125 almost every trajectory leaves 128 bits: the host-finish list fills.
      spec.begin = Pow2(125) + rng() % Pow2(100);
      spec.end = spec.begin + (uint64_t{1} << 15);
      ExpectSame(*gpu, spec);
      EXPECT_GT(LastGpuSearchStats(*gpu).split_launches, 0u);
      EXPECT_GT(LastGpuSearchStats(*gpu).host_finished, 0u);
    }
  }
  // Automatic capacities grow instead: same result.
  GpuEngineOptions grow;
  grow.positions_per_launch = 1 << 16;
  auto gpu2 = MakeGpu(grow);
  UnitSpec spec;
  spec.begin = Pow2(125);
  spec.end = spec.begin + (uint64_t{1} << 19);
  ExpectSame(*gpu2, spec);
}

TEST(GpuEngineTest, TuningVariantsAgree) {
  REQUIRE_GPU();
  std::mt19937_64 rng(Seed() + 5);
  GpuEngineOptions a, b, c, d, h;  // default: walk queue for delay-only units
  h.walk_queue = false;
  GpuEngineOptions plain_classes;  // delay+class units on the plain kernel
  plain_classes.class_walk_queue = false;
  d.step_bits = 13;  // shared-memory step table, CPU-sized bound buckets
  d.full_occupancy = false;
  c.full_occupancy = false;
  d.bound_sub_bits = 3;
  a.tail_bits = 20;
  a.step_bits = 11;
  a.block_threads = 128;
  b.tail_bits = 28;
  b.step_bits = 20;
  b.block_threads = 512;
  c.early_termination = false;
  c.block_threads = 128;  // walk queue without a register cap
  c.queue_threads_per_sm = 0;
  auto ga = MakeGpu(a), gb = MakeGpu(b), gc = MakeGpu(c), gd = MakeGpu(d), gh = MakeGpu(h), gp = MakeGpu(plain_classes);
  for (Kinds kinds : {Kinds::kDelay, Kinds::kDelayAndClass}) {
    const u128 begin = Pow2(60) + rng() % Pow2(58);
    const UnitSpec spec = SpecWithRecords(begin, begin + (uint64_t{1} << 22), kinds, &rng);
    const UnitResult cpu = CpuSearch(spec);
    EXPECT_EQ(GpuSearch(*ga, spec), cpu);
    EXPECT_EQ(GpuSearch(*gb, spec), cpu);
    EXPECT_EQ(GpuSearch(*gc, spec), cpu);
    EXPECT_EQ(GpuSearch(*gd, spec), cpu);
    EXPECT_EQ(GpuSearch(*gh, spec), cpu);
    EXPECT_EQ(GpuSearch(*gp, spec), cpu);
  }
}

TEST(GpuEngineTest, BaselineCountsEveryNumber) {
  REQUIRE_GPU();
  UnitSpec spec;
  spec.begin = 1;
  spec.end = 1 + (uint64_t{1} << 16);
  double seconds = 0;
  uint64_t numbers = 0;
  GpuBaselineResult detail;
  ASSERT_TRUE(RunGpuBaseline(spec, &seconds, &numbers, &detail).ok());
  EXPECT_EQ(numbers, uint64_t{1} << 16);
  uint64_t sum = 0;
  uint32_t max = 0;
  for (uint64_t n = 1; n <= (uint64_t{1} << 16); ++n) {
    const uint32_t d = Tables()->delay->Delay(n);
    sum += d;
    max = std::max(max, d);
  }
  EXPECT_EQ(detail.delay_sum, sum);
  EXPECT_EQ(detail.max_delay, max);
  EXPECT_EQ(detail.overflowed, 0u);
}

// A sieve wider than the default, built on the device (tables without the host's offset
// table, as `collatzctl run` builds them for units without a record table near them), gives
// the CPU engine's results on the same sieve; its own record table comes from an engine of
// the default width (the same records).
TEST(GpuEngineTest, DeviceBuiltWideSieveMatchesCpu) {
  REQUIRE_GPU();
  std::mt19937_64 rng(Seed() + 23);
  SCOPED_TRACE("seed " + std::to_string(Seed()));
  std::shared_ptr<const SearchTables> wide, cpu_tables;
  ASSERT_TRUE(BuildDeviceSearchTables(0, 22, Tables()->delay, &wide).ok());
  ASSERT_EQ(wide->delay_offsets, nullptr);
  ASSERT_TRUE(SearchTables::FromSieve(wide->sieve, 19, 20, &cpu_tables).ok());
  GpuEngineOptions o;
  o.shallow_group_bits = o.group_bits = o.class_group_bits = o.unchecked_group_bits = 5;
  o.group_min_members = o.class_group_min_members = 1;
  o.self_record_bits = 32;
  auto gpu = MakeGpu(o, wide);
  std::vector<u128> centers;
  for (const Record& r : PublishedRecords()) {
    if (r.n > Pow2(50) && r.n % 2 == 1 && rng() % 8 == 0) centers.push_back(r.n);
  }
  centers.resize(std::min<size_t>(centers.size(), 3));
  centers.push_back(Pow2(66) + rng() % Pow2(60));
  for (u128 c : centers) {
    const UnitSpec spec = FloorOnlySpec(c - Pow2(30), c + Pow2(30), Kinds::kDelay);  // 57 cycles
    ExpectSameOnTables(*cpu_tables, *gpu, spec);
    EXPECT_EQ(LastGpuSearchStats(*gpu).self_record_bits, 32) << ToDecimal(c);
    EXPECT_GT(LastGpuSearchStats(*gpu).group_launches, 0u) << ToDecimal(c);
    // Delay+class units (every survivor, one variant), with their table and open classes near
    // the floor, as `collatzctl run` searches them on a 25-bit sieve.
    UnitSpec classes = SpecWithRecords(c - Pow2(28), c + Pow2(28), Kinds::kDelayAndClass, &rng);
    ExpectSameOnTables(*cpu_tables, *gpu, HolesNearTheFloor(classes));
  }
  // The CPU engine cannot search delay-only units on these tables, and says so.
  CpuEngine cpu(wide, CpuEngineOptions{});
  UnitResult r;
  EXPECT_EQ(cpu.Search(FloorOnlySpec(Pow2(40), Pow2(40) + 1000, Kinds::kDelay), &r).code(),
            Status::Code::kFailedPrecondition);
}

// Units that hold no whole cycle of the sieve (9 2^k numbers in delay-only units, 2^k in
// delay+class ones) take no residue groups, however small the groups may be: inside one
// cycle, and across the border of two.
TEST(GpuEngineTest, UnitsWithoutAWholeCycleTakeNoGroups) {
  REQUIRE_GPU();
  GpuEngineOptions o;
  o.group_bits = o.class_group_bits = o.shallow_group_bits = o.unchecked_group_bits = 5;
  o.group_min_members = o.class_group_min_members = 1;
  auto gpu = MakeGpu(o, SmallSieveTables());
  const u128 cycle = 9 * Pow2(12);
  const u128 base = (Pow2(40) / cycle + 7) * cycle;
  for (const auto& [from, to] : {std::pair{base + 100, base + 30000}, std::pair{base + cycle - 5000, base + cycle + 9000}}) {
    for (Kinds kinds : {Kinds::kDelay, Kinds::kDelayAndClass}) {
      const UnitSpec spec = SpecWithRecords(from, to, kinds, nullptr);
      ExpectSameOnTables(*SmallSieveTables(), *gpu, spec);
      EXPECT_EQ(LastGpuSearchStats(*gpu).group_launches, 0u);
    }
  }
}


// The whole [1, 2^32) on the GPU equals the CPU result (opt-in: minutes of CPU time).
TEST(GpuEngineTest, WholeRangeBelow2p32MatchesCpu) {
  REQUIRE_GPU();
  if (std::getenv("COLLATZ_GPU_FULL") == nullptr) GTEST_SKIP() << "set COLLATZ_GPU_FULL=1";
  auto gpu = MakeGpu();
  for (Kinds kinds : {Kinds::kDelay, Kinds::kDelayAndClass}) {
    UnitSpec spec;
    spec.begin = 1;
    spec.end = Pow2(32);
    spec.kinds = kinds;
    const UnitResult got = GpuSearch(*gpu, spec);
    const UnitResult cpu = CpuSearch(spec);
    EXPECT_EQ(got, cpu) << "gpu: " << DescribeUnitResult(got) << "\ncpu: " << DescribeUnitResult(cpu);
    // Every odd published record below 2^32 with a delay above the floor (0) is on the ladder.
    for (const Record& r : PublishedRecords()) {
      if (r.n >= Pow2(32) || r.n % 2 == 0 || r.delay == 0) continue;
      EXPECT_TRUE(std::find(got.ladder.begin(), got.ladder.end(), r) != got.ladder.end()) << ToDecimal(r.n);
    }
  }
}

// The same range cut the way collatzctl run plans it ([1, 2^20), [2^20, 2^24), ...), each unit
// with the floor, holes and record table of the units before it: every unit but the first
// then runs the walk queue (delay-only) with real early termination; the merged records
// must equal shared/data (opt-in like the whole-range test).
TEST(GpuEngineTest, PlannedUnitsBelow2p32MatchCpuAndReference) {
  REQUIRE_GPU();
  if (std::getenv("COLLATZ_GPU_FULL") == nullptr) GTEST_SKIP() << "set COLLATZ_GPU_FULL=1";
  auto gpu = MakeGpu();
  for (Kinds kinds : {Kinds::kDelay, Kinds::kDelayAndClass}) {
    std::vector<FinishedUnit> done;
    for (const auto& [begin, end] : std::vector<std::pair<u128, u128>>{
             {1, Pow2(20)}, {Pow2(20), Pow2(24)}, {Pow2(24), Pow2(28)}, {Pow2(28), Pow2(30)}, {Pow2(30), Pow2(32)}}) {
      const UnitSpec spec = testing_support::SpecFromKnowledge(MergeRecords({}, done), begin, end, kinds);
      const UnitResult got = GpuSearch(*gpu, spec);
      const UnitResult cpu = CpuSearch(spec);
      ASSERT_EQ(got, cpu) << ToDecimal(begin) << ": gpu " << DescribeUnitResult(got) << "\ncpu "
                          << DescribeUnitResult(cpu);
      done.push_back(FinishedUnit{begin, end, kinds, got});
    }
    const MergedRecords merged = MergeRecords({}, done);
    std::vector<Record> below_2p32;
    for (const Record& r : PublishedRecords()) {
      if (r.n < Pow2(32)) below_2p32.push_back(r);
    }
    EXPECT_EQ(merged.delay_final, below_2p32);
  }
}


}  // namespace
}  // namespace collatz
