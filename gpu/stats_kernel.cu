// The batch-statistics kernel. A persistent grid; each CTA takes whole blocks of 2^k numbers:
//  1. every survivor s (the smallest residue of a (p, c) group) is walked from
//     3^p h + c (k + p steps spent) with the S-bit step table (shared memory for S <= 13,
//     else global memory/L2) until it is below 2^T, then tail[] (device memory) finishes it;
//     its delay goes to shared memory. While the value is below 2^64 the walk runs a loop on
//     one 64-bit value (fast_steps), which is most of the kernel's instructions;
//  2. one warp per batch reads delay[rep[i]] for the batch's residues and reduces min, max,
//     count and sum with warp shuffles (fast_reduce: 8 indices per 16-byte load and no
//     pending test in blocks where no walk went to the host).
// The first block (h = 0) is not joined (the rule needs h >= 1): its numbers are below
// 2^k <= 2^T and come from tail[] directly; N = 0 is not counted.
// A walk that would leave 128 bits leaves kStatsPending in shared memory and an entry for
// the host, which computes that delay exactly and adds it to the batches it belongs to.
// Every warp adds the numbers it counted to P.counted; the host checks the launch's total.
#include "gpu/stats_kernel.h"

namespace collatz::gpu {
namespace {

__constant__ uint32_t kPow3Const[21] = {1u,       3u,        9u,        27u,        81u,        243u,     729u,
                                        2187u,    6561u,     19683u,    59049u,     177147u,    531441u,  1594323u,
                                        4782969u, 14348907u, 43046721u, 129140163u, 387420489u, 1162261467u,
                                        3486784401u};

// (hi:lo) <- m * (hi:lo) + c for m, c < 2^32 in 32-bit limbs; false if it leaves 128 bits.
__device__ __forceinline__ bool MulAdd32(uint64_t& hi, uint64_t& lo, uint32_t m, uint32_t c) {
  const uint64_t p0 = static_cast<uint64_t>(static_cast<uint32_t>(lo)) * m + c;
  const uint64_t p1 = static_cast<uint64_t>(static_cast<uint32_t>(lo >> 32)) * m + (p0 >> 32);
  const uint64_t p2 = static_cast<uint64_t>(static_cast<uint32_t>(hi)) * m + (p1 >> 32);
  const uint64_t p3 = static_cast<uint64_t>(static_cast<uint32_t>(hi >> 32)) * m + (p2 >> 32);
  lo = (p1 << 32) | static_cast<uint32_t>(p0);
  hi = (p3 << 32) | static_cast<uint32_t>(p2);
  return (p3 >> 32) == 0;
}

// Entry i of the S-bit step table: v = 2^S h + i becomes m h + c after S + p T-steps; dp4 =
// 4 (S + p). The shared table holds c | p << 26 (c < 3^13 < 2^24, so e >> 24 is 4p, the byte
// offset of 3^p in the shared powers: no scaling instruction) and 3^p comes from shared memory
// (lanes index it divergently: constant memory would serialize); the global one holds
// {c, 3^p, 4 (S + p)} in one 16-byte load, so no second dependent load.
template <bool kGlobalSteps>
__device__ __forceinline__ void LoadStep(uint32_t i, const uint32_t* s_steps, const uint4* g_steps,
                                         const uint32_t* pow3, int S, uint32_t& c, uint32_t& m, uint32_t& dp4) {
  if constexpr (kGlobalSteps) {
    const uint4 e = __ldg(g_steps + i);
    c = e.x;
    m = e.y;
    dp4 = e.z;
  } else {
    const uint32_t e = s_steps[i];
    const uint32_t p4 = e >> 24;
    c = e & ((1u << 26) - 1);
    m = *reinterpret_cast<const uint32_t*>(reinterpret_cast<const char*>(pow3) + p4);
    dp4 = p4 + 4 * static_cast<uint32_t>(S);
  }
}

// One S-bit step of v = (hi:lo) >= 2^S: v <- 3^p (v >> S) + c, d += S + p; false if it
// would leave 128 bits.
template <bool kGlobalSteps>
__device__ __forceinline__ bool StepOnce(uint64_t& hi, uint64_t& lo, uint32_t& d, const uint32_t* s_steps,
                                         const uint4* g_steps, const uint32_t* pow3, int S) {
  uint32_t c, m, dp4;
  LoadStep<kGlobalSteps>(static_cast<uint32_t>(lo) & ((1u << S) - 1), s_steps, g_steps, pow3, S, c, m, dp4);
  if (hi == 0) {
    // The common case below 2^64: a 64 x 32-bit product (two limbs), which cannot overflow.
    const uint64_t h = lo >> S;
    const uint64_t p0 = static_cast<uint64_t>(static_cast<uint32_t>(h)) * m + c;
    const uint64_t p1 = static_cast<uint64_t>(static_cast<uint32_t>(h >> 32)) * m + (p0 >> 32);
    lo = (p1 << 32) | static_cast<uint32_t>(p0);
    hi = p1 >> 32;
  } else {
    lo = (lo >> S) | (hi << (64 - S));
    hi >>= S;
    if (!MulAdd32(hi, lo, m, c)) return false;
  }
  d += dp4 >> 2;
  return true;
}

// One S-bit step of a 64-bit v >= 2^S whose result is known to fit 64 bits (v < 2^32 safe_hi):
// two multiplies, the high one only 32 bits wide; d4 counts T-steps times 4.
__device__ __forceinline__ void Step64(uint64_t& v, uint32_t& d4, uint32_t c, uint32_t m, uint32_t dp4, int S) {
  const uint32_t hl = static_cast<uint32_t>(v >> S);
  const uint32_t hh = static_cast<uint32_t>(v >> 32) >> S;
  const uint64_t p0 = static_cast<uint64_t>(hl) * m + c;
  const uint32_t vh = hh * m + static_cast<uint32_t>(p0 >> 32);
  v = (static_cast<uint64_t>(vh) << 32) | static_cast<uint32_t>(p0);
  d4 += dp4;
}

// Steps v = (hi:lo) until it is below 2^T (then tail[lo] finishes it); false if it would
// leave 128 bits. kFast64: while v < 2^32 safe_hi (no step from there can pass 2^64) a loop on
// one 64-bit value, left for a 128-bit step above.
template <bool kGlobalSteps, bool kFast64>
__device__ __forceinline__ bool WalkToTail(const StatsParams& P, uint64_t& hi, uint64_t& lo, uint32_t& d,
                                           const uint32_t* s_steps, const uint32_t* s_pow3) {
  const int S = P.step_bits;
  if constexpr (kFast64) {
    const uint32_t mask = (1u << S) - 1;
    while (true) {
      if (hi == 0) {
        uint32_t d4 = d << 2;
        bool below;
        if (P.tail_bits >= 32) {
          // v >= 2^T and v < 2^32 safe_hi in one unsigned compare of the high word.
          const uint32_t lim_hi = 1u << (P.tail_bits - 32), range = P.safe_hi - lim_hi;
          while (static_cast<uint32_t>(lo >> 32) - lim_hi < range) {
            uint32_t c, m, dp4;
            LoadStep<kGlobalSteps>(static_cast<uint32_t>(lo) & mask, s_steps, P.global_steps, s_pow3, S, c, m, dp4);
            Step64(lo, d4, c, m, dp4, S);
          }
          below = static_cast<uint32_t>(lo >> 32) < lim_hi;
        } else {
          const uint64_t limit = uint64_t{1} << P.tail_bits;
          while (lo >= limit && static_cast<uint32_t>(lo >> 32) < P.safe_hi) {
            uint32_t c, m, dp4;
            LoadStep<kGlobalSteps>(static_cast<uint32_t>(lo) & mask, s_steps, P.global_steps, s_pow3, S, c, m, dp4);
            Step64(lo, d4, c, m, dp4, S);
          }
          below = lo < limit;
        }
        d = d4 >> 2;
        if (below) return true;
      }
      // v >= 2^32 safe_hi > 2^S: a 128-bit step.
      if (!StepOnce<kGlobalSteps>(hi, lo, d, s_steps, P.global_steps, s_pow3, S)) return false;
    }
  } else {
    bool ok = true;
    while (ok && (hi != 0 || (lo >> P.tail_bits) != 0)) {
      ok = StepOnce<kGlobalSteps>(hi, lo, d, s_steps, P.global_steps, s_pow3, S);
    }
    return ok;
  }
}

// Shared state of a CTA besides the tables: 3^p and one "a walk went to the host" flag per
// block parity (the reduction skips its pending test in blocks without one).
struct CtaState {
  uint32_t* pow3;
  int* pending_flag;  // flag of the current block
};

__device__ __forceinline__ void RecordPending(const StatsParams& P, uint64_t h_lo, uint64_t h_hi, uint32_t s,
                                              uint16_t* s_delay, const CtaState& cta) {
  s_delay[s] = kStatsPending;
  *cta.pending_flag = 1;
  const unsigned int slot = atomicAdd(P.finish_count, 1u);
  if (slot < P.finish_capacity) P.finish[slot] = StatsFinishEntry{h_lo, h_hi, s, 0};
}

__device__ __forceinline__ void StoreDelay(const StatsParams& P, uint64_t h_lo, uint64_t h_hi, uint32_t s, uint32_t d,
                                           uint16_t* s_delay, const CtaState& cta) {
  if (d >= kStatsPending) {
    RecordPending(P, h_lo, h_hi, s, s_delay, cta);  // cannot happen below 2^128; never truncated anyway
  } else {
    s_delay[s] = static_cast<uint16_t>(d);
  }
}

// The walk of survivor entry e = {c, 3^p, k + p} of block h: v = 3^p h + c after k + p steps.
template <bool kGlobalSteps, bool kFast64>
__device__ __forceinline__ bool WalkSurvivor(const StatsParams& P, uint4 e, uint64_t h_lo, uint64_t h_hi,
                                             const uint32_t* s_steps, const CtaState& cta, uint64_t& lo,
                                             uint32_t& d) {
  uint64_t hi = h_hi;
  d = e.z;
  if (kFast64 && (h_hi | (h_lo >> 32)) == 0) {
    lo = static_cast<uint64_t>(static_cast<uint32_t>(h_lo)) * e.y + e.x;  // h < 2^32: fits 64 bits
  } else {
    lo = h_lo;
    if (!MulAdd32(hi, lo, e.y, e.x)) return false;
  }
  return WalkToTail<kGlobalSteps, kFast64>(P, hi, lo, d, s_steps, cta.pow3);
}

// Phase 1, fixed stride: thread t walks survivors t, t + kThreads, ... to the end.
// kPrefetch: the tail read of a walk is only consumed after the thread's next walk, so its
// latency (a random read of device memory) overlaps useful work instead of stalling the warp.
template <int kThreads, bool kGlobalSteps, bool kFast64, bool kPrefetch>
__device__ __forceinline__ void WalkSurvivors(const StatsParams& P, uint64_t h_lo, uint64_t h_hi,
                                              const uint32_t* s_steps, uint16_t* s_delay, const CtaState& cta) {
  constexpr uint32_t kNone = 0xFFFFFFFFu;
  uint32_t held = kNone, held_d = 0, held_t = 0;
  for (uint32_t s = threadIdx.x; s < P.survivor_count; s += kThreads) {
    uint64_t lo;
    uint32_t d;
    const bool ok = WalkSurvivor<kGlobalSteps, kFast64>(P, __ldg(P.survivors + s), h_lo, h_hi, s_steps, cta, lo, d);
    if constexpr (kPrefetch) {
      if (held != kNone) StoreDelay(P, h_lo, h_hi, held, held_d + held_t, s_delay, cta);
      held = kNone;
      if (ok) {
        held_t = __ldg(P.tail + lo);
        held_d = d;
        held = s;
      } else {
        RecordPending(P, h_lo, h_hi, s, s_delay, cta);
      }
    } else {
      if (ok) StoreDelay(P, h_lo, h_hi, s, d + __ldg(P.tail + lo), s_delay, cta);
      else RecordPending(P, h_lo, h_hi, s, s_delay, cta);
    }
  }
  if (kPrefetch && held != kNone) StoreDelay(P, h_lo, h_hi, held, held_d + held_t, s_delay, cta);
}

// Phase 1, two walks per thread: survivors s and s + kThreads advance in the same loop, so
// each thread has two independent step-table loads (and, at the end, two tail loads) in
// flight instead of one.
template <int kThreads, bool kGlobalSteps>
__device__ __forceinline__ void WalkSurvivorPairs(const StatsParams& P, uint64_t h_lo, uint64_t h_hi,
                                                  const uint32_t* s_steps, uint16_t* s_delay, const CtaState& cta) {
  const int S = P.step_bits;
  for (uint32_t s0 = threadIdx.x; s0 < P.survivor_count; s0 += 2 * kThreads) {
    const uint32_t s1 = s0 + kThreads;
    const bool has1 = s1 < P.survivor_count;
    const uint4 e0 = __ldg(P.survivors + s0);
    const uint4 e1 = has1 ? __ldg(P.survivors + s1) : make_uint4(0, 1, 0, 0);
    uint64_t hi0 = h_hi, lo0 = h_lo, hi1 = h_hi, lo1 = h_lo;
    uint32_t d0 = e0.z, d1 = e1.z;
    bool ok0 = MulAdd32(hi0, lo0, e0.y, e0.x);
    bool ok1 = has1 && MulAdd32(hi1, lo1, e1.y, e1.x);
    bool run0 = ok0 && (hi0 != 0 || (lo0 >> P.tail_bits) != 0);
    bool run1 = ok1 && (hi1 != 0 || (lo1 >> P.tail_bits) != 0);
    while (run0 || run1) {
      if (run0) {
        ok0 = StepOnce<kGlobalSteps>(hi0, lo0, d0, s_steps, P.global_steps, cta.pow3, S);
        run0 = ok0 && (hi0 != 0 || (lo0 >> P.tail_bits) != 0);
      }
      if (run1) {
        ok1 = StepOnce<kGlobalSteps>(hi1, lo1, d1, s_steps, P.global_steps, cta.pow3, S);
        run1 = ok1 && (hi1 != 0 || (lo1 >> P.tail_bits) != 0);
      }
    }
    const uint32_t t0 = ok0 ? __ldg(P.tail + lo0) : 0;
    const uint32_t t1 = ok1 ? __ldg(P.tail + lo1) : 0;
    if (ok0) StoreDelay(P, h_lo, h_hi, s0, d0 + t0, s_delay, cta);
    else RecordPending(P, h_lo, h_hi, s0, s_delay, cta);
    if (has1) {
      if (ok1) StoreDelay(P, h_lo, h_hi, s1, d1 + t1, s_delay, cta);
      else RecordPending(P, h_lo, h_hi, s1, s_delay, cta);
    }
  }
}

// Phase 1 with lane refill: each warp owns a contiguous share of the survivors and a lane
// that finishes takes the next one at once, so no lane idles while the slowest of 32 walks.
template <int kThreads, bool kGlobalSteps>
__device__ __forceinline__ void WalkSurvivorsRefill(const StatsParams& P, uint64_t h_lo, uint64_t h_hi,
                                                    const uint32_t* s_steps, uint16_t* s_delay, const CtaState& cta) {
  constexpr int kWarps = kThreads / 32;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const uint32_t share = (P.survivor_count + kWarps - 1) / kWarps;
  const uint32_t end = min(P.survivor_count, (warp + 1) * share);
  uint32_t next = min(P.survivor_count, warp * share);  // warp-uniform: first unassigned survivor
  const unsigned lanes_below = (1u << lane) - 1;
  bool active = false;
  uint32_t cur = 0, d = 0;
  uint64_t hi = 0, lo = 0;
  while (true) {
    const unsigned idle = __ballot_sync(0xFFFFFFFFu, !active);
    if (idle != 0 && next < end) {
      if (!active) {
        const uint32_t cand = next + __popc(idle & lanes_below);
        if (cand < end) {
          cur = cand;
          const uint4 e = __ldg(P.survivors + cur);
          hi = h_hi;
          lo = h_lo;
          d = e.z;
          active = MulAdd32(hi, lo, e.y, e.x);
          if (!active) RecordPending(P, h_lo, h_hi, cur, s_delay, cta);
        }
      }
      next += __popc(idle);
    }
    // Done when no lane walks and nothing is left (all new lanes may have overflowed at once).
    if (!__any_sync(0xFFFFFFFFu, active) && next >= end) break;
    if (active) {
      if (hi == 0 && (lo >> P.tail_bits) == 0) {
        StoreDelay(P, h_lo, h_hi, cur, d + __ldg(P.tail + lo), s_delay, cta);
        active = false;
      } else if (!StepOnce<kGlobalSteps>(hi, lo, d, s_steps, P.global_steps, cta.pow3, P.step_bits)) {
        RecordPending(P, h_lo, h_hi, cur, s_delay, cta);
        active = false;
      }
    }
  }
}

// Min, max, count and sum of one batch (positions i0 .. i0 + B of the block) over this lane's
// share; the caller reduces over the warp.
struct LaneStats {
  uint32_t mn = 0xFFFFFFFFu, mx = 0, count = 0, sum = 0;
};

template <bool kFastReduce>
__device__ __forceinline__ void ReduceBatch(const StatsParams& P, uint32_t i0, uint32_t B, int lane, bool first_block,
                                            bool block_pending, const uint16_t* s_delay, LaneStats& r) {
  if (first_block) {
    for (uint32_t t = lane; t < B; t += 32) {
      const uint32_t i = i0 + t;
      if (i == 0) continue;
      const uint32_t d = __ldg(P.tail + i);
      r.mn = min(r.mn, d);
      r.mx = max(r.mx, d);
      ++r.count;
      r.sum += d;
    }
    return;
  }
  if (kFastReduce && !block_pending && P.rep16 != nullptr && B >= 256) {
    // Every delay of the block is known: 8 group indices per 16-byte load, no pending test.
    // i0 is a multiple of B >= 256, so the loads are aligned.
    const uint4* rep = reinterpret_cast<const uint4*>(P.rep16 + i0);
#pragma unroll 2
    for (uint32_t t = lane; t < B / 8; t += 32) {
      const uint4 w = __ldg(rep + t);
      const uint32_t words[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const uint32_t a = s_delay[words[q] & 0xFFFFu], b = s_delay[words[q] >> 16];
        r.mn = min(r.mn, min(a, b));
        r.mx = max(r.mx, max(a, b));
        r.sum += a + b;
      }
    }
    r.count += B / 32;
    return;
  }
  if (P.rep16 != nullptr) {
#pragma unroll 4
    for (uint32_t t = lane; t < B; t += 32) {
      const uint32_t d = s_delay[__ldg(P.rep16 + i0 + t)];
      if (d != kStatsPending) {
        r.mn = min(r.mn, d);
        r.mx = max(r.mx, d);
        ++r.count;
        r.sum += d;
      }
    }
  } else {
#pragma unroll 4
    for (uint32_t t = lane; t < B; t += 32) {
      const uint32_t d = s_delay[__ldg(P.rep + i0 + t)];
      if (d != kStatsPending) {
        r.mn = min(r.mn, d);
        r.mx = max(r.mx, d);
        ++r.count;
        r.sum += d;
      }
    }
  }
}

// kMode: 0 fixed stride (with the kVariant bits), 1 lane refill, 2 two walks per thread.
template <int kThreads, int kMode, int kVariant, bool kGlobalSteps>
__global__ void __launch_bounds__(kThreads) StatsKernel(const StatsParams P) {
  constexpr bool kFastReduce = (kVariant & kStatsFastReduce) != 0;
  extern __shared__ uint32_t shared[];
  __shared__ uint32_t s_pow3[21];
  __shared__ int s_pending[2];
  if (threadIdx.x < 21) s_pow3[threadIdx.x] = kPow3Const[threadIdx.x];
  if (threadIdx.x < 2) s_pending[threadIdx.x] = 0;
  uint32_t* s_steps = shared;
  const uint32_t shared_steps = kGlobalSteps ? 0 : (1u << P.step_bits);
  uint16_t* s_delay = reinterpret_cast<uint16_t*>(shared + shared_steps);
  if constexpr (!kGlobalSteps) {
    for (uint32_t i = threadIdx.x; i < (1u << P.step_bits); i += kThreads) s_steps[i] = __ldg(P.steps + i);
  }
  __syncthreads();

  const int k = P.sieve_bits;
  const uint64_t K = uint64_t{1} << k;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  constexpr int kWarps = kThreads / 32;
  const uint32_t B = 1u << P.batch_bits;
  unsigned long long counted = 0;  // lane 0: numbers counted by this warp

  uint32_t round = 0;
  for (uint64_t j = blockIdx.x; j < P.blocks; j += gridDim.x, ++round) {
    const uint64_t h_lo = P.first_h_lo + j;
    const uint64_t h_hi = P.first_h_hi + (h_lo < j ? 1 : 0);
    const bool first_block = h_lo == 0 && h_hi == 0;
    const CtaState cta{s_pow3, &s_pending[round & 1]};

    if (!first_block) {
      if constexpr (kMode == 1) {
        WalkSurvivorsRefill<kThreads, kGlobalSteps>(P, h_lo, h_hi, s_steps, s_delay, cta);

      } else if constexpr (kMode == 2) {
        WalkSurvivorPairs<kThreads, kGlobalSteps>(P, h_lo, h_hi, s_steps, s_delay, cta);
      } else {
        WalkSurvivors<kThreads, kGlobalSteps, (kVariant & kStatsFast64) != 0, (kVariant & kStatsPrefetchTail) != 0>(
            P, h_lo, h_hi, s_steps, s_delay, cta);
      }
    }
    __syncthreads();
    const bool block_pending = *cta.pending_flag != 0;
    // The other parity's flag was last read before the previous block's final barrier and is
    // next written after this block's: reset it for the next block.
    if (threadIdx.x == 0) s_pending[(round + 1) & 1] = 0;

    // Launch positions of this block: [j K - begin_offset, (j + 1) K - begin_offset) within [0, numbers).
    const uint64_t block_x = j * K;  // position + begin_offset
    const uint64_t x_begin = block_x > P.begin_offset ? block_x - P.begin_offset : 0;
    const uint64_t x_end_raw = block_x + K - P.begin_offset;
    const uint64_t x_end = x_end_raw < P.numbers ? x_end_raw : P.numbers;
    for (uint64_t b = (x_begin >> P.batch_bits) + warp; b < (x_end >> P.batch_bits); b += kWarps) {
      const uint32_t i0 = static_cast<uint32_t>((b << P.batch_bits) + P.begin_offset - block_x);
      LaneStats r;
      ReduceBatch<kFastReduce>(P, i0, B, lane, first_block, block_pending, s_delay, r);
      unsigned long long sum64 = r.sum;
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) {
        r.mn = min(r.mn, __shfl_xor_sync(0xFFFFFFFFu, r.mn, off));
        r.mx = max(r.mx, __shfl_xor_sync(0xFFFFFFFFu, r.mx, off));
        r.count += __shfl_xor_sync(0xFFFFFFFFu, r.count, off);
        sum64 += __shfl_xor_sync(0xFFFFFFFFu, sum64, off);
      }
      if (lane == 0) {
        P.out[b] = StatsBatchOut{static_cast<uint16_t>(r.count == 0 ? 0xFFFFu : r.mn), static_cast<uint16_t>(r.mx),
                                 r.count, sum64};
        counted += r.count;
      }
    }
    __syncthreads();  // s_delay is rewritten by the next block
  }
  if (lane == 0 && counted != 0) atomicAdd(P.counted, counted);
}

// The kernel instance for (threads, mode, variant, global steps); nullptr if not compiled.
using KernelFn = void (*)(const StatsParams);

template <int kThreads, int kMode, int kVariant>
KernelFn PickSteps(bool global_steps) {
  return global_steps ? StatsKernel<kThreads, kMode, kVariant, true> : StatsKernel<kThreads, kMode, kVariant, false>;
}

template <int kThreads>
KernelFn Pick(int mode, int variant, bool global_steps) {
  if (mode == kStatsModeRefill) return PickSteps<kThreads, 1, kStatsFastReduce>(global_steps);
  if (mode == kStatsModePairs) return PickSteps<kThreads, 2, kStatsFastReduce>(global_steps);
  if (mode != kStatsModeStride) return nullptr;
  switch (variant) {
    case 0: return PickSteps<kThreads, 0, 0>(global_steps);
    case 4: return PickSteps<kThreads, 0, 4>(global_steps);
    case 5: return PickSteps<kThreads, 0, 5>(global_steps);
    case 6: return PickSteps<kThreads, 0, 6>(global_steps);
    case 7: return PickSteps<kThreads, 0, 7>(global_steps);
    default: return nullptr;
  }
}

KernelFn PickKernel(int block_threads, int mode, int variant, bool global_steps) {
  switch (block_threads) {
    case 256: return Pick<256>(mode, variant, global_steps);
    case 512: return Pick<512>(mode, variant, global_steps);
    case 1024: return Pick<1024>(mode, variant, global_steps);
    default: return nullptr;
  }
}

}  // namespace

uint32_t StatsSafeHigh(int step_bits) {
  unsigned __int128 pow3 = 1;
  for (int i = 0; i < step_bits; ++i) pow3 *= 3;
  int bits = 63;
  while (pow3 * ((static_cast<unsigned __int128>(1) << (bits - step_bits)) + 1) > (static_cast<unsigned __int128>(1) << 64)) {
    --bits;
  }
  return 1u << (bits - 32);
}

size_t StatsSharedBytes(int step_bits, uint32_t survivor_count) {
  const size_t steps = step_bits <= kStatsMaxSharedStepBits ? (size_t{1} << step_bits) * sizeof(uint32_t) : 0;
  return steps + ((static_cast<size_t>(survivor_count) * 2 + 15) / 16) * 16;
}

bool StatsVariantAvailable(int mode, int variant) { return PickKernel(512, mode, variant, true) != nullptr; }

cudaError_t LaunchStats(const StatsParams& p, int block_threads, int mode, int variant, int grid_blocks,
                        cudaStream_t stream) {
  const KernelFn kernel = PickKernel(block_threads, mode, variant, p.step_bits > kStatsMaxSharedStepBits);
  if (kernel == nullptr) return cudaErrorInvalidValue;
  const size_t shared = StatsSharedBytes(p.step_bits, p.survivor_count);
  const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared));
  if (e != cudaSuccess) return e;
  kernel<<<grid_blocks, block_threads, shared, stream>>>(p);
  return cudaGetLastError();
}

cudaError_t StatsBlocksPerSm(int block_threads, int mode, int variant, int step_bits, uint32_t survivor_count,
                             int* blocks) {
  const KernelFn kernel = PickKernel(block_threads, mode, variant, step_bits > kStatsMaxSharedStepBits);
  if (kernel == nullptr) return cudaErrorInvalidValue;
  const size_t shared = StatsSharedBytes(step_bits, survivor_count);
  const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared));
  if (e != cudaSuccess) return e;
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, block_threads, shared);
}

}  // namespace collatz::gpu
