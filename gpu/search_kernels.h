// The search kernels' parameters and their host launchers (gpu/search_launch.cu; the kernels are
// in gpu/kernels/). Plain structs only: this header is shared by nvcc and the host compiler.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "gpu/pair_step_bits.h"
#include "gpu/step_entry.h"

namespace collatz::gpu {

// One sieve-offset table entry of a cycle of `modulus` consecutive blocks h: the number is
// N = cycle_base + offset, offset = 2^k r + residue (r = h mod modulus); after the first
// k T-steps it is pow3 * (N >> k) + c, having spent `steps` = k + p.
struct SieveEntry {
  uint64_t offset;
  uint64_t c;
  uint64_t pow3;
  uint32_t steps;
  uint32_t unused;
};

struct LadderEntry {
  uint64_t n_lo, n_hi;
  uint32_t delay;
  uint32_t unused;
};

// weight: how many examined numbers share this one's delay and stand for it in the audit
// tallies (1, or a join-map run's length: LaunchParams::join_map).
struct HostFinishEntry {
  uint64_t n_lo, n_hi;
  uint32_t weight;
  uint32_t unused;
};

// The deepest residue groups: a G-bit step entry's c < 3^G and 3^p <= 3^G fit 32 bits, and
// the step between members, A2 = 9 3^(p + p2) <= 9 3^(19 + 19) < 2^64 with the 19-bit sieve.
// Deeper k + G (wider sieves in large units) let A2 pass 2^64 in rare groups (p + p2 > 38):
// those walk from k T-steps instead (LaunchParams::group_shallow_steps; GpuEngine::GroupFits).
// Groups of 18 and 19 bits keep 227 members in units of 2^48 and 2^49 (docs/PERFORMANCE.md,
// session 26).
constexpr int kMaxGroupBits = 19;

// Per-launch totals (atomically accumulated by blocks).
struct Accumulators {
  unsigned long long candidates;
  unsigned long long tally_count;
  unsigned long long tally_sum;
  unsigned long long work_hash;
  unsigned long long ladder_count;       // may exceed the capacity: then the launch is redone
  unsigned long long host_finish_count;  // likewise
  unsigned long long join_skipped_groups;  // walking groups the join map skipped
  unsigned long long step_stopped_groups;  // groups whose last member stops inside k + G steps
  unsigned long long half_stopped_groups;  // walking groups of which one half stops one step after k + G
  unsigned long long tail_splits;          // generators split at a launch's tail (GroupSplitTail)
  unsigned long long shallow_walk_groups;  // walking groups past group_shallow_steps: walked from k T-steps
  unsigned int group_rounds_taken;  // the group kernel's decision rounds handed out so far
  unsigned int unused;
};

// Class minima slots: N - base for each delay below kClassSlots; delays at or above go
// to the host-finish list.
constexpr uint32_t kClassSlots = 16384;
// Early-termination bound table: (bitlen << sub_bits | sub-bucket) -> bound of delay(v).
constexpr int kMaxBoundSubBits = 8;
constexpr int kBoundTableSize = 129 << kMaxBoundSubBits;
// Widest step table kept in shared memory (4-byte entries, 32 KiB); the group walk's one-step
// table takes the two-step width by default, which is no wider.
constexpr int kMaxSharedStepBits = 13;
static_assert(kPairStepBits <= kMaxSharedStepBits, "the one-step group walk's default table fits shared memory");
// The group walk's check looks at v mod 2^kWalkCheckBits: it counts the trailing zeros
// among those bits (at most kWalkCheckBits; v = 0 mod 4 counts 2).
constexpr int kWalkCheckBits = 2;
// ... and at the class the step that made v gives it (StepValueClass; the one-step walks know
// bit 0 only, StepEntry::two_mod_3): a row of the walk's stop table holds 2^kWalkRowBits
// thresholds, (class << kWalkCheckBits) + v mod 4.
constexpr int kWalkRowBits = kWalkCheckBits + 2;
// The two-step walk's check (LaunchParams::walk_check) looks further: a row holds
// 2^(walk_check_bits + 2) thresholds, (class << walk_check_bits) + v mod 2^walk_check_bits, each
// the largest that lets every such v stop at the check or after one of its next
// walk_check_bits T-steps, whose path v mod 2^walk_check_bits fixes (WalkLookaheadTable; the
// widths measured: GpuEngineOptions::walk_check_bits). The kernels are instantiated for these widths.
constexpr int kMinWalkCheckBits = kWalkCheckBits;
constexpr int kMaxWalkCheckBits = 8;
// Rows past the stop table's last: the predecessor bounds of row s read stop_below[s - 2],
// [s - 4] and [s - 5].
constexpr int kWalkExtraRows = 5;
// Two-step walk rounds (LaunchParams::walk_round_steps = 2) use a walk table of
// kPairStepBits (gpu/pair_step_bits.h) with 8-byte entries (32 KiB at 12 bits, 64 at 13) and
// blocks of this many threads: two blocks of 20 warps fill an SM at the 48-register cap (five
// blocks of 256 with their tables would not fit). The width is also the one-step rounds'
// default (GpuEngineOptions::group_walk_step_bits) and sets the least tail (2S bits: tail_bits).
constexpr int kPairWalkBlockThreads = 640;
// The first word of such an entry: steps (S + p <= 2S) | value class << 7 | c << 9 (c < 3^S <
// 2^23); the second is 3^p.
constexpr int kPairStepCShift = 9;
// The two-step walk (not full-delay) counts a member's steps from kPairStepOffset, and its
// stop table (LaunchParams::walk_check) is walk_stop behind kPairStepOffset rows that stop
// every value. A lane without a member (s = 0) then walks its stale value through a round
// like the others, with no branch on s: a round takes at most 2 (S + S) <= 56 < kPairStepOffset
// steps, so such a lane lands in those rows, stops, and has s = 0 again.
constexpr uint32_t kPairStepOffset = 64;
// The two-step walk's check reads row min(s & ~(2^kWalkCheckShift - 1), walk_stop_last +
// kPairStepOffset) of walk_check: 2^kWalkCheckShift consecutive step counts share one row,
// which holds the smallest of their thresholds (PairWalkCheckTable), so that a warp's lanes
// read fewer cache lines; a member such a row misses walks another round. H200, 2^49 numbers
// just above the published bound, 0 / 2 / 3 / 4 / 5 / 6: 3.692 / 3.729 / 3.734 / 3.698 / 3.490
// / 3.387e13 numbers/s; delay+class at 2^66 4.109e12 at 0, 4.071e12 at 3 (docs/PERFORMANCE.md,
// lever 100). A constant: the mask as a parameter took a register, and the kernel spilled.
#ifndef COLLATZ_WALK_CHECK_SHIFT
#define COLLATZ_WALK_CHECK_SHIFT 3
#endif
constexpr int kWalkCheckShift = COLLATZ_WALK_CHECK_SHIFT;
static_assert(kWalkCheckShift >= 0 && kPairStepOffset % (1u << kWalkCheckShift) == 0,
              "the offset rows share no row with a member's");
// The row that check reads for s steps with the table's last row `last`, as the library's
// kernels compute it (gpu/kernels/walk_check_row.cuh), for the tests on the host.
uint32_t WalkCheckRowOfLibrary(uint32_t s, uint32_t last);
// The narrow check's stop rule as the library's kernels apply it (NarrowWalkStops in
// gpu/kernels/walk_check_row.cuh), for the tests on the host.
bool NarrowWalkStopsOfLibrary(bool below, uint32_t s);
static_assert(4 * kPairStepBits < kPairStepOffset, "an idle lane's round stays in the offset rows");
__host__ __device__ constexpr uint32_t PackPairStep(uint32_t c, uint32_t steps, uint32_t value_class) {
  return steps | (value_class << 7) | (c << kPairStepCShift);
}
// Trailing zeros the walk's check counts for v mod 2^kWalkCheckBits = r.
constexpr uint32_t WalkCheckShift(uint32_t r) {
  return r == 0 ? kWalkCheckBits : (r & 1) != 0 ? 0 : 1 + WalkCheckShift(r >> 1);
}

struct DeviceTables {
  const StepEntry* steps = nullptr;
  int step_bits = 0;
  const uint16_t* tail = nullptr;
  int tail_bits = 0;
  // Exact early termination, delay part: stop_below[s] (s = 0 .. floor) is the least v with
  // R(v) > floor - s (min of the first record above floor - s and the record table's end),
  // so s + R(v) <= floor  <=>  v < stop_below[s]: one load and a compare per check.
  // stop_below[floor + 1] = 0, so min(s, floor + 1) indexes it for any s.
  const ulonglong2* stop_below = nullptr;  // {lo, hi}
  // Class part: the bucketed bound (never below R) for the interval of possible delays.
  const uint16_t* bound = nullptr;        // 129 << bound_sub_bits entries (0xFFFF: no bound)
  int bound_sub_bits = 3;
  const uint32_t* hole_prefix = nullptr;  // floor + 2 entries (class searches)
};

struct LaunchParams {
  DeviceTables tables;
  uint32_t floor = 0;
  uint32_t ladder_floor = 0;  // >= floor: the running max of the unit before this launch
  int classes = 0;          // delay+class search
  int early_stop = 0;       // exact early termination on
  int full_occupancy = 0;   // plain kernel capped at 32 registers (2048 threads per SM)
  int queue = 0;            // walk queue in shared memory (global step table; floor > 0; tiles of 32)
  int queue_threads_per_sm = 0;  // its register cap: resident threads per SM (0, 1280, 1536, 2048)
  // Walk queue, sieved launches: tile t is the column of entries 32 (t % tiles_per_cycle) ..
  // + 31 over cycles first_tile_cycle + (t / tiles_per_cycle) * column_cycles, ... (at most
  // column_cycles of them, none past last_cycle); N grows by 2^k column_modulus a cycle.
  uint32_t column_cycles = 1;
  uint64_t last_cycle = 0;
  uint64_t column_modulus = 1;

  // Positions [pos_begin, pos_end). Sieved mode: position = cycle * cycle_len + rem,
  // N = base + cycle * cycle_stride + entries[rem].offset; tiles never straddle cycles.
  // First-block mode (entries == nullptr): N = period * (pos / npat) + pattern[pos % npat].
  const SieveEntry* entries = nullptr;
  uint32_t cycle_len = 0;
  uint32_t tiles_per_cycle = 0;
  uint64_t cycle_stride = 0;
  uint64_t base_lo = 0, base_hi = 0;
  int sieve_bits = 0;
  uint32_t period = 2, npat = 1;
  uint32_t pattern[9] = {1};
  uint64_t pos_begin = 0, pos_end = 0;
  uint64_t tile_begin = 0, tile_end = 0;
  uint64_t first_tile_cycle = 0;  // tile_begin / tiles_per_cycle
  uint32_t first_tile_rem = 0;    // tile_begin % tiles_per_cycle

  // Residue groups (GroupKernel; delay-only, floor > 0, whole cycles, N < 2^100): entries
  // [group_first_entry, + group_entries) over cycles [0, group_cycles) counted from base.
  // Group g is entry group_first_entry + (g >> group_bits) over the cycles C = g mod
  // 2^group_bits (mod 2^group_bits): the value after the first k T-steps grows linearly in
  // C, and its next group_bits T-steps depend on C mod 2^group_bits alone, so the whole
  // group is decided at once after k and after k + group_bits steps. Position (rel) of
  // entry e, cycle C: (e - group_first_entry) * group_cycles + C.
  // The 2^group_bits-entry step table (one 16-byte load a decision; the 8-byte packing it
  // had held c and 3^p in 27 bits each, so G <= 17).
  const StepEntry* group_steps = nullptr;
  int group_bits = 0;
  uint32_t group_first_entry = 0, group_entries = 0, group_cycles = 0;
  uint32_t group_rounds = 0;  // (group_entries << group_bits) / 32: decision rounds of 32 groups
  // A walking group whose steps after its k + G shared T-steps, k + G + p + p2 (p, p2 the odd
  // ones), pass this walks its members from k T-steps instead, 2^G A1 apart (below 2^64:
  // GpuEngine::GroupFits), with no half check: its step between members after k + G, A2 =
  // column_modulus 3^(p + p2), could pass 2^64. k + G + 38 for the delay-only modulus 9 (rare
  // groups, and only where k + G > 38); tests lower it so that small units take that path.
  // Here, in the padding before a pointer: a larger struct cost the group kernel spills.
  uint32_t group_shallow_steps = 0xFFFFFFFFu;
  // Per entry of the launch (group_entries bytes, filled by LaunchGroups ahead of the group
  // kernel): 1 if every number of the entry here can stop within its first k T-steps (its
  // largest one can after some j <= k; values after j <= k steps grow with N), so that
  // all of its groups stop without a look.
  uint8_t* entry_stops = nullptr;
  // Per group of the launch (group_entries << group_bits bytes, filled ahead of the group
  // kernel too): 0, or why the group is skipped without a look: 1 its entry stops, 2 the
  // join map (join_map below), 3 it stops inside its shared steps; or 4 + j: only its members
  // t = j (mod 2) walk, the others stop one T-step after k + G (group_half_checks).
  uint8_t* group_skip = nullptr;
  uint64_t h_base_lo = 0, h_base_hi = 0;  // base >> sieve_bits
  int walk_rounds = 12;  // walk steps per lane between the warp's group hand-outs (GpuEngineOptions)
  // The group walk's step table: 0 (the global/L2 table of tables.step_bits) or a width
  // <= kMaxSharedStepBits whose table (walk_steps) each block copies to shared memory.
  int walk_step_bits = 0;
  const StepEntry* walk_steps = nullptr;
  // The least s with stop_below[min(s, floor + 1)] < 2^tail_bits (stop_below is
  // non-increasing): below it a walking number that did not stop is not in the tail.
  uint32_t walk_tail_from = 0;
  // The group walk's stop table (gpu/stop_tables.h): row min(s, walk_stop_last), entry
  // (value class << kWalkCheckBits) + v mod 2^kWalkCheckBits (StepValueClass). Counting e =
  // WalkCheckShift(v mod 4) trailing zeros it holds stop_below[min(s + e, floor + 1)] << e
  // (saturated): delay(v) = e + delay(v >> e); for v = 2 (mod 3) at least floor(3
  // stop_below[s - 2] / 2): the predecessor (2v - 1) / 3 < v has delay(v) + 2; for v = 4 and 8
  // (mod 9) the bounds of (8v - 5) / 9 and (4v - 5) / 9 (gpu/stop_tables.h).
  const ulonglong2* walk_stop = nullptr;
  uint32_t walk_stop_last = 0;
  // The two-step walk's table: kPairStepOffset rows that stop every value, then walk_stop.
  const ulonglong2* walk_check = nullptr;
  // The same thresholds >> 32 (rounded down, at most 2^64 - 1), for the two-step walk of
  // walk_narrow units: v stops when v >> 32 is below the entry (NarrowWalkCheckTable); with it
  // walk_tail_from is that of a 2^32 tail, below which an entry is 0.
  const uint64_t* walk_check_narrow = nullptr;
  // pow2[j] = 2^j, as data the compiler cannot fold: the walk's check multiplies by
  // pow2[kWalkRowBits] (one FMA-pipe instruction instead of two on the ALU pipe, which bounds
  // the walk). A single stride field instead of the table measured 1% slower (the same
  // instructions; the kernel is that sensitive to the parameters' layout): docs/PERFORMANCE.md,
  // lever 69.
  uint32_t pow2[32] = {1u << 0, 1u << 1, 1u << 2, 1u << 3, 1u << 4, 1u << 5, 1u << 6, 1u << 7, 1u << 8, 1u << 9,
                       1u << 10, 1u << 11, 1u << 12, 1u << 13, 1u << 14, 1u << 15, 1u << 16, 1u << 17, 1u << 18,
                       1u << 19, 1u << 20, 1u << 21, 1u << 22, 1u << 23, 1u << 24, 1u << 25, 1u << 26, 1u << 27,
                       1u << 28, 1u << 29, 1u << 30, 1u << 31};
  // T-steps of S bits per walk round, between two checks (1 or 2; 2 needs every walked value
  // at least 2^(2S) at a round's start: members at least 2^(2S) after k + G steps, and
  // 2^tail_bits >= 2^(2S), which every value that did not stop or finish in the tail is).
  int walk_round_steps = 1;
  // The join map (gpu/join_map.h) in group launches of units it serves, else
  // nullptr: a walking group whose numbers' residue r = N mod 2^L (join_mask = 2^L - 1,
  // L <= k + G, so one r a group) has join_map[r >> 1] = 0 skips its walk; a finished member
  // counts in the tallies with its entry (its run's length) as weight.
  const uint8_t* join_map = nullptr;
  uint64_t join_mask = 0;
  // Delay-only group launches: join_map holds gpu::kJoinDelayVariants maps of 2^(L - 1)
  // bytes (gpu/join_map.h), the one for H = N >> L mod 9 serves N (join_bits = L); 0: one map.
  int join_delay_variants = 0;
  int join_bits = 0;

  Accumulators* acc = nullptr;
  LadderEntry* ladder = nullptr;
  uint32_t ladder_capacity = 0;
  HostFinishEntry* host_finish = nullptr;
  uint32_t host_finish_capacity = 0;
  unsigned long long* class_min = nullptr;  // kClassSlots entries, N - base (classes only)
  int group_step_checks = 0;  // GroupSkipKernel checks each group inside its k + G steps (last: lever 69's layout effect)
  // Group launches: after j <= k + G T-steps, a of them odd, the numbers of an entry (and
  // the members of a group) differ by multiples of 3^a column_modulus, so from this many odd
  // steps on (2 less the power of 3 in column_modulus: 0 in delay-only launches) by multiples
  // of 9: they share their value class (StepValueClass), and the prelude's checks
  // (EntryStops, GroupStopsWithin) compare the largest with the walk table's threshold for
  // that class (the predecessor bounds; GroupBelow). kNoClassChecks: stop_below alone.
  uint32_t group_class_min_odd = 0;
  // From this many odd steps on (4 less the power of 3 in column_modulus) the numbers differ
  // by multiples of 81, and while they share their parity too, their residue mod 162: the
  // prelude compares the largest with ancestor_stop (gpu/stop_tables.h, row s <=
  // ancestor_stop_last, entry v mod 162). kNoClassChecks: never.
  uint32_t group_deep_min_odd = 0;
  const ulonglong2* ancestor_stop = nullptr;
  uint32_t ancestor_stop_last = 0;
  // With group_step_checks: the prelude also checks each half of a group (its members t = 0
  // and t = 1 mod 2) one T-step after k + G, where the halves part (group_skip 4 + j).
  int group_half_checks = 0;
  // Two-step walk rounds: the fast path of a pair step takes v < 2^88 (H = v >> 24 < 2^64: two
  // 32 x 32-bit products, not three), larger values the two steps one by one. Set for units
  // whose values rarely climb that high (GpuEngineOptions::narrow_walk_max_bits; at 2^66 the
  // walk is 6% faster, docs/PERFORMANCE.md, lever 85).
  int walk_narrow = 0;
  // Two-step walk rounds: the T-steps the check looks ahead (walk_check's rows hold
  // 2^(walk_check_bits + 2) entries; kMinWalkCheckBits .. kMaxWalkCheckBits).
  int walk_check_bits = kWalkCheckBits;
  // The group kernel's launch tail (GroupSplitTail): once no group is left to decide or
  // queued, a generator with at least this many members left gives half of them to an idle
  // lane of its warp. 0: never.
  uint32_t group_split_min = 0;
};

constexpr uint32_t kNoClassChecks = 0xFFFFFFFFu;  // LaunchParams::group_class_min_odd
// Entries a row of LaunchParams::ancestor_stop: v mod 2 3^4 (core/ancestor_bounds.h).
constexpr uint32_t kAncestorResidues = 162;

// Positions per tile: one warp's.
constexpr int kTilePositions = 32;

// Launches the search kernel for one launch's positions on `stream`, with the step table
// in shared memory (step_bits <= kMaxSharedStepBits) or in global memory.
cudaError_t LaunchSearch(const LaunchParams& p, int block_threads, bool shared_steps, int grid_blocks,
                         cudaStream_t stream);
// Launches the residue-group kernel (p.group_bits > 0) on `stream`, after the kernel that
// fills p.entry_stops.
cudaError_t LaunchGroups(const LaunchParams& p, int block_threads, int grid_blocks, cudaStream_t stream);
cudaError_t GroupBlocksPerSm(int block_threads, int threads_per_sm, int walk_step_bits, int walk_round_steps,
                             int* blocks);

// Resident blocks per SM for the search kernel of that configuration.
cudaError_t SearchBlocksPerSm(int block_threads, bool shared_steps, int step_bits, bool full_occupancy, bool queue,
                              int queue_threads_per_sm, int* blocks);

}  // namespace collatz::gpu
