// GPU engine vs CPU engine: identical UnitResults on random units of every kind of range
// the engine must handle. GPU cases skip when no GPU is present (CI); the whole [1, 2^32)
// comparison runs only when COLLATZ_GPU_FULL=1 (on the GPU machine).
#include "gpu/gpu_engine.h"

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

// Search tables with a sieve of `sieve_bits` (19-bit step table, 20-bit tail), built once.
std::shared_ptr<const SearchTables> TablesWithSieve(int sieve_bits) {
  static std::map<int, std::shared_ptr<const SearchTables>> built;
  std::shared_ptr<const SearchTables>& tables = built[sieve_bits];
  if (tables == nullptr) {
    Status st = SearchTables::Build(sieve_bits, 19, 20, &tables);
    if (!st.ok()) ADD_FAILURE() << st.ToString();
  }
  return tables;
}

std::shared_ptr<const SearchTables> Tables() { return TablesWithSieve(19); }

const std::vector<Record>& PublishedRecords() { return testing_support::PublishedRecordsByN(); }

#define REQUIRE_GPU()                                                 \
  do {                                                                \
    if (GpuDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";      \
  } while (0)

std::unique_ptr<SearchEngine> MakeGpu(GpuEngineOptions options = {},
                                      std::shared_ptr<const SearchTables> tables = Tables()) {
  std::unique_ptr<SearchEngine> engine;
  Status st = MakeGpuEngine(tables, options, &engine);
  if (!st.ok()) {
    ADD_FAILURE() << st.ToString();
    std::abort();  // every GPU test needs its engine
  }
  return engine;
}

UnitResult CpuSearch(const UnitSpec& spec) {
  CpuEngine cpu(Tables(), CpuEngineOptions{});
  UnitResult r;
  Status st = cpu.Search(spec, &r);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return r;
}

UnitResult GpuSearch(SearchEngine& gpu, const UnitSpec& spec) {
  UnitResult r;
  Status st = gpu.Search(spec, &r);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return r;
}

// The floor, record table and (for class searches) some holes a unit at `begin` would be
// leased with, from the published records (complete below their last row).
UnitSpec SpecWithRecords(u128 begin, u128 end, Kinds kinds, std::mt19937_64* rng) {
  UnitSpec spec = testing_support::SpecBelowPublished(begin, end, kinds, true);
  // The published list is complete below its last row only.
  spec.records_complete_below = std::min(begin, PublishedRecords().back().n + 1);
  if (kinds == Kinds::kDelayAndClass && rng != nullptr && spec.floor > 50) {
    // Holes: a run just below the floor (where real holes are) and a few scattered ones.
    std::vector<uint32_t> holes;
    for (uint32_t d = spec.floor - 30; d <= spec.floor; ++d) {
      if ((*rng)() % 3 == 0) holes.push_back(d);
    }
    for (int i = 0; i < 10; ++i) holes.push_back(static_cast<uint32_t>((*rng)() % (spec.floor + 1)));
    std::sort(holes.begin(), holes.end());
    holes.erase(std::unique(holes.begin(), holes.end()), holes.end());
    spec.open_holes = holes;
  }
  return spec;
}

// Only the holes within 40 of the floor (a class unit at a real frontier).
UnitSpec HolesNearTheFloor(UnitSpec spec) {
  auto low = [&](uint32_t d) { return d + 40 < spec.floor; };
  spec.open_holes.erase(std::remove_if(spec.open_holes.begin(), spec.open_holes.end(), low), spec.open_holes.end());
  return spec;
}

void ExpectSame(SearchEngine& gpu, const UnitSpec& spec) {
  SCOPED_TRACE("unit [" + ToDecimal(spec.begin) + ", " + ToDecimal(spec.end) + ") floor " +
               std::to_string(spec.floor) + (spec.kinds == Kinds::kDelay ? " delay" : " delay+class") + " holes " +
               std::to_string(spec.open_holes.size()));
  const UnitResult cpu = CpuSearch(spec);
  const UnitResult got = GpuSearch(gpu, spec);
  EXPECT_EQ(got, cpu) << "gpu: " << DescribeUnitResult(got) << "\ncpu: " << DescribeUnitResult(cpu);
}

// Random per run; COLLATZ_TEST_SEED repeats a failed run's units.
uint64_t Seed() {
  static const uint64_t seed = [] {
    const char* fixed = std::getenv("COLLATZ_TEST_SEED");
    return fixed != nullptr ? std::strtoull(fixed, nullptr, 10) : uint64_t{std::random_device{}()};
  }();
  return seed;
}

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

// The device bound table: the CPU's with 3 sub-bits; finer tables never bound lower than
// the true R(v) (checked against the record list directly) and never higher than the CPU's.
TEST(GpuBoundTableTest, MatchesEarlyTerminationAndStaysValid) {
  std::mt19937_64 rng(Seed() + 9);
  for (unsigned bits : {20u, 40u, 60u, 64u}) {
    const UnitSpec spec = SpecWithRecords(Pow2(bits) + 12345, Pow2(bits) + 99999, Kinds::kDelayAndClass, &rng);
    const EarlyTermination et(spec);
    ASSERT_EQ(BuildBoundTable(spec, 3), et.bound_table());
    const std::vector<uint16_t> fine = BuildBoundTable(spec, 6);
    for (int i = 0; i < 20000; ++i) {
      const unsigned b = 1 + rng() % (bits + 1);
      const u128 v = Pow2(b - 1) + (static_cast<u128>(rng()) << 64 | rng()) % Pow2(b - 1);
      unsigned j = 0;
      if (b - 1 >= 6) j = static_cast<unsigned>(v >> (b - 1 - 6)) & 63;
      const uint16_t bound = fine[(b << 6) | j];
      if (b - 1 >= 6) EXPECT_LE(bound, et.Bound(v));  // narrower octaves are one bucket
      if (bound == EarlyTermination::kNoBound) continue;
      uint32_t r = 0;  // R(v): the delay of the last record <= v
      for (const Record& rec : spec.known_records) {
        if (rec.n <= v) r = rec.delay;
      }
      EXPECT_GE(bound, r) << ToDecimal(v);
    }
  }
}

u128 Value(const ulonglong2& e) { return u128{e.y} << 64 | e.x; }

// The stop thresholds: v < stop_below[s] exactly when s + R(v) <= floor with R known (R
// taken from the record list directly); the group walk's table, indexed by v mod 4, stops v
// exactly when v >> e < stop_below[s + e] (e the zeros it counts), or, for v = 2 (mod 3),
// also when (2v - 1) / 3 < stop_below[s - 2]; it never stops a value whose true delay is too
// long; and before tail_from every value in the tail stops.
TEST(GpuStopTableTest, WalkCheckIsExactAndSkipsOnlyStoppedTailValues) {
  std::mt19937_64 rng(Seed() + 11);
  auto random_below = [&rng](unsigned bits) {
    const u128 x = static_cast<u128>(rng()) << 64 | rng();
    return bits >= 128 ? x : x % Pow2(bits);
  };
  for (unsigned bits : {30u, 60u, 66u}) {
    const UnitSpec spec = SpecWithRecords(Pow2(bits) + 777, Pow2(bits) + 99999, Kinds::kDelay, &rng);
    const std::vector<ulonglong2> stop = BuildStopTable(spec, spec.floor);
    ASSERT_EQ(stop.size(), spec.floor + 2u);
    EXPECT_EQ(Value(stop.back()), 0u);
    for (size_t s = 1; s < stop.size(); ++s) ASSERT_LE(Value(stop[s]), Value(stop[s - 1])) << s;
    for (int i = 0; i < 20000; ++i) {
      const uint32_t s = static_cast<uint32_t>(rng() % (spec.floor + 1));
      const u128 v = random_below(1 + rng() % (bits + 2));
      uint32_t r = 0;  // R(v)
      for (const Record& rec : spec.known_records) {
        if (rec.n <= v) r = rec.delay;
      }
      const bool can_stop = v < spec.records_complete_below && s + r <= spec.floor;
      EXPECT_EQ(v < Value(stop[s]), can_stop) << ToDecimal(v) << " s=" << s;
    }
    for (int tail_bits : {16, 24}) {
      const WalkStopTable walk = BuildWalkStopTable(stop, tail_bits);
      const size_t rows = stop.size() + gpu::kWalkExtraRows;
      ASSERT_EQ(walk.entries.size(), rows << gpu::kWalkRowBits);
      ASSERT_EQ(walk.last_row, rows - 1);
      const uint32_t m = (1u << gpu::kWalkCheckBits) - 1;
      auto entry = [&](size_t s, uint32_t value_class, u128 v) {
        const size_t row = std::min<size_t>(s, walk.last_row);
        return Value(walk.entries[(row << gpu::kWalkRowBits) + (value_class << gpu::kWalkCheckBits) +
                                  (static_cast<uint32_t>(v) & m)]);
      };
      auto stop_at = [&](size_t s, size_t back) {
        return s >= back ? Value(stop[std::min(s - back, stop.size() - 1)]) : u128{0};
      };
      for (int i = 0; i < 40000; ++i) {
        const size_t s = rng() % (rows + 3);  // rows past the last one read it
        // Values near a shifted threshold, near a predecessor threshold, and random ones.
        const uint32_t e0 = static_cast<uint32_t>(rng() % 3);
        u128 v = Value(stop[std::min(s + e0, stop.size() - 1)]) << e0;
        if (i % 3 == 1 && s >= 2) v = 3 * Value(stop[std::min(s - 2, stop.size() - 1)]) / 2;
        if (i % 6 == 1 && s >= 5) v = 9 * stop_at(s, 5) / 8;
        if (i % 6 == 4 && s >= 4) v = 9 * stop_at(s, 4) / 4;
        v = (i % 3 == 0) ? random_below(1 + rng() % (bits + 4)) : v + rng() % 9;
        if (i % 3 != 0 && v >= 4) v -= 4;
        const uint32_t e = gpu::WalkCheckShift(static_cast<uint32_t>(v) & m);
        ASSERT_EQ(v & ((u128{1} << e) - 1), 0u);  // v has those zeros
        const bool by_zeros = (v >> e) < Value(stop[std::min(s + e, stop.size() - 1)]);
        EXPECT_EQ(v < entry(s, 0, v), by_zeros) << ToDecimal(v) << " s=" << s;
        // The predecessor bounds: exact up to the rounding of the thresholds (floor(3L / 2),
        // floor(9L / 8), floor(9L / 4)), which stop a value only when its predecessor is below L.
        const bool by_two = v % 3 == 2 && s >= 2 && (2 * v - 1) / 3 < stop_at(s, 2);
        if (v % 3 == 2 && v >= 5) {
          EXPECT_EQ(v < entry(s, 1, v), by_zeros || by_two) << ToDecimal(v) << " s=" << s;
        }
        if (v % 9 == 4) {
          const bool by_five = s >= 5 && (8 * v - 5) / 9 < stop_at(s, 5);
          const bool stops = v < entry(s, 2, v);
          EXPECT_TRUE(!stops || by_zeros || by_five) << ToDecimal(v) << " s=" << s;
          EXPECT_TRUE(stops || !(by_zeros || (s >= 5 && v < 9 * stop_at(s, 5) / 8))) << ToDecimal(v) << " s=" << s;
        }
        if (v % 9 == 8) {
          const bool by_four = s >= 4 && (4 * v - 5) / 9 < stop_at(s, 4);
          const bool stops = v < entry(s, 3, v);
          EXPECT_TRUE(!stops || by_zeros || by_two || by_four) << ToDecimal(v) << " s=" << s;
          EXPECT_TRUE(stops || !(by_zeros || by_two || (s >= 4 && v < 9 * stop_at(s, 4) / 4))) << ToDecimal(v) << " s=" << s;
        }
      }
      for (size_t s = 0; s < walk.tail_from; ++s) {
        for (uint32_t r = 0; r < (1u << gpu::kWalkRowBits); ++r) {
          ASSERT_GE(Value(walk.entries[(s << gpu::kWalkRowBits) + r]), Pow2(tail_bits)) << s;
        }
      }
      const size_t first_below = walk.tail_from + gpu::kWalkCheckBits;
      if (walk.tail_from > 0 && first_below < stop.size()) EXPECT_LT(Value(stop[first_below]), Pow2(tail_bits));
      // Soundness against true delays: a value the check stops after s steps has s + delay(v)
      // <= floor (v small enough to compute; v = 2 (mod 3) at least 5, as the walk's are).
      for (int i = 0; i < 3000; ++i) {
        const size_t s = rng() % (rows + 3);
        const u128 v = 5 + random_below(1 + rng() % std::min(bits, 40u));
        // The value's class, or (as a step that knows less says) a weaker one.
        uint32_t value_class = (v % 3 == 2 ? 1 : 0) | (v % 9 == 4 || v % 9 == 8 ? 2 : 0);
        if (rng() % 3 == 0) value_class &= 1;
        if (v < entry(s, value_class, v)) {
          EXPECT_LE(s + SlowDelay(v), spec.floor) << ToDecimal(v) << " s=" << s << " class=" << value_class;
        }
      }
    }
  }
  // A threshold that drops far below the tail at s = 2: a value in the tail is not stopped at
  // s = 1 when it counts a zero (2^20 << 1 < 2^24), so the walk must test the tail from s = 1
  // (s = 0 marks an ended member; a walking one has s >= k + G >= 1).
  const uint64_t big = uint64_t{1} << 40, small = uint64_t{1} << 20;
  const std::vector<ulonglong2> drop = {{big, 0}, {big, 0}, {small, 0}, {small, 0}, {0, 0}};
  EXPECT_EQ(BuildWalkStopTable(drop, 24).tail_from, 1u);
  EXPECT_EQ(BuildWalkStopTable({{big, 0}, {big, 0}, {big, 0}, {big, 0}, {small, 0}, {0, 0}}, 24).tail_from, 2u);
  // Saturation: a threshold that would leave 128 bits when shifted stops every even value.
  const std::vector<ulonglong2> huge(4, ulonglong2{5, uint64_t{1} << 63});
  const WalkStopTable walk = BuildWalkStopTable(huge, 24);
  EXPECT_EQ(Value(walk.entries[2]), ~u128{0});  // r = 2: e = 1
  EXPECT_EQ(Value(walk.entries[0]), ~u128{0});  // r = 0: e = 2
  EXPECT_EQ(Value(walk.entries[1]), Value(huge[0]));
  // The two-step walk's table: kPairStepOffset rows that stop every value (an idle lane's
  // round, at most 4 S steps from s = 0, ends in them), then the walk's rows unchanged.
  const std::vector<ulonglong2> check = PairWalkCheckTable(walk);
  const size_t offset = size_t{gpu::kPairStepOffset} << gpu::kWalkRowBits;
  ASSERT_EQ(check.size(), offset + walk.entries.size());
  for (size_t i = 0; i < check.size(); ++i) {
    EXPECT_EQ(Value(check[i]), i < offset ? ~u128{0} : Value(walk.entries[i - offset])) << i;
  }
  EXPECT_LT(4u * gpu::kPairStepBits, gpu::kPairStepOffset);
}

// The group walk's two steps in one multiply (GroupWalkPairStep), on the host with the 12-bit
// table: for v = 2^24 H + 2^12 L + i1, t = 3^p1 L + c1 < 2^32 gives the second step's entry
// (t mod 2^12) and carry q = t >> 12, and (3^p1 3^p2) H + (3^p2 q + c2) equals the two table
// steps; the shared entry's packing round-trips; a step's value class (2 mod 3, 4 or 8 mod 9) holds;
// the fast path (3^(p1 + p2) < 2^32, H < 2^96) stays below 2^128.
TEST(GpuPairStepTest, TwoTableStepsInOneMultiply) {
  constexpr int kBits = gpu::kPairStepBits;
  const StepTable table(kBits);
  std::mt19937_64 rng(Seed() + 13);
  auto step = [&](u128 x) { return kPow3[table.p(x & table.mask())] * (x >> kBits) + table.c(x & table.mask()); };
  for (uint64_t i = 0; i < table.packed().size(); ++i) {
    const uint32_t steps = kBits + table.p(i), value_class = gpu::StepValueClass(table.p(i), table.c(i));
    const uint32_t x = gpu::PackPairStep(table.c(i), steps, value_class);
    ASSERT_EQ(x >> gpu::kPairStepCShift, table.c(i));
    ASSERT_EQ(x & 0x7F, steps);
    ASSERT_EQ((x >> 7) & 3, value_class);
    ASSERT_EQ(value_class & 1, gpu::StepMakesTwoMod3(table.p(i), table.c(i)));
  }
  int fast = 0;
  for (int i = 0; i < 200000; ++i) {
    const unsigned bits = 2 * kBits + static_cast<unsigned>(rng() % 77);  // v in [2^24, 2^100)
    const u128 v = Pow2(bits - 1) + (static_cast<u128>(rng()) << 64 | rng()) % Pow2(bits - 1);
    const uint64_t i1 = static_cast<uint64_t>(v) & table.mask();
    const uint64_t m1 = kPow3[table.p(i1)], c1 = table.c(i1);
    const uint64_t t = m1 * (static_cast<uint64_t>(v >> kBits) & table.mask()) + c1;
    ASSERT_LT(t, uint64_t{1} << 32);
    const u128 first = step(v);
    const uint64_t i2 = t & table.mask();
    ASSERT_EQ(static_cast<uint64_t>(first) & table.mask(), i2) << ToDecimal(v);
    const uint64_t m2 = kPow3[table.p(i2)], c2 = table.c(i2);
    const u128 fused = static_cast<u128>(m1 * m2) * (v >> (2 * kBits)) + (m2 * (t >> kBits) + c2);
    ASSERT_EQ(fused, step(first)) << ToDecimal(v);
    const uint32_t value_class = gpu::StepValueClass(table.p(i2), c2);
    if ((value_class & 1) != 0) ASSERT_EQ(fused % 3, 2u) << ToDecimal(v);
    if (value_class >= 2) ASSERT_EQ(fused % 9, value_class == 2 ? 4u : 8u) << ToDecimal(v);
    if (m1 * m2 < (uint64_t{1} << 32)) ++fast;
  }
  EXPECT_GT(fast, 190000);  // 3^(p1 + p2) >= 2^32 (p1 + p2 > 20) is rare
  // The fast path's largest product and addend: (2^96 - 1)(2^32 - 1) + 3^12 (2^20 + 1) < 2^128.
  const u128 largest = (Pow2(96) - 1) * ((u128{1} << 32) - 1);
  EXPECT_GT(kU128Max - largest, static_cast<u128>(kPow3[kBits]) * ((1u << 20) + 1));
}

// The join map against its definition, pair by pair: a lift r of an odd k-bit survivor has
// weight = the number of lifts reaching the same value after L T-steps (for every h >= 1:
// (p, c) read off T^L at h = 1 and h = 2) if it is their smallest, else 0; and a lift of
// weight 0 has the delay of its smallest twin.
TEST(JoinMapTest, HostMapMatchesPairwiseDefinition) {
  constexpr int k = 8, L = 14;
  std::shared_ptr<const Sieve> sieve;
  ASSERT_TRUE(Sieve::Generate(k, &sieve).ok());
  std::vector<uint8_t> map;
  ASSERT_TRUE(BuildJoinMapOnHost(sieve->residues(), k, L, &map).ok());
  ASSERT_EQ(map.size(), size_t{1} << (L - 1));
  auto after_l = [](u128 n) {
    for (int j = 0; j < L; ++j) n = (n & 1) != 0 ? (3 * n + 1) / 2 : n / 2;
    return n;
  };
  std::vector<uint32_t> lifts;
  std::vector<std::pair<u128, u128>> keys;  // (3^p, c)
  for (uint32_t b = 0; b < (1u << (L - k)); ++b) {
    for (const uint64_t low : sieve->residues()) {
      const uint32_t r = static_cast<uint32_t>(low + (uint64_t{b} << k));
      const u128 one = after_l(Pow2(L) + r), two = after_l(2 * Pow2(L) + r);
      lifts.push_back(r);
      keys.emplace_back(two - one, one - (two - one));
    }
  }
  size_t total = 0, zero = 0;
  for (size_t i = 0; i < lifts.size(); ++i) {
    uint32_t smallest = lifts[i], count = 0;
    for (size_t j = 0; j < lifts.size(); ++j) {
      if (keys[j] == keys[i]) {
        ++count;
        smallest = std::min(smallest, lifts[j]);
      }
    }
    const uint32_t want = smallest == lifts[i] ? count : 0;
    ASSERT_EQ(map[lifts[i] >> 1], want) << "r " << lifts[i];
    total += map[lifts[i] >> 1];
    if (want == 0) {
      ++zero;
      for (const u128 h : {u128{1}, u128{77}, Pow2(40) + 3}) {
        ASSERT_EQ(SlowDelay(h * Pow2(L) + lifts[i]), SlowDelay(h * Pow2(L) + smallest)) << "r " << lifts[i];
      }
    }
  }
  EXPECT_EQ(total, lifts.size());  // every lift is counted once, by its run's smallest member
  EXPECT_GT(zero, lifts.size() / 20);  // the map does skip numbers (8% here, 17% of walkers at 2^60, L = 32)
  // Bad input is refused.
  EXPECT_FALSE(BuildJoinMapOnHost(sieve->residues(), k, k, &map).ok());
  EXPECT_FALSE(BuildJoinMapOnHost(sieve->residues(), k, 35, &map).ok());
  EXPECT_FALSE(BuildJoinMapOnHost({3, 2}, 2, 8, &map).ok());
}

// The delay-only variants: for H = t (mod 9), runs of the lifts whose N = 2^L H + r the mod-9
// rule examines; each run's smallest examined lift holds the run's examined count, the
// others 0 (checked pairwise against delays), and every examined lift is counted once.
TEST(JoinMapTest, DelayVariantsCountOnlyExaminedTwins) {
  constexpr int k = 8, L = 14;
  std::shared_ptr<const Sieve> sieve;
  ASSERT_TRUE(Sieve::Generate(k, &sieve).ok());
  std::vector<uint8_t> all;
  ASSERT_TRUE(BuildJoinMapOnHost(sieve->residues(), k, L, &all).ok());
  size_t skipped_somewhere = 0;
  for (int t = 0; t < 9; ++t) {
    std::vector<uint8_t> map;
    ASSERT_TRUE(BuildJoinMapOnHost(sieve->residues(), k, L, &map, t).ok());
    const u128 H = 9 * 1000 + t;  // any H = t (mod 9)
    auto examined = [&](uint64_t r) { return OddNumberIsComputed(static_cast<unsigned>((H * Pow2(L) + r) % 9), Kinds::kDelay, 9); };
    // Runs of the full map, regrouped: members with equal delay paths share (p, c).
    std::map<std::pair<uint32_t, uint64_t>, std::vector<uint64_t>> runs;
    for (uint32_t b = 0; b < (1u << (L - k)); ++b) {
      for (const uint64_t low : sieve->residues()) {
        const uint64_t r = low + (uint64_t{b} << k);
        uint32_t p = 0;
        uint64_t c = 0;
        TStepsOfResidue(r, L, &p, &c);
        runs[{p, c}].push_back(r);
      }
    }
    size_t total = 0, examined_count = 0;
    for (const auto& [key, members] : runs) {
      std::vector<uint64_t> ex;
      for (uint64_t r : members) {
        if (examined(r)) ex.push_back(r);
      }
      examined_count += ex.size();
      for (size_t i = 0; i < ex.size(); ++i) {
        ASSERT_EQ(map[ex[i] >> 1], i == 0 ? ex.size() : 0u) << "t " << t << " r " << ex[i];
        total += map[ex[i] >> 1];
        if (i > 0) {
          ++skipped_somewhere;
          ASSERT_EQ(SlowDelay(H * Pow2(L) + ex[i]), SlowDelay(H * Pow2(L) + ex[0]));
        }
      }
    }
    EXPECT_EQ(total, examined_count) << "t " << t;
  }
  EXPECT_GT(skipped_somewhere, 100u);
  std::vector<uint8_t> map;
  EXPECT_FALSE(BuildJoinMapOnHost(sieve->residues(), k, L, &map, 9).ok());
}

TEST(GpuJoinMapTest, DeviceMapEqualsHostMap) {
  REQUIRE_GPU();
  for (const auto& [k, L] : {std::pair{12, 22}, std::pair{19, 26}}) {
    const std::vector<uint64_t>& residues = TablesWithSieve(k)->sieve->residues();
    std::vector<uint8_t> want;
    ASSERT_TRUE(BuildJoinMapOnHost(residues, k, L, &want).ok());
    DeviceArray<uint8_t> map;
    const Status st = BuildJoinMap(residues, k, L, &map);
    ASSERT_TRUE(st.ok()) << st.ToString();
    std::vector<uint8_t> got(want.size());
    ASSERT_EQ(map.size(), got.size());
    ASSERT_EQ(cudaMemcpy(got.data(), map.get(), got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_TRUE(got == want) << "k " << k << " L " << L;
    // The nine delay-only variants, one after the other.
    DeviceArray<uint8_t> maps;
    const Status delay_st = BuildDelayJoinMaps(residues, k, L, &maps);
    ASSERT_TRUE(delay_st.ok()) << delay_st.ToString();
    ASSERT_EQ(maps.size(), got.size() * 9);
    for (int t = 0; t < 9; ++t) {
      ASSERT_TRUE(BuildJoinMapOnHost(residues, k, L, &want, t).ok());
      ASSERT_EQ(cudaMemcpy(got.data(), maps.get() + got.size() * t, got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_TRUE(got == want) << "k " << k << " L " << L << " H mod 9 = " << t;
    }
  }
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

// Residue groups (units with a floor, both kinds): a 12-bit sieve makes cycles short, so
// units of 2^26 numbers hold enough whole cycles for groups of every width tried.
std::shared_ptr<const SearchTables> SmallSieveTables() { return TablesWithSieve(12); }

void ExpectSameOnTables(const SearchTables& tables, SearchEngine& gpu, const UnitSpec& spec) {
  SCOPED_TRACE("unit [" + ToDecimal(spec.begin) + ", " + ToDecimal(spec.end) + ") floor " + std::to_string(spec.floor));
  CpuEngine cpu(std::shared_ptr<const SearchTables>(&tables, [](const SearchTables*) {}), CpuEngineOptions{});
  UnitResult want;
  ASSERT_TRUE(cpu.Search(spec, &want).ok());
  const UnitResult got = GpuSearch(gpu, spec);
  EXPECT_EQ(got, want) << "gpu: " << DescribeUnitResult(got) << "\ncpu: " << DescribeUnitResult(want);
}

TEST(GpuEngineTest, ResidueGroupsMatchCpu) {
  REQUIRE_GPU();
  std::mt19937_64 rng(Seed() + 7);
  SCOPED_TRACE("seed " + std::to_string(Seed()));
  for (int bits : {5, 8, 9, 11}) {
    GpuEngineOptions o;
    o.group_bits = o.class_group_bits = o.shallow_group_bits = o.unchecked_group_bits = bits;
    o.group_min_members = o.class_group_min_members = 4;
    o.positions_per_launch = uint64_t{1} << (18 + bits % 3);  // several launches, uneven entry ranges
    // The walk's table in shared memory (12 bits: two steps a round from 2^44 up, or one),
    // or in L2.
    o.group_walk_step_bits = bits == 8 || bits == 9 ? 12 : bits == 11 ? 7 : 0;
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
    GpuEngineOptions o;
    o.group_bits = o.class_group_bits = o.shallow_group_bits = o.unchecked_group_bits = bits;
    o.group_min_members = o.class_group_min_members = 2;
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
    GpuEngineOptions o;
    o.group_bits = o.class_group_bits = o.shallow_group_bits = o.unchecked_group_bits = 16;
    o.group_min_members = o.class_group_min_members = 2;
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

// The deepest residue groups (kMaxGroupBits: their step entries' c and 3^p need 32 bits, and
// the step between members comes near 2^64) against the CPU, delay-only at two heights and
// delay+class at one, on units the engine plans in groups of that width (asserted).
TEST(GpuEngineTest, DeepestGroupsMatchCpu) {
  REQUIRE_GPU();
  std::mt19937_64 rng(Seed() + 19);
  SCOPED_TRACE("seed " + std::to_string(Seed()));
  const auto tables = TablesWithSieve(5);
  GpuEngineOptions o;
  o.group_bits = o.class_group_bits = o.shallow_group_bits = o.unchecked_group_bits = gpu::kMaxGroupBits;
  o.group_min_members = o.class_group_min_members = 2;
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
  GpuEngineOptions o;
  o.group_bits = o.class_group_bits = o.shallow_group_bits = o.unchecked_group_bits = G;
  o.group_min_members = o.class_group_min_members = 2;
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
  spec.floor = 400;
  // The record table stays complete below its first dropped record.
  while (!spec.known_records.empty() && spec.known_records.back().delay > spec.floor) {
    spec.records_complete_below = spec.known_records.back().n;
    spec.known_records.pop_back();
  }
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
  tiny.group_walk_step_bits = 12;
  auto two_steps = MakeGpu(tiny, SmallSieveTables());
  ExpectSameOnTables(*SmallSieveTables(), *two_steps, spec);
  EXPECT_GT(LastGpuSearchStats(*two_steps).group_launches, 0u);
  EXPECT_GT(LastGpuSearchStats(*two_steps).host_finished, 0u);
}

// A unit leased without trust (docs/FLOOR.md): the floor is the largest delay of the published
// records below it (recomputed, not trusted), no record table, so no early termination; class
// units with every class up to the floor open but those the records and their doublings fill.
UnitSpec FloorOnlySpec(u128 begin, u128 end, Kinds kinds) {
  UnitSpec spec;
  spec.begin = begin;
  spec.end = end;
  spec.kinds = kinds;
  std::vector<bool> filled;
  for (const Record& r : PublishedRecords()) {
    if (r.n >= begin) break;
    spec.floor = std::max(spec.floor, r.delay);
  }
  if (kinds == Kinds::kDelayAndClass) {
    filled.assign(spec.floor + 1, false);
    for (const Record& r : PublishedRecords()) {
      for (u128 m = r.n, d = r.delay; m < begin && d <= spec.floor; m *= 2, ++d) filled[static_cast<size_t>(d)] = true;
    }
    for (uint32_t d = 0; d <= spec.floor; ++d) {
      if (!filled[d]) spec.open_holes.push_back(d);
    }
  }
  return spec;
}

// Units without a record table take the residue groups' full-delay walk (every member walks
// to the tail, no stop table): the same results as the CPU, around published records (their
// ladders are not empty) and high up (members that leave 128 bits).
TEST(GpuEngineTest, FullDelayGroupsMatchCpu) {
  REQUIRE_GPU();
  std::mt19937_64 rng(Seed() + 11);
  SCOPED_TRACE("seed " + std::to_string(Seed()));
  GpuEngineOptions o;
  o.group_bits = o.class_group_bits = o.shallow_group_bits = o.unchecked_group_bits = 9;
  o.group_min_members = o.class_group_min_members = 4;
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

// Delay+class units whose bounds are multiples of 2^L skip the groups the join map marks,
// and count their tallies through their smallest twins: the results stay the CPU's. A low
// floor (400) at 2^40 leaves many delays open, so the tallies weigh many runs.
TEST(GpuEngineTest, JoinMapSkipsTwinsAndKeepsResults) {
  REQUIRE_GPU();
  std::mt19937_64 rng(Seed() + 9);
  SCOPED_TRACE("seed " + std::to_string(Seed()));
  GpuEngineOptions o;
  o.group_bits = o.class_group_bits = o.shallow_group_bits = o.unchecked_group_bits = 9;
  o.group_min_members = o.class_group_min_members = 4;
  o.join_map_bits = 21;  // k + G with the 12-bit sieve
  o.positions_per_launch = uint64_t{1} << 20;
  auto gpu = MakeGpu(o, SmallSieveTables());
  for (int i = 0; i < 3; ++i) {
    UnitSpec spec = SpecWithRecords(Pow2(40) + ((rng() % Pow2(16)) << 21), Pow2(40), Kinds::kDelayAndClass, nullptr);
    spec.end = spec.begin + (uint64_t{1} << 24);
    spec.floor = 400;
    while (!spec.known_records.empty() && spec.known_records.back().delay > spec.floor) {
      spec.records_complete_below = spec.known_records.back().n;
      spec.known_records.pop_back();
    }
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
    spec.floor = 400;
    while (!spec.known_records.empty() && spec.known_records.back().delay > spec.floor) {
      spec.records_complete_below = spec.known_records.back().n;
      spec.known_records.pop_back();
    }
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
