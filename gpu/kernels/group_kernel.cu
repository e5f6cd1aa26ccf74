// The residue-group kernel (delay-only units with a floor, whole cycles, N < 2^100): its
// decisions, the ring of walking groups and the walk, with its picker (FindGroupKernel); the
// prelude kernels that run ahead of it are in group_prelude_kernel.cu, the host launcher is
// LaunchGroups in gpu/search_launch.cu. Mutations of this file's code (the exactness suite,
// gpu/kernels/group_common.cuh; kMutationStepsShort): =1 the walk ends its members one step
// early, =2 the walk's product loses a carry, =7 a split generator's given half starts one
// member early (GroupSplitTail), =8 a group walked from k T-steps (past group_shallow_steps)
// counts one step too many; 9 and 10 are in walk_check_row.cuh.
#include <type_traits>

#include "gpu/kernels/find_kernels.h"
#include "gpu/kernels/group_common.cuh"
#include "gpu/kernels/walk_check_row.cuh"

namespace collatz::gpu {
namespace {

// Residue groups (delay-only units with a floor, whole cycles, N < 2^100). The walk queue
// (queue_kernel.cu) sets up every computed number; most of them stop within their first 30
// T-steps (docs/PERFORMANCE.md, host model). Here the numbers of one sieve entry whose cycles agree
// mod 2^G (G = group_bits) form a group: after the first k T-steps their values are
// w + A1 2^G t (t = 0, 1, ...: A1 = 3^p * modulus), the next G T-steps depend on w mod 2^G
// alone, and take them to B2 + A2 t after the same s2 steps. A value that grows with t
// meets a fixed stop threshold, so testing the group's last member after k and after
// k + G steps stops the whole group at once. A group that fails both tests goes to a ring
// of walking groups; a lane with nothing to walk takes one as its generator and walks its
// members one after another, each produced by one 128-bit add in registers (no per-member
// queue traffic). The work hash sums over every number's value after k steps in closed
// form, one progression per entry (core/work_hash.h), so results equal the other kernels'
// bit for bit.
struct GroupRing {
  uint64_t lo[kRing];
  uint64_t hi[kRing];
  uint64_t step[kRing];  // A2: the value grows by this from one member to the next
  uint32_t rel[kRing];   // the first member's position; members are 2^G positions apart
  uint16_t s[kRing];     // steps after k + G
  uint16_t n[kRing];     // members
  uint8_t half[kRing];   // 1: every other member only (one half stops, kSkipHalf), 2^(G + 1) positions apart
};

// The sum of v over the warp's lanes (all active), in every lane.
__device__ __forceinline__ uint32_t WarpSum(uint32_t v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  return __reduce_add_sync(0xFFFFFFFFu, v);
#else
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xFFFFFFFFu, v, offset);
  return v;
#endif
}

// (hi:lo) = (a_hi:a_lo) + b in one carry chain.
__device__ __forceinline__ void Sum128(uint64_t& hi, uint64_t& lo, uint64_t a_hi, uint64_t a_lo, uint64_t b) {
  asm("add.cc.u64 %0, %2, %4;\n\taddc.u64 %1, %3, 0;" : "=l"(lo), "=l"(hi) : "l"(a_lo), "l"(a_hi), "l"(b));
}

// A 32-bit load from shared-memory address + kOffset (no generic-to-shared conversion per
// load: the compiler rebuilt the window address from the CTA id on every walk step).
// Volatile: it must stay after the barrier that publishes the table.
template <int kOffset = 0>
__device__ __forceinline__ uint32_t LoadShared(uint32_t address) {
  uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1+%2];" : "=r"(v) : "r"(address), "n"(kOffset));
  return v;
}

// A 64-bit load from shared-memory address (see LoadShared).
__device__ __forceinline__ uint2 LoadShared64(uint32_t address) {
  uint2 v;
  asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "r"(address));
  return v;
}

// Splits a lane's generator (splits): its later gen_left / 2 members go to the ring as a group
// of their own (the value gen + keep * gen_step: no overflow, a member's value fits), the
// lane keeps the first (gen_left + 1) / 2. Positions are 2^shift apart; gen_end_rel is the
// position after the generator's last member.
__device__ __forceinline__ void GroupSplitTail(const LaunchParams& P, bool splits, unsigned lanes_below, uint32_t shift,
                                               uint32_t head, uint32_t& queued, GroupRing& groups, uint64_t gen_hi,
                                               uint64_t gen_lo, uint64_t gen_step, uint32_t gen_s, uint32_t& gen_left,
                                               uint32_t& gen_end_rel, uint8_t half) {
  const uint32_t keep = (gen_left + 1) >> 1, given = gen_left - keep;
  uint64_t part_hi = gen_hi, part_lo = gen_lo;
  const uint32_t part_rel = gen_end_rel - (given << shift);
  if (splits) {
#if COLLATZ_GPU_MUTATION == 7  // exactness suite's mutation check: the given half starts one member early
    AddProduct(part_hi, part_lo, gen_step, keep - 1);
#else
    AddProduct(part_hi, part_lo, gen_step, keep);
#endif
    gen_left = keep;
    gen_end_rel = part_rel;
  }
  const uint32_t queued_before = queued;
  WarpRingPush(splits, lanes_below, head, queued, [&](uint32_t slot) {
    groups.lo[slot] = part_lo;
    groups.hi[slot] = part_hi;
    groups.step[slot] = gen_step;
    groups.rel[slot] = part_rel;
    groups.s[slot] = static_cast<uint16_t>(gen_s);
    groups.n[slot] = static_cast<uint16_t>(given);
    groups.half[slot] = half;
  });
  if (lanes_below == 0 && queued != queued_before) atomicAdd(&P.acc->tail_splits, queued - queued_before);
}

// Bit of a shared-memory step entry that holds StepEntry::two_mod_3.
constexpr int kSharedTwoMod3Bit = 25;

// Copies a step table of `bits` <= kMaxSharedStepBits to shared memory as 4-byte entries
// c | two_mod_3 << 25 | p << 26 (c < 3^13 < 2^25), followed by shared_pow3[p] = 3^p (the
// group kernel keeps both behind one base address).
template <int kThreads>
__device__ __forceinline__ void FillSharedSteps(const StepEntry* table, int bits, uint32_t* shared_steps,
                                                uint32_t* shared_pow3) {
  const uint32_t n = 1u << bits;
  for (uint32_t i = threadIdx.x; i < n; i += kThreads) {
    const uint4 e = __ldg(reinterpret_cast<const uint4*>(table) + i);
    shared_steps[i] = e.x | (e.w << kSharedTwoMod3Bit) | ((e.z - static_cast<uint32_t>(bits)) << 26);
  }
  if (threadIdx.x < 32) {
    uint32_t m = 1;
    for (unsigned j = 0; j < threadIdx.x && j < 20; ++j) m *= 3;
    shared_pow3[threadIdx.x] = m;
  }
}

// One S-bit step of the group walk: (hi:lo) <- 3^p ((hi:lo) >> S) + c, s += S + p, and
// *row_bit = two_mod_3 << kWalkCheckBits (the stop-table entry it selects); false if the
// value would leave 128 bits.
template <int kWalk>
__device__ __forceinline__ bool GroupWalkStep(const uint4* steps, uint32_t shared_steps_at, uint32_t shared_pow3_at,
                                              int S, uint32_t step_mask, uint64_t& hi, uint64_t& lo, uint32_t& s,
                                              uint32_t* row_bit) {
  uint32_t c, m, steps_taken;
  if (kWalk != 0) {
    const uint32_t e = LoadShared(shared_steps_at + ((static_cast<uint32_t>(lo) & step_mask) << 2));
    const uint32_t p = e >> 26;
    c = e & ((1u << kSharedTwoMod3Bit) - 1);
    // Compile-time width: 3^p at an immediate offset from the same base register.
    m = kWalk > 0 ? LoadShared<(4 << (kWalk > 0 ? kWalk : 0))>(shared_steps_at + (p << 2))
                  : LoadShared(shared_pow3_at + (p << 2));
    steps_taken = static_cast<uint32_t>(S) + p;
    *row_bit = (e >> (kSharedTwoMod3Bit - kWalkCheckBits)) & (1u << kWalkCheckBits);
  } else {
    const uint4 e = __ldg(steps + (static_cast<uint32_t>(lo) & step_mask));
    c = e.x;
    m = e.y;
    steps_taken = e.z;
    *row_bit = e.w << kWalkCheckBits;
  }
  const bool fits = StepMulAdd(hi, lo, S, m, c);
  s += steps_taken;
  return fits;
}

// Two-step walk rounds between two hand-outs of walking groups, in every kind of unit (288
// T-steps), so that the hand-out's ballots and ring reads come rarely (H100, 2^60, 2^40
// numbers: 6 / 8 / 10 / 12 / 16 / 24 rounds gave class 1.975 / 1.987 / 1.991 / 1.995 / 1.996
// / 1.991e12, delay-only 8.96e12 at 6, 8.90e12 at 12, 8.62e12 at 16; H200, delay-only at
// 2^66, 2^46 numbers, where groups of 227 members run out rarely: 9.42e12 at 6, 9.52e12 at 12).
constexpr int kPairWalkRounds = 12;
constexpr uint32_t kMutationStepsShort = COLLATZ_GPU_MUTATION == 1 ? 1 : 0;

// The walk table of two-step rounds (kPairStepBits = S, 12 or 13) in shared memory: 8-byte
// entries {PackPairStep(c, steps, StepValueClass(p, c)), 3^p} (steps = S + p <= 2S, c < 3^S).
template <int kThreads>
__device__ __forceinline__ void FillSharedPairSteps(const StepEntry* table, uint2* shared_steps) {
  for (uint32_t i = threadIdx.x; i < (1u << kPairStepBits); i += kThreads) {
    const uint4 e = __ldg(reinterpret_cast<const uint4*>(table) + i);
    shared_steps[i] = make_uint2(PackPairStep(e.x, e.z, StepValueClass(e.z - kPairStepBits, e.x)), e.y);
  }
}

// Two S-bit steps of the group walk (S = kPairStepBits) with one wide multiply. With v =
// 2^2S H + 2^S L + i1 and (c1, m1) the entry of i1, the first step makes v1 = m1 (2^S H + L) +
// c1: its low S bits i2 and v1 >> S = m1 H + q follow from t = m1 L + c1 alone (q = t >> S;
// t < 3^S 2^S: 32 bits for S = 12, 64 from 13 on); the second makes m2 (m1 H + q) + c2 =
// (m1 m2) H + (m2 q + c2): one 96 x 32-bit product when m1 m2 < 2^32 (p1 + p2 <= 20) and H <
// 2^96 (nearly always), else the two steps one by one.
// s += both steps' counts, *row_bit = the second step's value class << kCheckBits (the check
// looks kCheckBits T-steps ahead: LaunchParams::walk_check_bits). A value that would
// leave 128 bits (only on the rare path) goes to on_overflow, which ends the member (s = 0):
// the common path carries no overflow test.
template <bool kNarrow, int kCheckBits, typename OnOverflow>
__device__ __forceinline__ void GroupWalkPairStep(uint32_t table_at, uint64_t& hi, uint64_t& lo, uint32_t& s,
                                                  uint32_t* row_bit, const OnOverflow& on_overflow) {
  constexpr uint32_t kMask = (1u << kPairStepBits) - 1;
  const uint32_t v0 = static_cast<uint32_t>(lo);
  const uint2 e1 = LoadShared64(table_at + ((v0 & kMask) << 3));
  // Bits S .. 2S - 1 of v0 as (v0 << (32 - 2S)) >> (32 - S) with the left shift kept apart (an
  // empty asm), so that it runs as IMAD.SHL on the FMA pipe: the compiler's shift and mask were
  // two instructions on the ALU pipe, which bounds the walk (docs/PERFORMANCE.md, lever 69).
  uint32_t high = v0 << (32 - 2 * kPairStepBits);
  asm("" : "+r"(high));
  // t < 3^S 2^S: below 2^32 for S = 12 (3^12 2^12 < 2^31), a wide multiply-add from 13 on.
  using PairCarry = std::conditional_t<(kPairStepBits > 12), uint64_t, uint32_t>;
  const PairCarry t = static_cast<PairCarry>(e1.y) * (high >> (32 - kPairStepBits)) + (e1.x >> kPairStepCShift);
  const uint2 e2 = LoadShared64(table_at + ((static_cast<uint32_t>(t) & kMask) << 3));
  s += (e1.x & 0x7F) + (e2.x & 0x7F);
  // The class is bits 7 and 8 of the entry's first word (PackPairStep).
  if constexpr (kCheckBits <= 7) {
    *row_bit = (e2.x >> (7 - kCheckBits)) & (3u << kCheckBits);
  } else {
    *row_bit = (e2.x << (kCheckBits - 7)) & (3u << kCheckBits);
  }
  const uint32_t v1 = static_cast<uint32_t>(lo >> 32);
  const uint32_t v2 = static_cast<uint32_t>(hi), v3 = static_cast<uint32_t>(hi >> 32);
  // The fast path needs m = 3^(p1 + p2) < 2^32 (p1 + p2 <= 20) and H < 2^96 (v < 2^120):
  // then H m + a < 2^128 always; kNarrow: H < 2^64 (v < 2^88), then H m + a < 2^96 (a <
  // 2^41), two products fewer. Otherwise (rarely) the two steps one by one.
  const uint32_t beyond = kNarrow ? (v2 >> (2 * kPairStepBits)) | v3 : v3 >> (2 * kPairStepBits);
  if ((__umulhi(e1.y, e2.y) | beyond) != 0) {
    const bool fits = StepMulAdd(hi, lo, kPairStepBits, e1.y, e1.x >> kPairStepCShift);
    if (!(StepMulAdd(hi, lo, kPairStepBits, e2.y, e2.x >> kPairStepCShift) && fits)) on_overflow();
    return;
  }
  const uint32_t m = e1.y * e2.y;
  const uint64_t a = static_cast<uint64_t>(e2.y) * static_cast<uint32_t>(t >> kPairStepBits) + (e2.x >> kPairStepCShift);
  const uint32_t h0 = __funnelshift_r(v0, v1, 2 * kPairStepBits), h1 = __funnelshift_r(v1, v2, 2 * kPairStepBits);
  if constexpr (kNarrow) {
    // H m + a with H = h1:h0 as two chained wide multiply-adds, no add chain: p0 = h0 m + a <
    // 2^64 (m <= 3^20 < 0.82 2^32, a < 3^2S + 3^S < 2^41.3 for S <= 13) and p1 = h1 m + (p0 >> 32) < 2^64, so that the
    // value is p1 2^32 + (p0 mod 2^32): the carry chains' four ALU-pipe adds become moves on
    // the FMA pipe (lever 109, +0.4%). Bits 96 .. 127 come from v3, zero on this path (beyond
    // == 0), kept opaque: a written zero measured 0.2% slower (docs/PERFORMANCE.md).
#if COLLATZ_GPU_MUTATION == 2  // exactness suite's mutation check: the carry out of the lowest limb is lost
    const uint64_t q = static_cast<uint64_t>(h0) * m;
    const uint64_t p0 = static_cast<uint32_t>(static_cast<uint32_t>(q) + static_cast<uint32_t>(a)) |
                        static_cast<uint64_t>(static_cast<uint32_t>(q >> 32) + static_cast<uint32_t>(a >> 32)) << 32;
#else
    const uint64_t p0 = static_cast<uint64_t>(h0) * m + a;
#endif
    const uint64_t p1 = static_cast<uint64_t>(h1) * m + (p0 >> 32);
    uint32_t top = v3;
    asm("" : "+r"(top));
    lo = (p1 << 32) | static_cast<uint32_t>(p0);
    hi = (static_cast<uint64_t>(top) << 32) | static_cast<uint32_t>(p1 >> 32);
    return;
  }
  const uint32_t h2 = __funnelshift_r(v2, v3, 2 * kPairStepBits);
  // H m + a: three 32 x 32 -> 64-bit products, summed in two carry chains.
  uint32_t r0, r1, r2, r3;
  asm("{\n\t.reg .u64 p0, p1, p2;\n\t.reg .u32 l0, x0, l1, x1, l2, x2;\n\t"
      "mul.wide.u32 p0, %4, %7;\n\tmul.wide.u32 p1, %5, %7;\n\tmul.wide.u32 p2, %6, %7;\n\t"
      "mov.b64 {l0, x0}, p0;\n\tmov.b64 {l1, x1}, p1;\n\tmov.b64 {l2, x2}, p2;\n\t"
#if COLLATZ_GPU_MUTATION == 2  // exactness suite's mutation check: the carry out of the lowest limb is lost
      "add.cc.u32 %0, l0, %8;\n\tadd.cc.u32 %1, x0, %9;\n\taddc.cc.u32 %2, x1, 0;\n\taddc.u32 %3, x2, 0;\n\t"
#else
      "add.cc.u32 %0, l0, %8;\n\taddc.cc.u32 %1, x0, %9;\n\taddc.cc.u32 %2, x1, 0;\n\taddc.u32 %3, x2, 0;\n\t"
#endif
      "add.cc.u32 %1, %1, l1;\n\taddc.cc.u32 %2, %2, l2;\n\taddc.u32 %3, %3, 0;\n\t}"
      : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
      : "r"(h0), "r"(h1), "r"(h2), "r"(m), "r"(static_cast<uint32_t>(a)), "r"(static_cast<uint32_t>(a >> 32)));
  lo = (static_cast<uint64_t>(r1) << 32) | r0;
  hi = (static_cast<uint64_t>(r3) << 32) | r2;
}

// A group walk's member that did not stop at a check from tail_from steps on: if its value
// is in the tail, records its delay (s + tail) and returns 0 (it has ended), else returns s.
// Out of line, so that the tail test stays off the walk's common path (inlined, the compiler
// computed it for every member at every check).
__device__ __noinline__ uint32_t GroupWalkTail(const LaunchParams* params, uint32_t rel, uint32_t s, uint64_t hi,
                                               uint64_t lo) {
  const LaunchParams& P = *params;
  if ((hi | (lo >> P.tables.tail_bits)) != 0) return s;
  FinishRel<kGroupRel>(params, rel, s + __ldg(P.tables.tail + lo) - kMutationStepsShort, false);
  return 0;
}

// kWalk: 0 walks on the global (L2) step table; -1 on a shared-memory table of
// P.walk_step_bits; a positive width on a shared-memory table of that many bits, known at
// compile time (immediate shifts and masks: fewer instructions in the issue-bound walk).
// kRoundSteps: table steps per walk round (P.walk_round_steps), each round ending in one
// check and one chance to take the next member.
// kNarrow: two-step rounds take v < 2^88 as their fast path (LaunchParams::walk_narrow).
// kFullDelay: the unit has no early termination (P.early_stop == 0: a provable floor but no
// trusted or covered record table), so no member can stop before the tail: the decisions
// and the walk's check skip the stop tables, and a member whose delay is not open (at most
// the floor and no open hole) finishes without the out-of-line path, which would record
// nothing for it.
template <int kThreads, int kMinBlocks, int kWalk, int kRoundSteps, bool kFullDelay = false, bool kNarrow = false,
          int kCheckBits = kWalkCheckBits>
__global__ void __launch_bounds__(kThreads, kMinBlocks * kThreads > COLLATZ_THREADS_PER_SM
                                                ? COLLATZ_THREADS_PER_SM / kThreads
                                                : kMinBlocks) GroupKernel(const LaunchParams P) {
  static_assert(kRoundSteps == 1 || kRoundSteps == 2, "one or two table steps a round");
  constexpr bool kSharedWalk = kWalk != 0;
  constexpr int kWarps = kThreads / 32;
  __shared__ LaunchParams shared_params;  // for the out-of-line rare paths
  // The walk's step table, then 3^p; or the table of two-step rounds (GroupDynamicShared).
  extern __shared__ uint32_t shared_steps[];
  const int shared_bits = kWalk > 0 ? kWalk : P.walk_step_bits;
  if (threadIdx.x == 0) shared_params = P;
  if (kRoundSteps == 2) {
    FillSharedPairSteps<kThreads>(P.walk_steps, reinterpret_cast<uint2*>(shared_steps));
  } else if (kSharedWalk) {
    FillSharedSteps<kThreads>(P.walk_steps, shared_bits, shared_steps, shared_steps + (1u << shared_bits));
  }
  __syncthreads();
  __shared__ GroupRing group_rings[kWarps];
  // The taken group's half flag (GroupRing::half), for the rare finishing paths: the walking
  // member's position is gen_end_rel - (gen_left + 1) 2^(G + half).
  __shared__ uint8_t lane_half[kThreads];
  const unsigned lane = threadIdx.x & 31;
  const unsigned lanes_below = (1u << lane) - 1;
  GroupRing& groups = group_rings[threadIdx.x / 32];
  const int S = kWalk > 0 ? kWalk : kWalk < 0 ? P.walk_step_bits : P.tables.step_bits;
  const uint32_t step_mask = (1u << S) - 1;
  const int G = P.group_bits;
  const uint32_t group_mask = (1u << G) - 1;
  const uint4* steps = reinterpret_cast<const uint4*>(P.tables.steps);
  // Candidates and work hash of the warp's decisions, in shared memory: they change only in
  // the decisions, and three registers fewer keep the walk free of spills at the 48-register cap.
  __shared__ unsigned long long warp_candidates[kWarps], warp_hash[kWarps];
  if ((threadIdx.x & 31) == 0) {
    warp_candidates[threadIdx.x / 32] = 0;
    warp_hash[threadIdx.x / 32] = 0;
  }
  __syncwarp();
  // Decision rounds of 32 consecutive groups (one entry: 2^G >= 32), handed out one at a
  // time from a launch-wide counter, so that the warps of a block run out of work together
  // (a static split left them waiting at the final barrier for the block's slowest warp).
  // Fetched when needed: a round fetched ahead costs the walk a register (spills).
  auto next_round = [&]() {
    return __shfl_sync(0xFFFFFFFFu, lane == 0 ? atomicAdd(&P.acc->group_rounds_taken, 1u) : 0u, 0);
  };
  uint32_t round = next_round();
  uint32_t group_head = 0, group_queued = 0;  // warp-uniform
  // This lane's generator: the walking group whose members it walks one after another.
  uint64_t gen_lo = 0, gen_hi = 0, gen_step = 0;
  // The position after the generator's last member: the walking member's is
  // gen_end_rel - (gen_left + 1) 2^(G + lane_half) (computed on the rare finishing paths only).
  uint32_t gen_end_rel = 0;
  uint32_t gen_s = 0, gen_left = 0;
  // The member this lane walks and its steps so far; s == 0: none (a member's s is at
  // least k + G). One register less than a separate flag, and no copy per take.
  uint64_t hi = 0, lo = 0;
  uint32_t s = 0;
  // The shared table's address, opaque to the compiler so that it stays in a register (at
  // the 48-register cap it was rebuilt from the CTA id on every step, 5 instructions).
  uint32_t shared_steps_at = static_cast<uint32_t>(__cvta_generic_to_shared(shared_steps));
  asm volatile("" : "+r"(shared_steps_at));
  const uint32_t shared_pow3_at = shared_steps_at + (4u << shared_bits);
  // Below this many steps stop_below[s] >= 2^tail_bits: a number that did not stop is not
  // in the tail, and the walk skips the tail test.
  const uint32_t tail_from = P.walk_tail_from;
  // The two-step walk counts a member's steps from kPairStepOffset (its idle lanes walk too).
  constexpr uint32_t kStepOffset = kRoundSteps == 2 && !kFullDelay ? kPairStepOffset : 0;
  const int walk_rounds = P.walk_rounds;
  while (true) {
    if (group_queued < 32 && round < P.group_rounds) {
      // Decide groups until 32 walking ones are queued (or none are left).
      while (group_queued < 32 && round < P.group_rounds) {
        const uint32_t g = round * 32 + lane;
        round = next_round();
        const uint32_t entry = g >> G, q = g & group_mask;
        const SieveEntry e = P.entries[P.group_first_entry + entry];
        const uint32_t n = GroupMembers(P, q, G);
        // w = 3^p (h0 + r + modulus q) + c: the first member's value after k steps.
        const uint64_t a1 = e.pow3 * P.column_modulus;
        uint64_t w_hi, w_lo;
        EntryValueAfterK(P, e, w_hi, w_lo);
        // Work hash over every number of the entry (values w0 + A1 c after k steps, c <
        // group_cycles): one closed form, by the lane of the entry's group q = 0.
        if (q == 0) atomicAdd(&warp_hash[threadIdx.x / 32], WorkHashProgression(w_lo, a1, P.group_cycles));
        AddProduct(w_hi, w_lo, a1, q);
        const uint32_t warp_n = WarpSum(n);  // n <= 2^16: no overflow
        if (lane == 0) warp_candidates[threadIdx.x / 32] += warp_n;
        // The last member after k steps, then after k + G.
        uint64_t last_hi = w_hi, last_lo = w_lo;
        AddProduct(last_hi, last_lo, a1, static_cast<uint64_t>(n - 1) << G);
        const uint8_t skip = P.group_skip[g];
        bool walks = n != 0 && (skip == 0 || skip >= kSkipHalf) && (kFullDelay || !Below(P, e.steps, last_hi, last_lo));
        uint64_t b2_hi = 0, b2_lo = 0, a2 = 0;
        uint32_t s2 = 0, rel = entry * P.group_cycles + q, n_walk = n, half = 0;
        if (walks) {
          const uint4 t2 = __ldg(reinterpret_cast<const uint4*>(P.group_steps) + (static_cast<uint32_t>(w_lo) & group_mask));
          // A group whose steps after k + G (k + G + p + p2) pass group_shallow_steps, whose
          // A2 = A1 3^p2 would pass 2^64 (p + p2 > 38: rare, and only where k + G > 38), walks
          // whole from k T-steps, 2^G A1 apart (below 2^64: GpuEngine::GroupFits; the prelude
          // made no half check for it). Selects, not a branch: a branch here cost the walk
          // spills at the 48-register cap.
          const bool shallow = e.steps + t2.z > P.group_shallow_steps;
          // B2 = (w >> G) m + c and A2 = A1 m: the G-bit step's (3^p2, c), or for such a group
          // (2^G, w mod 2^G), which give B2 = w and A2 = 2^G A1.
          const uint32_t m = shallow ? 1u << G : t2.y;
          b2_hi = w_hi >> G;
          b2_lo = (w_lo >> G) | (w_hi << (64 - G));
          // No overflow: N < 2^100 and k + G <= 47 (GpuEngine::GroupFits).
          MulAdd(b2_hi, b2_lo, m, shallow ? static_cast<uint32_t>(w_lo) & group_mask : t2.x);
          a2 = a1 * m;
#if COLLATZ_GPU_MUTATION == 8  // exactness suite's mutation check: a member walked from k counts one step too many
          s2 = e.steps + (shallow ? 1u : t2.z);
#else
          s2 = e.steps + (shallow ? 0u : t2.z);
#endif
          if (skip >= kSkipHalf && !shallow && a2 < (uint64_t{1} << 63)) {
            // Only the members t = j (mod 2) walk: B2 + A2 j, 2 A2 apart.
            const uint32_t j = skip - kSkipHalf;
            if (j != 0) Sum128(b2_hi, b2_lo, b2_hi, b2_lo, a2);
            a2 <<= 1;
            n_walk = (n - j + 1) >> 1;
            rel += j << G;
            half = 1;
          }
          uint64_t l2_hi = b2_hi, l2_lo = b2_lo;
          AddProduct(l2_hi, l2_lo, a2, n_walk - 1);
          walks = kFullDelay || !Below(P, s2, l2_hi, l2_lo);
        }
        WarpRingPush(walks, lanes_below, group_head, group_queued, [&](uint32_t slot) {
          groups.lo[slot] = b2_lo;
          groups.hi[slot] = b2_hi;
          groups.step[slot] = a2;
          groups.rel[slot] = rel;
          groups.s[slot] = static_cast<uint16_t>(s2 + kStepOffset);
          groups.n[slot] = static_cast<uint16_t>(n_walk);
          groups.half[slot] = static_cast<uint8_t>(half);
        });
      }
    }
    // Lanes with nothing left to walk take the next walking groups.
    const unsigned needy = __ballot_sync(0xFFFFFFFFu, (s | gen_left) == 0);
    if (needy != 0 && needy != 0xFFFFFFFFu && group_queued == 0 && round >= P.group_rounds &&
        P.group_split_min != 0) {
      // The launch's tail: no group is left to decide or queued, so an idle lane would wait
      // for the warp's longest generator (about half a group's walk a lane: -10% at B with
      // 2^31 positions a launch against 2^32). Generators with at least group_split_min
      // members left give their later half to the ring, one for each idle lane, which the
      // take below hands out.
      const bool donor = gen_left >= P.group_split_min;
      const unsigned donors = __ballot_sync(0xFFFFFFFFu, donor);
      const bool splits = donor && __popc(donors & lanes_below) < __popc(needy);
      GroupSplitTail(P, splits, lanes_below, G + lane_half[threadIdx.x], group_head, group_queued, groups, gen_hi,
                     gen_lo, gen_step, gen_s, gen_left, gen_end_rel, lane_half[threadIdx.x]);
    }
    if (needy != 0 && group_queued != 0) {
      WarpRingTake(needy, (s | gen_left) == 0, lanes_below, group_head, group_queued, [&](uint32_t slot) {
        gen_lo = groups.lo[slot];
        gen_hi = groups.hi[slot];
        gen_step = groups.step[slot];
        gen_s = groups.s[slot];
        gen_left = groups.n[slot];
        lane_half[threadIdx.x] = groups.half[slot];
        gen_end_rel = groups.rel[slot] + (gen_left << (G + groups.half[slot]));
      });
    } else if (needy == 0xFFFFFFFFu) {
      break;  // nothing walks, no group is queued and (see above) none is left to decide
    }
    // Walk rounds: an idle lane takes its generator's next member (registers only), then
    // every live lane takes kRoundSteps steps of its member and checks it: it stops (s +
    // R(v) <= floor), finishes in the tail, or walks on. A member needs no check before its
    // first round: it is at least 2^(kRoundSteps S) (the engine plans groups so), and
    // walking a number that could stop changes no result. Nor does a value need one
    // between the steps of a round: one that did not stop or finish in the tail at the last
    // check is at least 2^tail_bits >= 2^(2S), so both steps are valid (h >= 1), and a value
    // the first step takes into the tail is finished by the check after the second.
    // Several rounds per pass spread the warp-wide bookkeeping above over several steps.
    const uint32_t stop_last = P.walk_stop_last;
    auto walk_round = [&]() {
      if (s == 0 && gen_left != 0) {
        hi = gen_hi;
        lo = gen_lo;
        s = gen_s;
        --gen_left;
        // The next member from the copy (the in-place add made the compiler copy twice).
        Sum128(gen_hi, gen_lo, hi, lo, gen_step);
      }
      if constexpr (kStepOffset != 0) {
        // Every lane walks a round, a lane without a member (s == 0) its stale value: no branch
        // on s (its reconvergence and the copies of s cost about 4 of the round's 70
        // instructions, lever 94). Such a lane has at most 48 < kStepOffset steps after the
        // round, at a row of walk_check that stops every value, so it ends with s == 0 again;
        // the rare paths that its value could take (it leaves 128 bits; it cannot reach the
        // tail test, having stopped) touch nothing (the guard on s). A live member has s >=
        // kStepOffset + k + G: row s of walk_check is row s - kStepOffset of walk_stop.
        uint32_t row_bit;
        GroupWalkPairStep<kNarrow, kCheckBits>(shared_steps_at, hi, lo, s, &row_bit, [&]() {
          if (s >= kStepOffset) {
            FinishRel<kGroupRel>(&shared_params, gen_end_rel - ((gen_left + 1) << (G + lane_half[threadIdx.x])), 0, true);
          }
          s = 0;
        });
        const uint32_t entry = WalkCheckRow(s, stop_last + kStepOffset) * P.pow2[kCheckBits + 2] +
                               (row_bit | (static_cast<uint32_t>(lo) & ((1u << kCheckBits) - 1)));
        // The stop as a select; the tail test out of line (GroupWalkTail). Narrow units read
        // 8-byte thresholds of v >> 32 (a row is one cache line: half the check's L1 traffic).
        bool stops;
        if constexpr (kNarrow) {
          // A lane without a member stops by its s (NarrowWalkStops).
          static_assert(kStepOffset == kPairStepOffset, "the narrow check counts from the pair walk's offset");
          stops = NarrowWalkStops(HighBitsLess(hi, lo, __ldg(P.walk_check_narrow + entry)), s);
        } else {
          const ulonglong2 limit = __ldg(P.walk_check + entry);
          stops = Less128(hi, lo, limit.y, limit.x);
        }
        if (!stops && s >= tail_from + kStepOffset) {
          s = GroupWalkTail(&shared_params, gen_end_rel - ((gen_left + 1) << (G + lane_half[threadIdx.x])),
                            s - kStepOffset, hi, lo) == 0
                  ? 0u
                  : s;
        }
        s = stops ? 0u : s;
        return;
      }
      if (s != 0) {
        // Leaving 128 bits: the host finishes the member exactly; s = 0 ends it here (the
        // tail test below needs s >= tail_from >= 1, so it skips the garbage value).
        auto to_host = [&]() {
          FinishRel<kGroupRel>(&shared_params, gen_end_rel - ((gen_left + 1) << (G + lane_half[threadIdx.x])), 0, true);
          s = 0;
        };
        uint32_t row_bit;
        bool fits = true;
        if constexpr (kFullDelay) {
          static_assert(kRoundSteps == 2, "full-delay walks take two-step rounds");
          GroupWalkPairStep<kNarrow, kWalkCheckBits>(shared_steps_at, hi, lo, s, &row_bit, to_host);
          // s == 0: the member went to the host. Every value at a check is at least 2^(2S)
          // unless it is in the tail (see above), so the tail test is the whole check.
          if (s != 0 && (hi | (lo >> P.tables.tail_bits)) == 0) {
            const uint32_t d = s + __ldg(P.tables.tail + lo) - kMutationStepsShort;
            if (d > P.floor || d >= kClassSlots ||
                (P.classes && __ldg(P.tables.hole_prefix + d + 1) != __ldg(P.tables.hole_prefix + d))) {
              FinishRel<kGroupRel>(&shared_params, gen_end_rel - ((gen_left + 1) << (G + lane_half[threadIdx.x])), d, false);
            }
            s = 0;
          }
          return;
        } else if constexpr (kRoundSteps == 2) {
          GroupWalkPairStep<kNarrow, kWalkCheckBits>(shared_steps_at, hi, lo, s, &row_bit, to_host);
        } else {
          fits = GroupWalkStep<kWalk>(steps, shared_steps_at, shared_pow3_at, S, step_mask, hi, lo, s, &row_bit);
        }
        // v with e trailing zeros has delay e + delay(v >> e), and v = 2 (mod 3) has the
        // smaller predecessor (2v - 1) / 3: the check selects its threshold by both
        // (P.walk_stop). Loaded before the one-step round's overflow branch, so that the load
        // overlaps the rest of the multiply (its latency was the largest stall).
        // Row and entry in one multiply-add by a stride the compiler cannot see (FMA pipe; its
        // shift and add, then a LEA pair, ran on the ALU pipe), the address in one wide one.
        const uint32_t entry = min(s, stop_last) * P.pow2[kWalkRowBits] +
                               (row_bit | (static_cast<uint32_t>(lo) & ((1u << kWalkCheckBits) - 1)));
        const ulonglong2 limit = __ldg(P.walk_stop + entry);
        if (!fits) {
          to_host();
        } else if (Less128(hi, lo, limit.y, limit.x)) {
          s = 0;
        } else if (s >= tail_from && (hi | (lo >> P.tables.tail_bits)) == 0) {
          FinishRel<kGroupRel>(&shared_params, gen_end_rel - ((gen_left + 1) << (G + lane_half[threadIdx.x])),
                               s + __ldg(P.tables.tail + lo) - kMutationStepsShort, false);
          s = 0;
        }
      }
    };
    if constexpr (kRoundSteps == 2) {
      // A fixed count, two rounds a loop pass (unrolled further it spills at the 48-register cap).
      static_assert(kPairWalkRounds % 2 == 0, "rounds two to a loop pass");
      for (int r = 0; r < kPairWalkRounds / 2; ++r) {
        walk_round();
        walk_round();
      }
    } else {
      for (int r = 0; r < walk_rounds; ++r) walk_round();
    }
  }
  __syncwarp();
  AddTotals<kThreads>(P, lane == 0 ? warp_candidates[threadIdx.x / 32] : 0, 0, 0,
                      lane == 0 ? warp_hash[threadIdx.x / 32] : 0);
}

template <int kThreads, int kWalk, int kRoundSteps, bool kFullDelay = false, bool kNarrow = false,
          int kCheckBits = kWalkCheckBits>
cudaError_t GroupKernelFor(int threads_per_sm, void (**kernel)(LaunchParams)) {
  switch (threads_per_sm) {
    case 0: *kernel = GroupKernel<kThreads, 1, kWalk, kRoundSteps, kFullDelay, kNarrow, kCheckBits>; break;
    case 1280:
      *kernel = GroupKernel<kThreads, (1280 / kThreads > 0 ? 1280 / kThreads : 1), kWalk, kRoundSteps, kFullDelay,
                            kNarrow, kCheckBits>;
      break;
    case 1536: *kernel = GroupKernel<kThreads, 1536 / kThreads, kWalk, kRoundSteps, kFullDelay, kNarrow, kCheckBits>; break;
    default: *kernel = nullptr; return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

template <int kThreads>
cudaError_t GroupKernelSized(int threads_per_sm, int walk_step_bits, void (**kernel)(LaunchParams)) {
  // The default width (kPairStepBits) has its own instantiation; other shared widths read it at run time.
  return walk_step_bits == kPairStepBits ? GroupKernelFor<kThreads, kPairStepBits, 1>(threads_per_sm, kernel)
         : walk_step_bits > 0 ? GroupKernelFor<kThreads, -1, 1>(threads_per_sm, kernel)
                              : GroupKernelFor<kThreads, 0, 1>(threads_per_sm, kernel);
}

// The two-step walk with early termination, narrow or not, whose check looks kCheckBits
// T-steps ahead.
template <int kCheckBits>
cudaError_t PairGroupKernelFor(int threads_per_sm, bool narrow, void (**kernel)(LaunchParams)) {
  constexpr int T = kPairWalkBlockThreads, W = kPairStepBits;
  return narrow ? GroupKernelFor<T, W, 2, false, true, kCheckBits>(threads_per_sm, kernel)
                : GroupKernelFor<T, W, 2, false, false, kCheckBits>(threads_per_sm, kernel);
}

}  // namespace

// The group kernel of a block size, register cap, walk table (shared when walk_step_bits >
// 0), steps a walk round (two: kPairStepBits-bit table, kPairWalkBlockThreads threads), early
// termination or none (full_delay) and, for two-step rounds, the narrow fast path and the
// T-steps their check looks ahead (check_bits: kMinWalkCheckBits .. kMaxWalkCheckBits).
cudaError_t FindGroupKernel(int block_threads, int threads_per_sm, int walk_step_bits, int round_steps,
                            bool full_delay, bool narrow, int check_bits, void (**kernel)(LaunchParams)) {
  if (walk_step_bits < 0 || walk_step_bits > kMaxSharedStepBits) return cudaErrorInvalidValue;
  if (round_steps == 2) {
    if (walk_step_bits != kPairStepBits || block_threads != kPairWalkBlockThreads) return cudaErrorInvalidValue;
    constexpr int T = kPairWalkBlockThreads, W = kPairStepBits;
    if (full_delay) {
      return narrow ? GroupKernelFor<T, W, 2, true, true>(threads_per_sm, kernel)
                    : GroupKernelFor<T, W, 2, true, false>(threads_per_sm, kernel);
    }
    static_assert(kMinWalkCheckBits == 2 && kMaxWalkCheckBits == 8, "the widths instantiated below");
    switch (check_bits) {
      case 2: return PairGroupKernelFor<2>(threads_per_sm, narrow, kernel);
      case 3: return PairGroupKernelFor<3>(threads_per_sm, narrow, kernel);
      case 4: return PairGroupKernelFor<4>(threads_per_sm, narrow, kernel);
      case 5: return PairGroupKernelFor<5>(threads_per_sm, narrow, kernel);
      case 6: return PairGroupKernelFor<6>(threads_per_sm, narrow, kernel);
      case 7: return PairGroupKernelFor<7>(threads_per_sm, narrow, kernel);
      case 8: return PairGroupKernelFor<8>(threads_per_sm, narrow, kernel);
      default: return cudaErrorInvalidValue;
    }
  }
  if (round_steps != 1) return cudaErrorInvalidValue;
  switch (block_threads) {
    case 128: return GroupKernelSized<128>(threads_per_sm, walk_step_bits, kernel);
    case 256: return GroupKernelSized<256>(threads_per_sm, walk_step_bits, kernel);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace collatz::gpu
