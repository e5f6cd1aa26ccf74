// The CUDA unit-search engine (issue 8). For the same UnitSpec and the same sieve it
// returns a UnitResult identical to CpuEngine's: the result is defined by the mathematics
// alone (core/unit.h), whatever step-table width, tail size or early-termination points
// each engine uses.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/search_engine.h"
#include "core/status.h"
#include "core/unit_search.h"
#include "gpu/pair_step_bits.h"

namespace collatz {

// Tuning parameters, as data (docs/PERFORMANCE.md, GPU section, says what each does).
struct GpuEngineOptions {
  int device = 0;
  // Step table (S <= 20) and tail table (exact delays of every n < 2^T, 16-bit, in device
  // memory; built on the GPU, T <= 32).
  int step_bits = 19;
  // At least twice the two-step walk's table width (GpuEngineImpl::UsesTwoStepRounds).
  int tail_bits = 2 * gpu::kPairStepBits;
  // Units without early termination (a provable floor, no trusted or covered record table)
  // walk every number to the tail, so a wider one pays there: built on the first such unit
  // (2^bits 16-bit entries, 8 GiB at 32), skipped when the device lacks the memory; 0: tail_bits.
  int full_delay_tail_bits = 32;
  // Units with a floor but no record table complete below 2^self_record_bits (a provable
  // floor alone: an empty database) stop numbers early with the engine's own table: the
  // delay records below 2^self_record_bits from its own searches at the first such unit
  // (0: off; at most 48). Results do not change; docs/PERFORMANCE.md has the gain and cost.
  // Engines with launches below 2^20 positions or fixed buffer capacities (test
  // configurations) go without: the table's searches run on the engine's own launches.
  int self_record_bits = 42;
  // Threads per block (128, 256 or 512) and resident blocks per SM (0: from occupancy).
  int block_threads = 256;
  int blocks_per_sm = 0;
  // Sieve positions (computed numbers) per kernel launch (at most 2^32). Two launches are
  // in flight on two streams, so the host digests one while the GPU runs the next. Fewer,
  // larger launches leave fewer launch tails (class units at 2^60: 2^29 / 2^30 / 2^32
  // positions gave 1.75e12 / 1.84e12 / 1.90e12 numbers/s on an H100).
  uint64_t positions_per_launch = uint64_t{1} << 32;
  // Capacity of the per-launch buffers for tile-local ladder entries and for numbers the
  // host must finish (128-bit overflow). A launch that overflows a buffer is redone: with
  // automatic capacities (0) after growing the buffer to what it needed (up to 2^26
  // entries), otherwise split in two, recursively. Nothing is ever lost.
  uint32_t ladder_capacity = 0;
  uint32_t host_finish_capacity = 0;
  // Exact early termination (SPEC 3) when the unit carries a record table: the delay
  // test uses the exact R(v) (a threshold per step count); the class test a bound table
  // of 2^bound_sub_bits sub-buckets per octave (3 is the CPU's; up to 8).
  bool early_termination = true;
  int bound_sub_bits = 6;
  // Keep the step table in shared memory (4-byte entries) when step_bits <= 13;
  // otherwise it is read from global memory / L2 (16-byte entries).
  bool shared_step_table = true;
  // Walk queue (global-memory step table, delay-only units with a floor above 0): each
  // warp queues the numbers that must walk on in shared memory and a lane takes the next
  // queued number as soon as its own is done; the warp sets up its next 32 positions, with
  // every lane busy, whenever fewer than 32 are queued.
  bool walk_queue = true;
  // Delay+class units take the walk queue and residue groups too when their smallest open
  // class is at least 3/4 of the floor (open classes near the floor, as at a real frontier:
  // most numbers stop within a few steps; with open classes far below the floor nearly every
  // number walks to the tail and the plain kernel is faster: docs/PERFORMANCE.md, lever 37).
  // Residue groups then stop a group only when s + R(v) stays below the smallest open
  // class, a monotone form of the class test.
  bool class_walk_queue = true;
  // Its threads per block (128, 256 or 512) and register cap, as resident threads per
  // SM: 0 (none), 1280, 1536 or 2048.
  int queue_block_threads = 256;
  int queue_threads_per_sm = 1280;
  // Its tiles in sieved blocks: 32 sieve entries over this many consecutive cycles, so a
  // residue's entry is loaded and multiplied once per column and later cycles cost an add.
  int queue_column_cycles = 64;
  // Residue groups (delay-only units with a floor, N < 2^100, whole cycles of the sieved
  // blocks): the numbers of a sieve entry whose cycles agree mod 2^G are stopped together
  // when the group's last member can stop after k or after k + G T-steps; only the other
  // groups' members are set up one by one (docs/PERFORMANCE.md, lever 28). G is the largest
  // value up to group_bits (at least 5) that leaves every group group_min_members members;
  // smaller units use the walk queue alone. Runs with the walk queue's block size and cap
  // (128 or 256 threads). The group's last member is also checked after each of the T-steps
  // between k and k + G (a prelude kernel), where the unit's record table reaches near it
  // (lever 78); there deeper groups pay: 2^66, 2^46 numbers on an H100: 8.39e12 numbers/s
  // at G = 16 against 7.55e12 at 13 and 7.75e12 at 17. What pays is a few hundred members a
  // group (deep_group_min_members: 227 until session 40, about 455 since), so larger units
  // take deeper groups: at the campaign point B
  // (docs/PERFORMANCE.md, session 26; H200) 2^48 numbers 2.697e13 at G = 16 (909 members),
  // 2.786e13 at 17, 2.927e13 at 18 (227), 2.314e13 at 19 (113); 2^49 numbers 2.940e13 at 19.
  bool residue_groups = true;
  int group_bits = 19;
  // The same for delay+class units (2^66, 2^44 numbers: 3.11e12 at 17, 2.96e12 at 16,
  // 2.58e12 at 13, 2.67e12 at 19 with 16-byte step entries).
  int class_group_bits = 17;
  // And for units whose record table ends 16 bits or more below them (none, or the engine's
  // own): nothing stops inside the shared steps, but a deeper group reaches a deeper join map
  // (its level is k + G of the first unit that builds it, up to 33 for delay-only units): 2^66,
  // 2^44 numbers, own table below 2^42, H200: 1.173e12 at G = 13 (map 32 bits), 1.211e12 at
  // 14 (33 bits), 1.190e12 at 15, 1.148e12 at 16 (both 33 bits). Delay-only ones take no
  // more than k + G = 33 needs (at least 5): 5 with a 28-bit sieve (UnitGroupBits).
  int shallow_group_bits = 14;
  // In units whose table reaches near them, groups deeper than this (with the default 19-bit
  // sieve; with a k-bit sieve, k + G beyond 19 + this) pay only with the checks inside their
  // shared steps, so they need deep_group_min_members members (2^66, 2^41 numbers: G = 14
  // without the checks 4.45e12, G = 13 5.41e12).
  int unchecked_group_bits = 13;
  int group_min_members = 16;
  // Its minimum for delay+class units, whose members walk about four times longer: deeper
  // groups' decisions cost more than their shared steps save (on a 28-bit sieve 1.77e12
  // numbers/s at 16, 1.92e12 at 64; docs/PERFORMANCE.md, lever 57). With the default 19-bit
  // sieve a class group has 256 members either way. Units with too few cycles for that take
  // groups of group_min_members.
  int class_group_min_members = 64;
  // Groups of fewer members go without the checks inside their shared steps (lever 78).
  int group_step_check_min_members = 64;
  // The most members a group has: a launch cuts the whole cycles into chunks of this many
  // << G cycles (1..65535: a ring entry counts members in 16 bits). More members at the same
  // depth pay: 2^50 delay-only at B52, 30 bits, H100, G = 8: chunks of 256 3.861e13, of 512
  // 4.119e13 (session 39); deep_group_min_members gives the depth.
  int group_chunk_members = 512;
  // Units that end at or below 2^narrow_walk_max_bits walk two-step rounds with the narrow
  // fast path (LaunchParams::walk_narrow): their values stay below 2^88 nearly always (a
  // walk starts about 2^(k + G) times below N). 0: never.
  int narrow_walk_max_bits = 76;
  // T-steps the two-step walk's check looks ahead (LaunchParams::walk_check_bits,
  // WalkLookaheadTable): 2 .. 8. Host model at B52, 2^53 numbers, 30 bits: 1.746 / 1.676 /
  // 1.608 / 1.556 rounds a walk (1.747 with only the even steps of v mod 4, before); a row has
  // 2^(bits + 2) entries, and at 8 bits the rows a walk reads no longer fit the L1: 2^50 at B52
  // on an H100, 4.120e13 before, 4.429e13 at 6 bits, 4.113e13 at 8 (session 41).
  int walk_check_bits = 6;
  // The prelude's entry and in-step checks use the predecessor bounds of the value class
  // that the numbers they decide for share (LaunchParams::group_class_min_odd; 2^66, 2^46
  // delay-only numbers on an H100: 9.04e12 numbers/s with, 8.31e12 without).
  bool group_class_checks = true;
  // And, where the numbers share their residue mod 162, the thresholds of all their smaller
  // ancestors of at most 4 steps (x - 1) / 3 (core/ancestor_bounds.h).
  bool group_ancestor_checks = true;
  // With those checks, each half of a group (members t = 0 and 1 mod 2) one T-step after
  // k + G, where the halves take different steps: a half that stops does not walk (lever 86).
  bool group_half_checks = true;
  // Groups deeper than unchecked_group_bits pay only with those checks, so they need at least
  // this many members (class units: class_deep_group_min_members; 2^60, 2^40 class numbers:
  // 2.01e12 with 256-member groups of 13 bits, 1.81e12 with 64-member groups of 15).
  // Delay-only: 256, so that G keeps 256 to 511 members (about 455 with a 30-bit sieve) in
  // chunks of group_chunk_members 512. Fewer members deeper lose (H100, sessions 39-40: 2^50
  // at B52, 30 bits: 113 members 3.761e13, 227 3.942e13, 455 at G = 8 4.121e13; 2^53 there:
  // 455 at G = 11 4.648e13, 227 at G = 12 4.398e13; 19-bit units of 2^46 at 2^66: 455 at
  // G = 15 1.091e13, 227 at G = 16 1.060e13).
  int deep_group_min_members = 256;
  int class_deep_group_min_members = 256;
  // Walk rounds each lane takes (drawing its group's members from registers) between two
  // warp-wide hand-outs of walking groups.
  int group_walk_rounds = 12;
  // A launch's tail: once no group is left to decide, a generator with at least this many
  // members left gives half of them to an idle lane of its warp (LaunchParams::
  // group_split_min). 0: never.
  int group_tail_split_min = 8;
  // Table steps a walk round takes before its check (1 or 2). Two halve the checks and the
  // member hand-overs per T-step at the price of checking each member half as often
  // (docs/PERFORMANCE.md, lever 53); they need the shared walk table of gpu::kPairStepBits = S
  // (12 or 13), tail_bits >= 2S and N >= 2^(k + G + 2S), else a launch takes one.
  int group_walk_round_steps = 2;
  // Walking groups with more odd steps than this among their k + G shared T-steps walk from k
  // T-steps instead (LaunchParams::group_shallow_steps). 0: as many as keep the step between
  // members, A2 = modulus 3^odd, below 2^64 (38 in delay-only units); tests lower it to reach
  // that path in small units.
  int group_a2_max_odd_steps = 0;
  // Step table of the group walk: 0 uses the global (L2) table of step_bits; 5 up to
  // gpu::kMaxSharedStepBits (13) a table of that width which each block keeps in shared
  // memory: more steps, but no L2 round trip each (the 19-bit table's random reads kept the L2
  // 80% busy; docs/PERFORMANCE.md).
  int group_walk_step_bits = gpu::kPairStepBits;
  // Join map level L (0: off; -1: 32 for sieves up to 22 bits, else 34; at most 34):
  // group walks skip the groups whose numbers all have a smaller twin of the
  // same delay in the unit (the k-bit join sieve carried to L bits over the survivors'
  // lifts: gpu/join_map.h), in units whose bounds are multiples of 2^L and whose groups
  // have k + G >= L. Built on the GPU at the first such search (a radix sort of every lift:
  // for a moment 14 GB at k = 19, L = 32, and 36 GB at k = 28, L = 34; then a map of
  // 2^(L - 1) bytes); without the memory the engine tries 32, then runs without. Results
  // do not change (docs/PERFORMANCE.md, lever 58).
  int join_map_bits = -1;
  // Delay-only units take join maps too: nine variants, one for each H mod 9, since the
  // mod-9 rule decides which twins they examine (gpu/join_map.h; 18 GiB at 32 bits, the
  // automatic level's limit for them).
  bool delay_join_map = true;
  // Plain kernel (class searches, floor 0, shared-memory step table): cap registers at 32
  // so that 2048 threads fit on an SM.
  bool full_occupancy = true;
};

// Sets CUDA_DEVICE_MAX_CONNECTIONS=2 unless the environment sets it (the engine keeps two
// launches in flight; two hardware queues halve the context's creation, 0.12-0.15 s to
// 0.06-0.09 s on an H200). Call at the start of main, before any thread: setenv races with
// getenv elsewhere. The engine's own calls are then no-ops.
void LimitCudaHardwareQueues();

// Number of usable CUDA devices; 0 when there is no GPU or no driver. Never throws.
int GpuDeviceCount();

// Creates the device's primary CUDA context (0.11-0.14 s on an H100 host), which an
// engine's Init then finds ready: a caller starts it early on a thread. Its errors are
// cleared here on purpose; Init meets and reports them.
void WarmGpuContext(int device);

// Creates an engine on options.device. `tables` supplies the sieve and its mod-9 offset
// table (and the host's exact wide path for numbers that leave 128 bits).
Status MakeGpuEngine(std::shared_ptr<const SearchTables> tables, const GpuEngineOptions& options,
                     std::unique_ptr<SearchEngine>* out);

// Counters of the last Search, for tests and the benchmark.
struct GpuSearchStats {
  uint64_t launches = 0;
  uint64_t group_launches = 0;       // of them, residue-group launches
  uint64_t split_launches = 0;       // launches redone in halves after a buffer filled
  uint64_t host_finished = 0;        // numbers finished on the host (128-bit overflow)
  uint64_t ladder_entries = 0;       // tile-local ladder entries the host filtered
  double kernel_seconds = 0;         // summed CUDA-event time of the search launches
  double setup_seconds = 0;          // host time from Search's start to its first launch
  bool unit_tables_reused = false;   // the stop and check tables of the engine's last unit served (same records, floor, holes, kinds)
  uint64_t join_skipped_groups = 0;  // walking residue groups the join map skipped
  uint64_t step_stopped_groups = 0;  // residue groups stopped between their k-th and (k + G)-th T-step
  uint64_t half_stopped_groups = 0;  // walking residue groups of which one half stopped after k + G + 1
  uint64_t tail_splits = 0;          // generators that gave half their members to an idle lane at a launch's tail
  uint64_t shallow_walk_groups = 0;  // walking residue groups walked from k T-steps (A2 could pass 2^64)
  int group_bits = 0;                // the residue groups' width G (0: no group launch; the widest if several)
  int join_map_bits = 0;             // the join map's level (0: none built)
  double join_map_seconds = 0;       // the time its build took (once per engine)
  std::string join_map_unavailable;  // why the device could not hold it, if so
  int tail_bits = 0;                 // the tail table the walks ended in
  bool full_delay = false;           // no early termination: every walk went to the tail
  int self_record_bits = 0;          // the engine's own record table served (complete below 2^bits)
  double self_records_seconds = 0;   // the time its searches took (once per engine)
};
// Stats of the last Search of an engine made by MakeGpuEngine (zeros for other engines).
GpuSearchStats LastGpuSearchStats(const SearchEngine& engine);

}  // namespace collatz
