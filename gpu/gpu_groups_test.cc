// The residue-group kernel against the CPU engine: groups of every width up to the deepest,
// the checks inside their shared steps counted on the host, their buffers, the full-delay
// walk of units without a record table and the join map's skipped twins. Part of
// gpu_engine_test; GPU cases skip when no GPU is present (CI).
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

TEST(GpuEngineTest, ResidueGroupsMatchCpu) {
  REQUIRE_GPU();
  std::mt19937_64 rng(Seed() + 7);
  SCOPED_TRACE("seed " + std::to_string(Seed()));
  for (int bits : {5, 8, 9, 11}) {
    GpuEngineOptions o = GroupOptions(bits, 4);
    o.positions_per_launch = uint64_t{1} << (18 + bits % 3);  // several launches, uneven entry ranges
    // The walk's table in shared memory (the pair width: two steps a round from 2^44 up, or
    // one), or in L2.
    o.group_walk_step_bits = bits == 8 || bits == 9 ? gpu::kPairStepBits : bits == 11 ? 7 : 0;
    o.group_walk_round_steps = bits == 9 ? 1 : 2;
    auto gpu = MakeGpu(o, SmallSieveTables());
    for (unsigned height : {40u, 52u, 60u, 63u, 64u, 70u, 99u}) {
      const u128 begin = Pow2(height) + static_cast<u128>(rng()) % Pow2(height - 3);
      const u128 end = begin + (uint64_t{1} << 26) + rng() % (uint64_t{1} << 20);
      ExpectSameOnTables(*SmallSieveTables(), *gpu, SpecWithRecords(begin, end, Kinds::kDelay, nullptr));
      EXPECT_GT(LastGpuSearchStats(*gpu).group_launches, 0u) << "height " << height;
      // Class searches with open classes near the floor take the groups too.
      ExpectSameOnTables(*SmallSieveTables(), *gpu,
                         HolesNearTheFloor(SpecWithRecords(begin, end, Kinds::kDelayAndClass, &rng)));
      EXPECT_GT(LastGpuSearchStats(*gpu).group_launches, 0u) << "height " << height << " delay+class";
      // With a low hole as well they take the plain kernel.
      ExpectSameOnTables(*SmallSieveTables(), *gpu, SpecWithRecords(begin, end, Kinds::kDelayAndClass, &rng));
    }
    // Units around published records (their ladders are not empty) and around
    // 1980976057694848447 (delay 1475; its trajectory passes 2^125).
    std::vector<u128> centers = {1980976057694848447ULL};
    for (const Record& r : PublishedRecords()) {
      if (r.n > Pow2(44) && r.n % 2 == 1 && rng() % 4 == 0) centers.push_back(r.n);
    }
    for (u128 c : centers) {
      for (Kinds kinds : {Kinds::kDelay, Kinds::kDelayAndClass}) {
        const UnitSpec spec =
            HolesNearTheFloor(SpecWithRecords(c - (uint64_t{1} << 25), c + (uint64_t{1} << 25), kinds, &rng));
        ExpectSameOnTables(*SmallSieveTables(), *gpu, spec);
        EXPECT_GT(LastGpuSearchStats(*gpu).group_launches, 0u);
      }
    }
  }
}

// Groups as deep as the engine allows (16 and 17 bits: 27-bit fields in the packed step entry), with
// the checks of each group's last member inside its k + G shared steps (lever 78), on a
// 5-bit sieve so that units of 2^27 and 2^28 numbers have such groups; compared with the CPU.
TEST(GpuEngineTest, DeepResidueGroupsMatchCpu) {
  REQUIRE_GPU();
  std::mt19937_64 rng(Seed() + 11);
  SCOPED_TRACE("seed " + std::to_string(Seed()));
  const auto tables = TablesWithSieve(5);
  uint64_t step_stopped = 0;
  for (int bits : {16, 17}) {
    GpuEngineOptions o = GroupOptions(bits, 2);
    o.group_step_check_min_members = 1;
    auto gpu = MakeGpu(o, tables);
    for (unsigned height : {56u, 60u, 64u, 70u}) {
      const u128 begin = Pow2(height) + static_cast<u128>(rng()) % Pow2(height - 3);
      const u128 end = begin + (uint64_t{1} << (bits + 11)) + rng() % (uint64_t{1} << 20);
      ExpectSameOnTables(*tables, *gpu, SpecWithRecords(begin, end, Kinds::kDelay, nullptr));
      EXPECT_GT(LastGpuSearchStats(*gpu).group_launches, 0u) << "height " << height;
      step_stopped += LastGpuSearchStats(*gpu).step_stopped_groups;
      ExpectSameOnTables(*tables, *gpu, HolesNearTheFloor(SpecWithRecords(begin, end, Kinds::kDelayAndClass, &rng)));
      EXPECT_GT(LastGpuSearchStats(*gpu).group_launches, 0u) << "height " << height << " delay+class";
      step_stopped += LastGpuSearchStats(*gpu).step_stopped_groups;
    }
    // Low units with the floor lowered by 30: many numbers are open, and a group's members
    // span up to 2% in value, so a stop decided by any member but the last shows.
    for (unsigned height : {36u, 40u}) {
      const u128 begin = Pow2(height) + static_cast<u128>(rng()) % Pow2(height - 3);
      UnitSpec spec = SpecWithRecords(begin, begin + (uint64_t{1} << (bits + 11)), Kinds::kDelay, nullptr);
      spec.floor -= 30;
      ExpectSameOnTables(*tables, *gpu, spec);
      EXPECT_GT(LastGpuSearchStats(*gpu).step_stopped_groups, 0u) << "height " << height;
    }
  }
  // The checks inside the shared steps stopped groups (else this test could not see them).
  EXPECT_GT(step_stopped, 0u);
}

// A launch's tail (GroupSplitTail): once no group is left to decide, generators with at
// least group_tail_split_min members left give their later half to idle lanes. Splitting
// from 2 members on, in small launches (many tails), with one- and two-step rounds, halved
// groups (their members 2^(G + 1) apart) and the full-delay walk: the same results as the
// CPU, and splits happened. A member walked with another's value changes a result only where
// one of them has a delay above the floor (the tallies sum those), so the units also run with
// their floor near the typical delay at their height (TypicalDelayFloor): most walking members
// then count (mutation 7 shows it; a floor lowered by 40 did not).
TEST(GpuEngineTest, TailSplitsMatchCpu) {
  REQUIRE_GPU();
  std::mt19937_64 rng(Seed() + 29);
  SCOPED_TRACE("seed " + std::to_string(Seed()));
  uint64_t splits = 0;
  for (int round_steps : {1, 2}) {
    GpuEngineOptions o = GroupOptions(9, 4);
    o.group_tail_split_min = 2;
    o.positions_per_launch = uint64_t{1} << 18;
    o.group_walk_round_steps = round_steps;
    auto gpu = MakeGpu(o, SmallSieveTables());
    for (unsigned height : {52u, 64u, 70u, 99u}) {
      const u128 begin = Pow2(height) + static_cast<u128>(rng()) % Pow2(height - 3);
      const u128 end = begin + (uint64_t{1} << 26) + rng() % (uint64_t{1} << 20);
      ExpectSameOnTables(*SmallSieveTables(), *gpu, SpecWithRecords(begin, end, Kinds::kDelay, nullptr));
      splits += LastGpuSearchStats(*gpu).tail_splits;
      ExpectSameOnTables(*SmallSieveTables(), *gpu,
                         HolesNearTheFloor(SpecWithRecords(begin, end, Kinds::kDelayAndClass, &rng)));
      splits += LastGpuSearchStats(*gpu).tail_splits;
      UnitSpec low = SpecWithRecords(begin, end, Kinds::kDelay, nullptr);
      low.floor = TypicalDelayFloor(height, low.floor);
      ExpectSameOnTables(*SmallSieveTables(), *gpu, low);
      splits += LastGpuSearchStats(*gpu).tail_splits;
    }
    // No record table: every member walks to the tail.
    o.self_record_bits = 0;
    auto full = MakeGpu(o, SmallSieveTables());
    const u128 c = Pow2(70) + rng() % Pow2(60);
    ExpectSameOnTables(*SmallSieveTables(), *full, FloorOnlySpec(c, c + (uint64_t{1} << 24), Kinds::kDelay));
    EXPECT_GT(LastGpuSearchStats(*full).group_launches, 0u);
    splits += LastGpuSearchStats(*full).tail_splits;
  }
  // Deep groups with the checks inside their shared steps: halves walk, and split.
  const auto tables = TablesWithSieve(5);
  GpuEngineOptions o = GroupOptions(16, 2);
  o.group_step_check_min_members = 1;
  o.group_tail_split_min = 2;
  auto deep = MakeGpu(o, tables);
  uint64_t halved = 0;
  for (unsigned height : {60u, 66u}) {
    const u128 begin = Pow2(height) + static_cast<u128>(rng()) % Pow2(height - 3);
    UnitSpec spec = SpecWithRecords(begin, begin + (uint64_t{1} << 27), Kinds::kDelay, nullptr);
    ExpectSameOnTables(*tables, *deep, spec);
    splits += LastGpuSearchStats(*deep).tail_splits;
    halved += LastGpuSearchStats(*deep).half_stopped_groups;
    spec.floor = TypicalDelayFloor(height, spec.floor);
    ExpectSameOnTables(*tables, *deep, spec);
    splits += LastGpuSearchStats(*deep).tail_splits;
    halved += LastGpuSearchStats(*deep).half_stopped_groups;
  }
  EXPECT_GT(halved, 0u);
  EXPECT_GT(splits, 0u);
}

// The two-step rounds' narrow fast path (v < 2^88: two products) and its fallback (the steps
// one by one) against the CPU: narrow everywhere, so that units at 2^84 and 2^96 take the
// fallback often or always, and the three-limb path everywhere, at heights below and above
// the default narrow_walk_max_bits, both kinds.
TEST(GpuEngineTest, NarrowAndWidePairStepsMatchCpu) {
  REQUIRE_GPU();
  std::mt19937_64 rng(Seed() + 17);
  SCOPED_TRACE("seed " + std::to_string(Seed()));
  const auto tables = TablesWithSieve(5);
  for (int narrow_bits : {127, 0}) {
    GpuEngineOptions o = GroupOptions(16, 2);
    o.group_step_check_min_members = 1;
    o.narrow_walk_max_bits = narrow_bits;
    auto gpu = MakeGpu(o, tables);
    for (unsigned height : {60u, 70u, 84u, 96u}) {
      SCOPED_TRACE("narrow_walk_max_bits " + std::to_string(narrow_bits) + " height " + std::to_string(height));
      const u128 begin = Pow2(height) + static_cast<u128>(rng()) % Pow2(height - 3);
      const u128 end = begin + (uint64_t{1} << 27) + rng() % (uint64_t{1} << 20);
      ExpectSameOnTables(*tables, *gpu, SpecWithRecords(begin, end, Kinds::kDelay, nullptr));
      EXPECT_GT(LastGpuSearchStats(*gpu).group_launches, 0u);
      ExpectSameOnTables(*tables, *gpu, HolesNearTheFloor(SpecWithRecords(begin, end, Kinds::kDelayAndClass, &rng)));
    }
  }
}

// The two-step walk's check at every width it looks ahead (walk_check_bits 2 .. 8, each its own
// kernel and table), narrow and wide, against the CPU: units at 2^48 and 2^60 with their
// floor lowered to 400, so that many members end above it (tallied, and on the ladder where
// they pass the ladder floor) and a check that stopped one of them too early would change
// the result; delay-only and delay+class with holes just below the floor.
TEST(GpuEngineTest, EveryWalkCheckWidthMatchesCpu) {
  REQUIRE_GPU();
  std::mt19937_64 rng(Seed() + 23);
  SCOPED_TRACE("seed " + std::to_string(Seed()));
  for (int bits = gpu::kMinWalkCheckBits; bits <= gpu::kMaxWalkCheckBits; ++bits) {
    for (int narrow_bits : {127, 0}) {
      GpuEngineOptions o = GroupOptions(9, 4);
      o.walk_check_bits = bits;
      o.narrow_walk_max_bits = narrow_bits;
      auto gpu = MakeGpu(o, SmallSieveTables());
      for (unsigned height : {48u, 60u}) {
        SCOPED_TRACE("walk_check_bits " + std::to_string(bits) + " narrow_walk_max_bits " + std::to_string(narrow_bits) +
                     " height " + std::to_string(height));
        UnitSpec spec = SpecWithRecords(Pow2(height) + ((rng() % Pow2(16)) << 21), Pow2(height), Kinds::kDelay, nullptr);
        spec.end = spec.begin + (uint64_t{1} << 25);
        spec = WithLowerFloor(spec, 400);
        ExpectSameOnTables(*SmallSieveTables(), *gpu, spec);
        EXPECT_GT(LastGpuSearchStats(*gpu).group_launches, 0u);
        EXPECT_GT(GpuSearch(*gpu, spec).tally_count, 1000u);
        spec.kinds = Kinds::kDelayAndClass;
        for (uint32_t d = spec.floor - 20; d <= spec.floor; d += 3) spec.open_holes.push_back(d);
        ExpectSameOnTables(*SmallSieveTables(), *gpu, spec);
      }
    }
  }
  // Only the widths the kernels are instantiated for.
  for (int bits : {0, 1, 9, 10}) {
    GpuEngineOptions o;
    o.walk_check_bits = bits;
    std::unique_ptr<SearchEngine> engine;
    EXPECT_EQ(MakeGpuEngine(SmallSieveTables(), o, &engine).code(), Status::Code::kInvalidArgument) << bits;
  }
}

// A unit whose records, floor, holes and kinds equal the engine's last unit's searches with
// the tables already on the device (GpuSearchStats::unit_tables_reused, consecutive units of
// a campaign); any other unit rebuilds them. Tables kept from a unit with a higher floor would
// stop walks whose delays pass a lower one, so the lower floor's tallies would differ from the
// CPU's, and the holes' tables differ from the delay-only ones.
TEST(GpuEngineTest, UnitTablesAreReusedOnlyForTheSameRecordsFloorAndHoles) {
  REQUIRE_GPU();
  std::mt19937_64 rng(Seed() + 29);
  SCOPED_TRACE("seed " + std::to_string(Seed()));
  GpuEngineOptions o = GroupOptions(9, 4);
  auto gpu = MakeGpu(o, SmallSieveTables());
  const auto search = [&](const UnitSpec& spec, bool reused) {
    ExpectSameOnTables(*SmallSieveTables(), *gpu, spec);
    const GpuSearchStats stats = LastGpuSearchStats(*gpu);
    EXPECT_EQ(stats.unit_tables_reused, reused);
    EXPECT_GT(stats.group_launches, 0u);
  };
  UnitSpec high = SpecWithRecords(Pow2(60) + ((rng() % Pow2(16)) << 21), Pow2(60), Kinds::kDelay, nullptr);
  high.end = high.begin + (uint64_t{1} << 25);
  UnitSpec next = high;  // the next unit of the same lease context
  next.begin = high.end;
  next.end = next.begin + (uint64_t{1} << 25);
  const UnitSpec low = WithLowerFloor(next, 400);
  UnitSpec low_classes = low;
  low_classes.kinds = Kinds::kDelayAndClass;
  for (uint32_t d = low.floor - 20; d <= low.floor; d += 3) low_classes.open_holes.push_back(d);
  UnitSpec low_classes_next = low_classes;
  low_classes_next.begin = high.begin;
  low_classes_next.end = high.end;
  search(high, false);
  search(next, true);
  search(low, false);
  EXPECT_GT(GpuSearch(*gpu, low).tally_count, 1000u);  // many delays pass the lower floor
  search(high, false);
  search(low_classes, false);
  search(low_classes_next, true);
  search(low, false);
}

// The deepest residue groups (kMaxGroupBits: their step entries' c and 3^p need 32 bits, and
// the step between members comes near 2^64) against the CPU, delay-only at two heights and
// delay+class at one, on units the engine plans in groups of that width (asserted).
TEST(GpuEngineTest, DeepestGroupsMatchCpu) {
  REQUIRE_GPU();
  std::mt19937_64 rng(Seed() + 19);
  SCOPED_TRACE("seed " + std::to_string(Seed()));
  const auto tables = TablesWithSieve(5);
  GpuEngineOptions o = GroupOptions(gpu::kMaxGroupBits, 2);
  o.deep_group_min_members = o.class_deep_group_min_members = 2;
  o.group_step_check_min_members = 1;
  auto gpu = MakeGpu(o, tables);
  for (unsigned height : {60u, 66u}) {
    SCOPED_TRACE("height " + std::to_string(height));
    // 2^(5 + 19) 9 x 2 numbers: whole cycles for groups of two members and more.
    const u128 begin = Pow2(height) + static_cast<u128>(rng()) % Pow2(height - 3);
    const u128 end = begin + (uint64_t{1} << 29) + rng() % (uint64_t{1} << 20);
    ExpectSameOnTables(*tables, *gpu, SpecWithRecords(begin, end, Kinds::kDelay, nullptr));
    EXPECT_EQ(LastGpuSearchStats(*gpu).group_bits, gpu::kMaxGroupBits);
    if (height == 60) {
      ExpectSameOnTables(*tables, *gpu, HolesNearTheFloor(SpecWithRecords(begin, end, Kinds::kDelayAndClass, &rng)));
      EXPECT_EQ(LastGpuSearchStats(*gpu).group_bits, gpu::kMaxGroupBits);
    }
  }
}

// Walking groups whose step between members after k + G T-steps, A2 = modulus 3^(p + p2),
// would pass 2^64 walk their members from k T-steps, 2^G A1 apart (LaunchParams::
// group_shallow_steps). In production only groups with p + p2 > 38 odd steps do (k + G > 38: the
// 28-bit sieve in units of 2^50 and more), too rarely for a unit the CPU can check, so here
// the limit is lowered to 13 odd steps: in groups of 16 bits over a 5-bit sieve, those with
// more than 13 odd steps in their 21 shared ones (about half the walking groups) take that path,
// the others the usual one. Delay-only, delay+class, the floor near the typical delay (the
// walking members' delays then count in the tallies) and the full-delay walk, one- and
// two-step rounds, against the CPU (mutation 8, a member walked from k counting one step too
// many, shows it).
TEST(GpuEngineTest, ShallowWalkGroupsMatchCpu) {
  REQUIRE_GPU();
  std::mt19937_64 rng(Seed() + 31);
  SCOPED_TRACE("seed " + std::to_string(Seed()));
  const auto tables = TablesWithSieve(5);
  uint64_t shallow = 0, halved = 0;
  for (int round_steps : {1, 2}) {
    SCOPED_TRACE("round steps " + std::to_string(round_steps));
    GpuEngineOptions o = GroupOptions(16, 2);
    o.group_step_check_min_members = 1;
    o.group_walk_round_steps = round_steps;
    o.group_a2_max_odd_steps = 13;
    auto gpu = MakeGpu(o, tables);
    for (unsigned height : {60u, 66u, 84u}) {
      SCOPED_TRACE("height " + std::to_string(height));
      const u128 begin = Pow2(height) + static_cast<u128>(rng()) % Pow2(height - 3);
      const u128 end = begin + (uint64_t{1} << 27) + rng() % (uint64_t{1} << 20);
      UnitSpec spec = SpecWithRecords(begin, end, Kinds::kDelay, nullptr);
      ExpectSameOnTables(*tables, *gpu, spec);
      EXPECT_EQ(LastGpuSearchStats(*gpu).group_bits, 16);
      shallow += LastGpuSearchStats(*gpu).shallow_walk_groups;
      halved += LastGpuSearchStats(*gpu).half_stopped_groups;
      spec.floor = TypicalDelayFloor(height, spec.floor);
      ExpectSameOnTables(*tables, *gpu, spec);
      shallow += LastGpuSearchStats(*gpu).shallow_walk_groups;
      ExpectSameOnTables(*tables, *gpu, HolesNearTheFloor(SpecWithRecords(begin, end, Kinds::kDelayAndClass, &rng)));
      shallow += LastGpuSearchStats(*gpu).shallow_walk_groups;
    }
    // No record table: every member walks to the tail.
    o.self_record_bits = 0;
    auto full = MakeGpu(o, tables);
    const u128 c = Pow2(70) + rng() % Pow2(60);
    ExpectSameOnTables(*tables, *full, FloorOnlySpec(c, c + (uint64_t{1} << 26), Kinds::kDelay));
    EXPECT_GT(LastGpuSearchStats(*full).group_launches, 0u);
    shallow += LastGpuSearchStats(*full).shallow_walk_groups;
  }
  EXPECT_GT(shallow, 0u);
  // Halved groups (at the units' own floors; a floor near the typical delay stops no half):
  // the usual path ran beside it, for the groups below the limit.
  EXPECT_GT(halved, 0u);
}

// The groups that the checks inside the shared steps stop, counted on the host by their
// definition (the last member after each T-step k + 1 .. k + G - 1, in groups whose entry
// did not stop within k steps) for a unit that the engine plans as one group launch: whole
// cycles (9 blocks of 2^5), 2^21 of them in 16-bit groups of 32 members, low enough (2^32 to
// 2^35) that a group's members span up to 7% in value. With the class and ancestor checks
// (the default) a value v stops below its residue's ancestor threshold where the numbers
// share v mod 162 (core/ancestor_bounds.h), else below the larger of stop_below[s] and its
// class's predecessor bound (v mod 9 taken here from v itself; gpu/stop_tables.h); without
// them below stop_below[s]. Groups that do not stop there are halved (lever 86) where one of
// their halves (members t = 0, 1 mod 2) stops one T-step after k + G, decided by its last
// member with the class bound, and stop where both do. Both counts must equal the GPU's in
// each of the three; a decision by any other member (-DCOLLATZ_GPU_MUTATION=3, and =6 for a
// half) or by another residue (=4) changes them.
TEST(GpuEngineTest, StepStoppedGroupsMatchHostCount) {
  REQUIRE_GPU();
  std::mt19937_64 rng(Seed() + 13);
  SCOPED_TRACE("seed " + std::to_string(Seed()));
  const auto tables = TablesWithSieve(5);
  const Sieve& sieve = *tables->sieve;
  const int k = sieve.bits(), G = 16;
  const unsigned modulus = 9;
  const uint64_t cycles = uint64_t{1} << 21;
  GpuEngineOptions o = GroupOptions(G, 2);
  o.group_step_check_min_members = 1;
  GpuEngineOptions classes_only = o, plain = o;
  classes_only.group_ancestor_checks = false;
  plain.group_class_checks = false;
  auto gpu = MakeGpu(o, tables);
  auto gpu_classes_only = MakeGpu(classes_only, tables);
  auto gpu_plain = MakeGpu(plain, tables);
  auto t_step = [](u128& v, uint32_t& s) {
    if ((v & 1) != 0) {
      v = v + (v >> 1) + 1;
      s += 2;
    } else {
      v >>= 1;
      s += 1;
    }
  };
  const u128 cycle_numbers = static_cast<u128>(modulus) << k;
  std::vector<u128> begins;
  for (unsigned height : {32u, 33u, 35u}) {
    begins.push_back((Pow2(height) + static_cast<u128>(rng()) % Pow2(height - 3)) / cycle_numbers * cycle_numbers);
  }
  // A unit where the halves' first and last members decide differently for many groups (40000
  // of 450000 walking ones; asserted below), so that a half decided by any member but its
  // last (-DCOLLATZ_GPU_MUTATION=6) shows whatever the seed.
  const u128 sensitive = (Pow2(33) + 3 * Pow2(28)) / cycle_numbers * cycle_numbers;
  begins.push_back(sensitive);
  for (const u128 begin : begins) {
    const UnitSpec spec = SpecWithRecords(begin, begin + cycles * cycle_numbers, Kinds::kDelay, nullptr);
    const EarlyTermination et(spec);
    ASSERT_TRUE(et.enabled());
    const WalkStopTable walk = BuildWalkStopTable(BuildStopTable(spec, spec.floor), o.tail_bits);
    // 0: stop_below alone; 1: with the value classes; 2: with the ancestors too. The numbers
    // compared differ by multiples of 9 3^odd 2^(steps left to k or k + G): from 2 odd steps
    // on by multiples of 81, sharing their parity but after an entry's last step.
    int checks = 2;
    auto below = [&](uint32_t s, u128 v, uint32_t odd, bool parity_shared) {
      if (checks == 2 && odd >= 2 && parity_shared) {
        return v < AncestorThreshold(et.stop_below(), s, static_cast<unsigned>(v % kAncestorModulus));
      }
      if (checks == 0) return s <= spec.floor && v < et.stop_below()[s];
      const unsigned r9 = static_cast<unsigned>(v % 9);
      const uint32_t value_class = r9 == 2 || r9 == 5 ? 1 : r9 == 4 ? 2 : r9 == 8 ? 3 : 0;
      const size_t row = std::min<size_t>(s, walk.last_row);
      return v < Value(walk.entries[(row << gpu::kWalkRowBits) + (value_class << gpu::kWalkCheckBits) + 1]);
    };
    for (const int with_checks : {2, 1, 0}) {
      checks = with_checks;
      uint64_t want = 0, want_halved = 0, first_member_differs = 0;
      for (unsigned r = 0; r < modulus; ++r) {
        for (uint32_t j : tables->delay_offsets->Variant(r)) {
          const u128 offset = (static_cast<u128>(r) << k) + sieve.residues()[j];
          // The entry's largest number in the launch, after each of its first k T-steps.
          bool entry_stops = false;
          u128 v = begin + (cycles - 1) * cycle_numbers + offset;
          uint32_t s = 0;
          for (int i = 0; i < k && !entry_stops; ++i) {
            t_step(v, s);
            entry_stops = below(s, v, s - (i + 1), i + 1 < k);
          }
          if (entry_stops) continue;
          for (uint64_t q = 0; q < (uint64_t{1} << G); ++q) {
            const uint64_t members = (cycles - q + (uint64_t{1} << G) - 1) >> G;
            v = begin + (q + ((members - 1) << G)) * cycle_numbers + offset;
            s = 0;
            for (int i = 0; i < k; ++i) t_step(v, s);
            bool stopped = false;
            for (int i = 1; i < G && !stopped; ++i) {
              t_step(v, s);
              stopped = below(s, v, s - (k + i), true);
            }
            if (stopped) {
              ++want;
              continue;
            }
            if (members < 2) continue;
            // The halves (members t = 0 and 1 mod 2) one T-step after k + G, each decided by
            // its last member, n - 1 or n - 2, with the class bound (no shared parity).
            int halves_stopped = 0;
            for (uint64_t back = 0; back < 2; ++back) {
              auto half_stops = [&](uint64_t member) {
                u128 w = begin + (q + (member << G)) * cycle_numbers + offset;
                uint32_t sw = 0;
                for (int i = 0; i < k + G + 1; ++i) t_step(w, sw);
                return below(sw, w, sw - (k + G + 1), false);
              };
              const bool stops = half_stops(members - 1 - back);
              halves_stopped += stops ? 1 : 0;
              if (begin == sensitive && stops != half_stops((members - 1 - back) & 1)) ++first_member_differs;
            }
            if (halves_stopped == 2) ++want;
            if (halves_stopped == 1) ++want_halved;
          }
        }
      }
      SCOPED_TRACE("unit at " + ToDecimal(begin) + ", checks " + std::to_string(checks));
      SearchEngine& engine = checks == 2 ? *gpu : checks == 1 ? *gpu_classes_only : *gpu_plain;
      ExpectSameOnTables(*tables, engine, spec);
      const GpuSearchStats stats = LastGpuSearchStats(engine);
      EXPECT_EQ(stats.group_launches, 1u);
      EXPECT_EQ(stats.step_stopped_groups, want);
      EXPECT_EQ(stats.half_stopped_groups, want_halved);
      EXPECT_GT(want, 0u);
      EXPECT_GT(want_halved, 0u);
      if (begin == sensitive && checks == 2) EXPECT_GT(first_member_differs, 1000u);
    }
  }
}

TEST(GpuEngineTest, ResidueGroupBufferOverflowIsRecovered) {
  REQUIRE_GPU();
  GpuEngineOptions tiny;
  tiny.ladder_capacity = 1;
  tiny.host_finish_capacity = 1;
  tiny.group_bits = tiny.class_group_bits = tiny.shallow_group_bits = tiny.unchecked_group_bits = 6;
  tiny.group_min_members = tiny.class_group_min_members = 4;
  tiny.group_walk_step_bits = 11;  // host finishes and tails from the shared-memory walk
  auto gpu = MakeGpu(tiny, SmallSieveTables());
  std::mt19937_64 rng(Seed() + 8);
  // A low floor with a record table: groups walk and many numbers reach the ladder buffer.
  UnitSpec spec = SpecWithRecords(Pow2(40) + rng() % Pow2(38), Pow2(40), Kinds::kDelay, nullptr);
  spec.end = spec.begin + (uint64_t{1} << 24);
  spec = WithLowerFloor(spec, 400);
  ExpectSameOnTables(*SmallSieveTables(), *gpu, spec);
  EXPECT_GT(LastGpuSearchStats(*gpu).group_launches, 0u);
  EXPECT_GT(LastGpuSearchStats(*gpu).split_launches, 0u);
  // The same as a class search with holes just below the floor: class minima of split
  // group launches are merged.
  UnitSpec classes = spec;
  classes.kinds = Kinds::kDelayAndClass;
  for (uint32_t d = spec.floor - 20; d <= spec.floor; d += 3) classes.open_holes.push_back(d);
  ExpectSameOnTables(*SmallSieveTables(), *gpu, classes);
  EXPECT_GT(LastGpuSearchStats(*gpu).group_launches, 0u);
  EXPECT_GT(LastGpuSearchStats(*gpu).split_launches, 0u);
  // A unit near 2^99, far above the record table: every member walks long.
  spec = SpecWithRecords(Pow2(99) + rng() % Pow2(90), Pow2(99), Kinds::kDelay, nullptr);
  spec.end = spec.begin + (uint64_t{1} << 24);
  ExpectSameOnTables(*SmallSieveTables(), *gpu, spec);
  EXPECT_GT(LastGpuSearchStats(*gpu).group_launches, 0u);
  // 2^99 + 2^71 + 2^70 - 1 (1 mod 6, 1 mod 9: no mod rule skips it) takes 70 odd T-steps in
  // a row: past 2^128 after 51 of them (the end of the third 11-bit walk step, k + G = 18)
  // and after 66 (the end of the first two-step round of the 12-bit walk table). A table
  // step is exact whenever its result fits, so only a value at a step's end can leave 128 bits.
  const u128 wide = Pow2(99) + Pow2(71) + Pow2(70) - 1;
  ASSERT_EQ(wide % 6, 1u);
  ASSERT_EQ(wide % 9, 1u);
  spec = SpecWithRecords(wide - (uint64_t{1} << 23), wide + (uint64_t{1} << 23), Kinds::kDelay, nullptr);
  ExpectSameOnTables(*SmallSieveTables(), *gpu, spec);
  EXPECT_GT(LastGpuSearchStats(*gpu).host_finished, 0u);
  tiny.group_walk_step_bits = gpu::kPairStepBits;
  auto two_steps = MakeGpu(tiny, SmallSieveTables());
  ExpectSameOnTables(*SmallSieveTables(), *two_steps, spec);
  EXPECT_GT(LastGpuSearchStats(*two_steps).group_launches, 0u);
  EXPECT_GT(LastGpuSearchStats(*two_steps).host_finished, 0u);
}

// Units without a record table take the residue groups' full-delay walk (every member walks
// to the tail, no stop table): the same results as the CPU, around published records (their
// ladders are not empty) and high up (members that leave 128 bits).
TEST(GpuEngineTest, FullDelayGroupsMatchCpu) {
  REQUIRE_GPU();
  std::mt19937_64 rng(Seed() + 11);
  SCOPED_TRACE("seed " + std::to_string(Seed()));
  GpuEngineOptions o = GroupOptions(9, 4);
  o.positions_per_launch = uint64_t{1} << 20;
  o.self_record_bits = 0;  // walks to the tail (full delay)
  auto full = MakeGpu(o, SmallSieveTables());
  o.self_record_bits = 32;  // stops with the engine's own record table below 2^32
  auto own_table = MakeGpu(o, SmallSieveTables());
  std::vector<u128> centers;
  for (const Record& r : PublishedRecords()) {
    if (r.n > Pow2(50) && r.n % 2 == 1 && rng() % 5 == 0) centers.push_back(r.n);
  }
  centers.push_back(Pow2(70) + rng() % Pow2(60));
  centers.push_back(Pow2(99) + Pow2(71) + Pow2(70) - 1);  // leaves 128 bits
  // A unit 2^16 times smaller than the table's searches goes without it (same result).
  const UnitSpec tiny = FloorOnlySpec(centers.front(), centers.front() + (uint64_t{1} << 15), Kinds::kDelay);
  ExpectSameOnTables(*SmallSieveTables(), *own_table, tiny);
  EXPECT_EQ(LastGpuSearchStats(*own_table).self_record_bits, 0);
  for (u128 c : centers) {
    for (Kinds kinds : {Kinds::kDelay, Kinds::kDelayAndClass}) {
      UnitSpec spec = FloorOnlySpec(c - (uint64_t{1} << 23), c + (uint64_t{1} << 23), kinds);
      ASSERT_GT(spec.floor, 0u);
      ExpectSameOnTables(*SmallSieveTables(), *full, spec);
      EXPECT_GT(LastGpuSearchStats(*full).group_launches, 0u) << ToDecimal(c);
      EXPECT_EQ(LastGpuSearchStats(*full).self_record_bits, 0);
      // Open classes near the floor only: the class test can stop numbers too.
      if (kinds == Kinds::kDelayAndClass) spec = HolesNearTheFloor(spec);
      ExpectSameOnTables(*SmallSieveTables(), *own_table, spec);
      EXPECT_GT(LastGpuSearchStats(*own_table).group_launches, 0u) << ToDecimal(c);
      EXPECT_EQ(LastGpuSearchStats(*own_table).self_record_bits, 32) << ToDecimal(c);
    }
  }
  // A published record in such a unit is on its ladder (a candidate of the run that found it).
  Record rec;
  for (const Record& r : PublishedRecords()) {
    if (r.n % 2 == 1) rec = r;  // the last odd one (even records are derived, not computed)
  }
  ASSERT_GT(rec.n, Pow2(63));
  const UnitSpec spec = FloorOnlySpec(rec.n - (uint64_t{1} << 22), rec.n + (uint64_t{1} << 22), Kinds::kDelay);
  for (SearchEngine* engine : {full.get(), own_table.get()}) {
    const UnitResult r = GpuSearch(*engine, spec);
    EXPECT_NE(std::find(r.ladder.begin(), r.ladder.end(), rec), r.ladder.end()) << DescribeUnitResult(r);
  }
}


// Delay+class units whose bounds are multiples of 2^L skip the groups the join map marks,
// and count their tallies through their smallest twins: the results stay the CPU's. A low
// floor (400) at 2^40 leaves many delays open, so the tallies weigh many runs.
TEST(GpuEngineTest, JoinMapSkipsTwinsAndKeepsResults) {
  REQUIRE_GPU();
  std::mt19937_64 rng(Seed() + 9);
  SCOPED_TRACE("seed " + std::to_string(Seed()));
  GpuEngineOptions o = GroupOptions(9, 4);
  o.join_map_bits = 21;  // k + G with the 12-bit sieve
  o.positions_per_launch = uint64_t{1} << 20;
  auto gpu = MakeGpu(o, SmallSieveTables());
  for (int i = 0; i < 3; ++i) {
    UnitSpec spec = SpecWithRecords(Pow2(40) + ((rng() % Pow2(16)) << 21), Pow2(40), Kinds::kDelayAndClass, nullptr);
    spec.end = spec.begin + (uint64_t{1} << 24);
    spec = WithLowerFloor(spec, 400);
    for (uint32_t d = spec.floor - 20; d <= spec.floor; d += 3) spec.open_holes.push_back(d);
    ExpectSameOnTables(*SmallSieveTables(), *gpu, spec);
    const GpuSearchStats stats = LastGpuSearchStats(*gpu);
    EXPECT_EQ(stats.join_map_bits, 21);
    EXPECT_GT(stats.join_skipped_groups, 0u);
    UnitResult r = GpuSearch(*gpu, spec);
    EXPECT_GT(r.tally_count, 1000u);
    // Not aligned to 2^21: no skipping, same result.
    spec.begin += 2;
    ExpectSameOnTables(*SmallSieveTables(), *gpu, spec);
    EXPECT_EQ(LastGpuSearchStats(*gpu).join_skipped_groups, 0u);
  }
  // Delay-only units take the nine variants: with a record table and without one (full delay).
  // Their cycles (9 2^k numbers) do not divide 2^L, so the partial cycles at a unit's ends are
  // walked as positions beside the groups, and runs of twins can lie on both sides. The
  // first unit is one where that changed the tallies (seed 2256147056), the rest random.
  o.self_record_bits = 0;
  gpu = MakeGpu(o, SmallSieveTables());
  for (int i = -1; i < 3; ++i) {
    // One-step rounds at 2^44, two-step rounds (and the full-delay walk) from 2^45 up; 2^27
    // numbers: delay-only cycles (modulus 9) leave 4-member groups of G = 9, so k + G = L.
    const unsigned height = i < 0 ? 48 : 44 + 2 * i;
    const u128 begin = i < 0 ? u128{281559577919488ULL} : Pow2(height) + ((rng() % Pow2(16)) << 21);
    UnitSpec spec = SpecWithRecords(begin, Pow2(height), Kinds::kDelay, nullptr);
    spec.end = spec.begin + (uint64_t{1} << 27);
    spec = WithLowerFloor(spec, 400);
    // With a record table near the unit delay-only units stop most groups at once: no map
    // there; a table that ends 16 bits or more below the unit leaves it on.
    ExpectSameOnTables(*SmallSieveTables(), *gpu, spec);
    if (spec.records_complete_below < (spec.begin >> 16)) {
      EXPECT_GT(LastGpuSearchStats(*gpu).join_skipped_groups, 0u);
    } else {
      EXPECT_EQ(LastGpuSearchStats(*gpu).join_skipped_groups, 0u);
    }
    EXPECT_GT(GpuSearch(*gpu, spec).tally_count, 1000u);
    spec.known_records.clear();
    spec.records_complete_below = 0;
    ExpectSameOnTables(*SmallSieveTables(), *gpu, spec);
    EXPECT_EQ(LastGpuSearchStats(*gpu).join_map_bits, 21);
    EXPECT_GT(LastGpuSearchStats(*gpu).join_skipped_groups, 0u) << "height " << height;
    EXPECT_GT(GpuSearch(*gpu, spec).tally_count, 1000u);
  }
  // Host finishes inside a join unit (2^99 + 2^71 + 2^70 - 1 leaves 128 bits; its twins too).
  const u128 wide = Pow2(99) + Pow2(71) + Pow2(70) - 1;
  UnitSpec spec = HolesNearTheFloor(SpecWithRecords(((wide >> 21) << 21) - Pow2(23), Pow2(99), Kinds::kDelayAndClass, &rng));
  spec.end = spec.begin + Pow2(24);
  ExpectSameOnTables(*SmallSieveTables(), *gpu, spec);
  EXPECT_GT(LastGpuSearchStats(*gpu).host_finished, 0u);
  EXPECT_GT(LastGpuSearchStats(*gpu).join_skipped_groups, 0u);
  spec.kinds = Kinds::kDelay;
  spec.open_holes.clear();
  spec.end = spec.begin + Pow2(27);
  spec.known_records.clear();
  spec.records_complete_below = 0;
  ExpectSameOnTables(*SmallSieveTables(), *gpu, spec);
  EXPECT_GT(LastGpuSearchStats(*gpu).host_finished, 0u);
  EXPECT_GT(LastGpuSearchStats(*gpu).join_skipped_groups, 0u);
}


}  // namespace
}  // namespace collatz
