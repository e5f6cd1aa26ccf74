// The exact early-termination thresholds the GPU kernels compare with (SPEC 3), built on the
// host: one 16-byte load and a 128-bit compare per check.
#pragma once

#include <cstdint>
#include <vector>

#include <cuda_runtime.h>

#include "core/unit.h"

namespace collatz {

// stop_below[s], s = 0 .. floor + 1: core's StopThresholds (core/early_termination.h) as
// 16-byte entries, 0 (nothing stops) for s > limit.
std::vector<ulonglong2> BuildStopTable(const UnitSpec& spec, int64_t limit);

// The residue-group walk's check (gpu::kWalkCheckBits, gpu::WalkCheckShift, gpu::kWalkRowBits):
// row s (0 .. stop_below.size() + gpu::kWalkExtraRows - 1, the last serving every larger s)
// holds, for v = r (mod 2^kWalkCheckBits) with e = WalkCheckShift(r) trailing zeros, entry r:
// stop_below[min(s + e, last)] << e (saturated at 2^128 - 1), as delay(v) = e + delay(v >> e)
// and v >> e < L <=> v < L 2^e; and entry (c << kWalkCheckBits) + r, for a v of the walk's
// value class c (StepValueClass, v at least 5), the larger of that and the bounds of v's
// smaller predecessors: v = 2 (mod 3) (c = 1): floor(3 stop_below[s - 2] / 2) (for s >= 2):
// u = (2v - 1) / 3 is a smaller predecessor of v (u -> 3u + 1 = 2v -> v) with delay(v) + 2,
// and u < L <=> v < floor(3L / 2) (at most); v = 4 (mod 9) (c = 2): floor(9 stop_below[s -
// 5] / 8) through (8v - 5) / 9 (five steps); v = 8 (mod 9) (c = 3): that of c = 1 and
// floor(9 stop_below[s - 4] / 4) through (4v - 5) / 9 (four steps). tail_from (at least 1: the walk marks an
// ended member with s = 0): below it every entry is at least 2^tail_bits, so a value in the
// tail has stopped and the walk skips the tail test.
struct WalkStopTable {
  std::vector<ulonglong2> entries;
  uint32_t tail_from = 0;
  uint32_t last_row = 0;
};
WalkStopTable BuildWalkStopTable(const std::vector<ulonglong2>& stop_below, int tail_bits);
// BuildWalkStopTable's tail_from for a tail of 2^bits: the first s whose threshold is below
// 2^bits, less the largest shift (at least 1).
uint32_t WalkTailFrom(const std::vector<ulonglong2>& stop_below, int bits);

// The two-step walk's table (LaunchParams::walk_check): gpu::kPairStepOffset rows that stop
// every value (2^128 - 1), then the rows of `walk`; with shift > 0 (kPairStepOffset a multiple
// of 2^shift) each row holds, entry by entry, the smallest threshold of the 2^shift rows
// 2^shift q .. 2^shift q + 2^shift - 1 it lies among (the walk reads the first of them,
// gpu::kWalkCheckShift): it stops no value that the row of s would not, as
// thresholds do not grow with s.
std::vector<ulonglong2> PairWalkCheckTable(const WalkStopTable& walk, int shift = 0);
// The same for rows of 2^row_bits entries (WalkLookaheadTable's).
std::vector<ulonglong2> PairWalkCheckTable(const std::vector<ulonglong2>& rows_of_walk, int row_bits, int shift);
// The rows of `walk` for a check that also looks check_bits T-steps ahead
// (LaunchParams::walk_check_bits): row s holds 4 << check_bits entries, entry (c << check_bits)
// + u for a v of value class c with v = u (mod 2^check_bits), the larger of walk's entry (c <<
// kWalkCheckBits) + u mod 4 and, for each t < check_bits, the least X such that every such v
// < X stops after the path's first t + 1 T-steps (which u fixes: v -> (3^a v + c') / 2^(t + 1)
// after t + 1 + a steps): that value below stop_below of its step count, or below the
// predecessor bound of the class c' gives it (a >= 1) where every such value is at least 5
// (rows whose entries are all at least 5 2^check_bits). So an entry stops no v that would not
// stop at the check or at one of the next check_bits T-steps (walk's entries for odd v hold
// those thresholds).
std::vector<ulonglong2> WalkLookaheadTable(const WalkStopTable& walk, int check_bits);
// The walk's tail_from for that table: tail_from (a WalkStopTable's, or WalkTailFrom's) less
// 2^shift - 1 (at least 1), as a shared row holds thresholds of up to 2^shift - 1 steps later.
uint32_t PairWalkTailFrom(uint32_t tail_from, int shift);
// The narrow units' copy of a check table (LaunchParams::walk_check_narrow): each threshold
// L as floor(L / 2^32), at most 2^64 - 1. v >> 32 < floor(L / 2^32) implies v < L, so it stops
// no value the exact table would not; a value below 2^32 stops only where L >= 2^32, so the
// walk's tail test must start where the thresholds fall below 2^32 (WalkTailFrom of 32 bits).
constexpr int kNarrowCheckShift = 32;
std::vector<uint64_t> NarrowWalkCheckTable(const std::vector<ulonglong2>& check);

// The prelude's ancestor thresholds (core/ancestor_bounds.h): row s (0 .. rows - 1) holds
// AncestorThreshold(stop_below, s, r) at r = v mod 162, for numbers that share their residue
// mod 162 (EntryStops, GroupStopsWithin). The prelude takes at most 2 (k + G) steps, so it
// needs that many rows only (a few ms for every row of a 2^60 unit, 0.3 ms for 100).
struct AncestorStopTable {
  std::vector<ulonglong2> entries;
  uint32_t last_row = 0;
};
AncestorStopTable BuildAncestorStopTable(const std::vector<ulonglong2>& stop_below, size_t rows);

}  // namespace collatz
