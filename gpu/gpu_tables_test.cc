// The device tables against their definitions: the bound and stop tables, the two-step
// walk's pair entries, the join map (host and device). Part of gpu_engine_test; GPU cases
// skip when no GPU is present (CI).
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
  // The narrow check's tail starts where a threshold falls below 2^32 (big is 2^40).
  const uint64_t mid = uint64_t{1} << 30;
  const std::vector<ulonglong2> falls = {{big, 0}, {big, 0}, {big, 0}, {big, 0}, {big, 0}, {mid, 0}, {small, 0}, {0, 0}};
  EXPECT_EQ(WalkTailFrom(falls, 24), 4u);  // s = 6 less the largest shift, 2
  EXPECT_EQ(WalkTailFrom(falls, 32), 3u);  // s = 5 less 2
  EXPECT_EQ(WalkTailFrom(falls, 32), BuildWalkStopTable(falls, 32).tail_from);
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

// The two-step walk's table with 2^shift step counts to a row (gpu::kWalkCheckShift): the row
// read for s, (s & ~(2^shift - 1)), holds entry by entry the smallest threshold of its 2^shift
// rows (not always the last one's: a predecessor bound starts at s = 4 or 5), so it stops no
// value the row of s would not; the library's kernels read that row (WalkCheckRowOfLibrary,
// the exactness suite's mutation 9); the offset rows still stop every value, and before
// PairWalkTailFrom every value in the tail stops.
TEST(GpuStopTableTest, SharedCheckRowsNeverStopMore) {
  std::mt19937_64 rng(Seed() + 12);
  const UnitSpec spec = SpecWithRecords(Pow2(60) + 777, Pow2(60) + 99999, Kinds::kDelay, &rng);
  const std::vector<ulonglong2> stop = BuildStopTable(spec, spec.floor);
  const int tail_bits = 24;
  const WalkStopTable walk = BuildWalkStopTable(stop, tail_bits);
  const std::vector<ulonglong2> exact = PairWalkCheckTable(walk);
  const size_t row = size_t{1} << gpu::kWalkRowBits, rows = exact.size() / row;
  const size_t last = walk.last_row + gpu::kPairStepOffset;
  ASSERT_EQ(last, rows - 1);
  EXPECT_EQ(PairWalkTailFrom(walk.tail_from, 0), walk.tail_from);
  for (int shift = 1; shift <= 6; ++shift) {
    const std::vector<ulonglong2> shared = PairWalkCheckTable(walk, shift);
    ASSERT_EQ(shared.size(), exact.size());
    const size_t mask = ~((size_t{1} << shift) - 1);
    size_t looser = 0;
    for (size_t s = 0; s < rows + 3; ++s) {
      const size_t read = std::min(s & mask, last), own = std::min(s, last);
      const size_t end = std::min((s & mask) + (size_t{1} << shift) - 1, last);
      for (size_t r = 0; r < row; ++r) {
        const u128 got = Value(shared[read * row + r]);
        ASSERT_LE(got, Value(exact[own * row + r])) << "shift " << shift << " s " << s << " r " << r;
        u128 smallest = ~u128{0};
        for (size_t t = read; t <= std::max(end, read); ++t) smallest = std::min(smallest, Value(exact[t * row + r]));
        ASSERT_EQ(got, smallest) << "shift " << shift << " s " << s << " r " << r;
        looser += got < Value(exact[own * row + r]);
        if (s < gpu::kPairStepOffset) ASSERT_EQ(got, ~u128{0}) << "shift " << shift << " s " << s;
      }
    }
    EXPECT_GT(looser, 0u) << "shift " << shift;
    if (shift == gpu::kWalkCheckShift) {
      // The row the library's kernels read (gpu/kernels/walk_check_row.cuh) is one of those.
      for (uint32_t s = 0; s < rows + 3; ++s) {
        ASSERT_EQ(gpu::WalkCheckRowOfLibrary(s, static_cast<uint32_t>(last)), std::min(s & mask, last)) << "s " << s;
      }
    }
    const uint32_t tail_from = PairWalkTailFrom(walk.tail_from, shift);
    EXPECT_GE(tail_from, 1u);
    EXPECT_LE(tail_from, walk.tail_from);
    for (size_t s = 0; s < tail_from; ++s) {
      const size_t read = std::min((s + gpu::kPairStepOffset) & mask, last);
      for (size_t r = 0; r < row; ++r) {
        ASSERT_GE(Value(shared[read * row + r]), Pow2(tail_bits)) << "shift " << shift << " s " << s;
      }
    }
  }
}

// The check that looks L T-steps ahead (WalkLookaheadTable, LaunchParams::walk_check_bits):
// each entry is at least the walk's own for (class, v mod 4); a v below it, of that class and
// residue mod 2^L, stops by the definition (R(w) from the record list, taken directly) at the
// check itself (the walk's entry) or after one of its next L T-steps (w below its step count's
// threshold, or a smaller predecessor (2w - 1) / 3, (8w - 5) / 9 or (4w - 5) / 9 of w's class
// below the threshold of 2, 5 or 4 steps fewer); small values also by their true delays.
// Looking further stops more.
TEST(GpuStopTableTest, LookaheadCheckStopsOnlyWhatItsPathStops) {
  std::mt19937_64 rng(Seed() + 16);
  for (unsigned bits : {60u, 66u}) {
    const UnitSpec spec = SpecWithRecords(Pow2(bits) + 4242, Pow2(bits) + 99999, Kinds::kDelay, &rng);
    const std::vector<ulonglong2> stop = BuildStopTable(spec, spec.floor);
    const WalkStopTable walk = BuildWalkStopTable(stop, 24);
    const size_t rows = walk.entries.size() >> gpu::kWalkRowBits;
    auto r_of = [&](u128 w) {  // R(w), or past the table: none
      uint32_t r = 0;
      for (const Record& rec : spec.known_records) {
        if (rec.n <= w) r = rec.delay;
      }
      return r;
    };
    auto stops_at = [&](size_t sigma, u128 w) {  // the exact test, with w's predecessors
      auto plain = [&](size_t at, u128 x) { return x < spec.records_complete_below && at + r_of(x) <= spec.floor; };
      if (plain(sigma, w)) return true;
      if (w < 5) return false;
      // A predecessor has w's delay plus 2, 5 or 4: it stops w when it would stop that many steps earlier.
      return (w % 3 == 2 && sigma >= 2 && plain(sigma - 2, (2 * w - 1) / 3)) ||
             (w % 9 == 4 && sigma >= 5 && plain(sigma - 5, (8 * w - 5) / 9)) ||
             (w % 9 == 8 && sigma >= 4 && plain(sigma - 4, (4 * w - 5) / 9));
    };
    size_t previous_stops = 0;
    for (int L = gpu::kMinWalkCheckBits; L <= gpu::kMaxWalkCheckBits; ++L) {
      const std::vector<ulonglong2> ahead = WalkLookaheadTable(walk, L);
      const size_t row = size_t{4} << L;
      ASSERT_EQ(ahead.size(), rows * row);
      size_t larger = 0;
      for (size_t s = 0; s < rows; ++s) {
        for (uint32_t c = 0; c < 4; ++c) {
          for (uint32_t u = 0; u < (1u << L); ++u) {
            const u128 got = Value(ahead[s * row + (c << L) + u]);
            const u128 own = Value(walk.entries[(s << gpu::kWalkRowBits) + (c << gpu::kWalkCheckBits) + (u & 3)]);
            ASSERT_GE(got, own) << "L " << L << " s " << s << " c " << c << " u " << u;
            larger += got > own;
          }
        }
      }
      EXPECT_GT(larger, previous_stops) << "L " << L;  // each width stops more than the one before
      previous_stops = larger;
      const uint32_t modulus = 9u << L;
      for (int i = 0; i < 3000; ++i) {
        const size_t s = rng() % rows;
        const uint32_t c = static_cast<uint32_t>(rng() % 4), u = static_cast<uint32_t>(rng() % (1u << L));
        const u128 limit = Value(ahead[s * row + (c << L) + u]);
        if (limit == 0 || limit == ~u128{0}) continue;
        // The largest v below the entry with v = u (mod 2^L) and of class c (c = 1: v = 2 mod 3;
        // 2: 4 mod 9; 3: 8 mod 9; 0: any), then a few below it.
        auto of_class = [&](u128 v) {
          const unsigned r = static_cast<unsigned>(v % 9);
          return c == 0 || (c == 1 && r % 3 == 2) || (c == 2 && r == 4) || (c == 3 && r == 8);
        };
        u128 v = limit - 1;
        int found = 0;
        for (uint32_t j = 0; j < 4 * modulus && v >= 5 && found < 3; ++j, --v) {
          if ((static_cast<uint32_t>(v) & ((1u << L) - 1)) != u || !of_class(v)) continue;
          ++found;
          bool ok = v < Value(walk.entries[(s << gpu::kWalkRowBits) + (c << gpu::kWalkCheckBits) +
                                           (static_cast<uint32_t>(v) & 3)]);
          u128 w = v;
          size_t sigma = s;
          for (int t = 0; t < L && !ok; ++t) {
            if ((w & 1) != 0) {
              w = (3 * w + 1) / 2;
              sigma += 2;
            } else {
              w /= 2;
              sigma += 1;
            }
            ok = stops_at(sigma, w);
          }
          ASSERT_TRUE(ok) << "L " << L << " s " << s << " c " << c << " v " << ToDecimal(v);
        }
      }
      // Against true delays: a small value the table stops has s + delay(v) <= floor.
      for (int i = 0; i < 3000; ++i) {
        const size_t s = rng() % rows;
        const u128 v = 5 + (static_cast<u128>(rng()) % Pow2(1 + static_cast<unsigned>(rng() % 40)));
        const uint32_t c = (v % 3 == 2 ? 1 : 0) | (v % 9 == 4 || v % 9 == 8 ? 2 : 0);
        if (v < Value(ahead[s * row + (c << L) + (static_cast<uint32_t>(v) & ((1u << L) - 1))])) {
          EXPECT_LE(s + SlowDelay(v), spec.floor) << "L " << L << " v " << ToDecimal(v) << " s " << s;
        }
      }
    }
  }
}

// The narrow units' check (8-byte thresholds of v >> 32, LaunchParams::walk_check_narrow)
// stops no value the exact table keeps walking: floor(L / 2^32), saturated at 2^64 - 1; and
// before the tail_from of a 2^32 tail (the narrow launches' walk_tail_from) every entry is at
// least 1, so a value in the tail (v >> 32 = 0) still stops there.
TEST(GpuStopTableTest, NarrowCheckStopsNoValueTheExactOneKeeps) {
  std::mt19937_64 rng(Seed() + 14);
  const UnitSpec spec = SpecWithRecords(Pow2(64) + 12345, Pow2(64) + 999999, Kinds::kDelay, &rng);
  const std::vector<ulonglong2> stop = BuildStopTable(spec, spec.floor);
  const std::vector<ulonglong2> exact = PairWalkCheckTable(BuildWalkStopTable(stop, 24), gpu::kWalkCheckShift);
  const std::vector<uint64_t> narrow = NarrowWalkCheckTable(exact);
  ASSERT_EQ(narrow.size(), exact.size());
  size_t saturated = 0, below_tail = 0;
  for (size_t i = 0; i < exact.size(); ++i) {
    const u128 l = Value(exact[i]);
    const u128 want = l >> kNarrowCheckShift;
    ASSERT_EQ(narrow[i], want > ~uint64_t{0} ? ~uint64_t{0} : static_cast<uint64_t>(want)) << i;
    saturated += narrow[i] == ~uint64_t{0};
    below_tail += narrow[i] == 0;
    // Values at and around the narrow bound: v >> 32 < narrow[i] only where v < l.
    const u128 edge = u128{narrow[i]} << kNarrowCheckShift;
    for (const u128 v : {edge, edge - 1, edge + 1, l - 1, l, edge - (rng() % Pow2(40))}) {
      if ((v >> kNarrowCheckShift) < narrow[i]) ASSERT_LT(v, l) << i;
    }
  }
  EXPECT_GT(saturated, 0u);  // the offset rows
  EXPECT_GT(below_tail, 0u);  // the last rows
  const uint32_t tail_from = PairWalkTailFrom(WalkTailFrom(stop, kNarrowCheckShift), gpu::kWalkCheckShift);
  const size_t row = size_t{1} << gpu::kWalkRowBits, last = exact.size() / row - 1;
  const size_t mask = ~((size_t{1} << gpu::kWalkCheckShift) - 1);
  for (size_t s = 0; s < tail_from; ++s) {
    const size_t read = std::min((s + gpu::kPairStepOffset) & mask, last);
    for (size_t r = 0; r < row; ++r) ASSERT_GE(narrow[read * row + r], 1u) << "s " << s << " r " << r;
  }
  EXPECT_LE(tail_from, PairWalkTailFrom(WalkTailFrom(stop, 24), gpu::kWalkCheckShift));
}

// The narrow check's stop rule as the library's kernels apply it (NarrowWalkStops, the
// exactness suite's mutation 10): a lane without a member walks its stale value each round
// from s = 0 (at most 48 steps, so s stays below kPairStepOffset), and that value may climb
// past 2^96, where even the offset rows' saturated 8-byte thresholds do not stop it; the rule
// ends such a lane by its s, and a member (s >= kPairStepOffset) by its value alone.
TEST(GpuStopTableTest, NarrowCheckEndsEveryIdleLane) {
  std::mt19937_64 rng(Seed() + 15);
  const UnitSpec spec = SpecWithRecords(Pow2(64) + 4321, Pow2(64) + 888888, Kinds::kDelay, &rng);
  const std::vector<ulonglong2> stop = BuildStopTable(spec, spec.floor);
  const std::vector<uint64_t> narrow =
      NarrowWalkCheckTable(PairWalkCheckTable(BuildWalkStopTable(stop, 24), gpu::kWalkCheckShift));
  const size_t row = size_t{1} << gpu::kWalkRowBits;
  ASSERT_GT(narrow.size(), gpu::kPairStepOffset * row);
  ASSERT_LT(4u * gpu::kPairStepBits, gpu::kPairStepOffset);  // an idle lane's s after a round
  for (uint32_t s = 0; s < gpu::kPairStepOffset; ++s) {
    for (size_t r = 0; r < row; ++r) {
      const uint64_t limit = narrow[s * row + r];
      ASSERT_EQ(limit, ~uint64_t{0}) << "s " << s;  // saturated: stops every value below 2^96
      const u128 stale = Pow2(96 + static_cast<unsigned>(rng() % 32)) + rng();
      const bool below = (stale >> kNarrowCheckShift) < limit;
      ASSERT_FALSE(below);  // what the rule is for
      ASSERT_TRUE(gpu::NarrowWalkStopsOfLibrary(below, s)) << "s " << s;
      ASSERT_TRUE(gpu::NarrowWalkStopsOfLibrary(true, s)) << "s " << s;
    }
  }
  for (uint32_t s = gpu::kPairStepOffset; s < gpu::kPairStepOffset + 4000; ++s) {
    ASSERT_FALSE(gpu::NarrowWalkStopsOfLibrary(false, s)) << "s " << s;
    ASSERT_TRUE(gpu::NarrowWalkStopsOfLibrary(true, s)) << "s " << s;
  }
}

// The group walk's two steps in one multiply (GroupWalkPairStep), on the host with the build's
// S-bit table (S = kPairStepBits): for v = 2^2S H + 2^S L + i1, t = 3^p1 L + c1 < 3^S 2^S (below
// 2^32 at S = 12) gives the second step's entry (t mod 2^S) and carry q = t >> S < 3^S, and
// (3^p1 3^p2) H + (3^p2 q + c2) equals the two table steps; the shared entry's packing
// round-trips; a step's value class (2 mod 3, 4 or 8 mod 9) holds; the fast path (3^(p1 + p2) <
// 2^32, H < 2^96) stays below 2^128.
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
    const unsigned bits = 2 * kBits + static_cast<unsigned>(rng() % 77);  // v in [2^2S, 2^(2S + 76))
    const u128 v = Pow2(bits - 1) + (static_cast<u128>(rng()) << 64 | rng()) % Pow2(bits - 1);
    const uint64_t i1 = static_cast<uint64_t>(v) & table.mask();
    const uint64_t m1 = kPow3[table.p(i1)], c1 = table.c(i1);
    const uint64_t t = m1 * (static_cast<uint64_t>(v >> kBits) & table.mask()) + c1;
    ASSERT_LT(t, kPow3[kBits] << kBits);
    if (kBits == 12) ASSERT_LT(t, uint64_t{1} << 32);  // the kernel keeps it in 32 bits there
    ASSERT_LT(t >> kBits, kPow3[kBits]);
    const u128 first = step(v);
    const uint64_t i2 = t & table.mask();
    ASSERT_EQ(static_cast<uint64_t>(first) & table.mask(), i2) << ToDecimal(v);
    const uint64_t m2 = kPow3[table.p(i2)], c2 = table.c(i2);
    const u128 fused = static_cast<u128>(m1 * m2) * (v >> (2 * kBits)) + (m2 * (t >> kBits) + c2);
    ASSERT_EQ(fused, step(first)) << ToDecimal(v);
    const uint32_t value_class = gpu::StepValueClass(table.p(i2), c2);
    if ((value_class & 1) != 0) ASSERT_EQ(fused % 3, 2u) << ToDecimal(v);
    if (value_class >= 2) ASSERT_EQ(fused % 9, value_class == 2 ? 4u : 8u) << ToDecimal(v);
    if (m1 * m2 < (uint64_t{1} << 32)) {
      ++fast;
      if (bits <= 64 + 2 * kBits) {
        // The narrow fast path (v < 2^(64 + 2S), lever 109): H = h1 2^32 + h0 < 2^64 times m plus a as
        // two chained wide multiply-adds, p0 = h0 m + a and p1 = h1 m + (p0 >> 32), neither
        // past 64 bits, and v' = p1 2^32 + (p0 mod 2^32).
        const uint64_t m = m1 * m2, a = m2 * (t >> kBits) + c2, h = static_cast<uint64_t>(v >> (2 * kBits));
        const u128 p0 = static_cast<u128>(h & 0xFFFFFFFFu) * m + a;
        ASSERT_LT(p0, Pow2(64)) << ToDecimal(v);
        const u128 p1 = static_cast<u128>(h >> 32) * m + (p0 >> 32);
        ASSERT_LT(p1, Pow2(64)) << ToDecimal(v);
        ASSERT_EQ((p1 << 32) + (p0 & 0xFFFFFFFFu), fused) << ToDecimal(v);
      }
    }
  }
  EXPECT_GT(fast, 190000);  // 3^(p1 + p2) >= 2^32 (p1 + p2 > 20) is rare
  // The narrow path's first multiply-add at its largest: (2^32 - 1) 3^20 + a < 2^64, with the
  // addend a = m2 q + c2 < 3^S (3^S + 1).
  const u128 addend = static_cast<u128>(kPow3[kBits]) * (kPow3[kBits] + 1);
  EXPECT_LT(static_cast<u128>(0xFFFFFFFFu) * kPow3[20] + addend, Pow2(64));
  // The fast path's largest product and addend: (2^96 - 1)(2^32 - 1) + a < 2^128.
  const u128 largest = (Pow2(96) - 1) * ((u128{1} << 32) - 1);
  EXPECT_GT(kU128Max - largest, addend);
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

}  // namespace
}  // namespace collatz
