// The batch-statistics kernel. A persistent grid; each CTA takes whole blocks of 2^k numbers:
//  1. every survivor s (the smallest residue of a (p, c) group) is walked from
//     3^p h + c (k + p steps spent) with the S-bit step table in shared memory until it is
//     below 2^T, then tail[] (device memory) finishes it; its delay goes to shared memory;
//  2. one warp per batch reads delay[rep[i]] for the batch's residues and reduces min, max,
//     count and sum with warp shuffles.
// The first block (h = 0) is not joined (the rule needs h >= 1): its numbers are below
// 2^k <= 2^T and come from tail[] directly; N = 0 is not counted.
// A walk that would leave 128 bits leaves kStatsPending in shared memory and an entry for
// the host, which computes that delay exactly and adds it to the batches it belongs to.
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

// One S-bit step of v = (hi:lo) >= 2^S: v <- 3^p (v >> S) + c, d += S + p; false if it
// would leave 128 bits. steps and pow3 live in shared memory (lanes index them divergently:
// constant memory would serialize).
template <bool kGlobalSteps>
__device__ __forceinline__ bool StepOnce(uint64_t& hi, uint64_t& lo, uint32_t& d, const uint32_t* s_steps,
                                         const uint2* g_steps, const uint32_t* pow3, int S) {
  const uint32_t i = static_cast<uint32_t>(lo) & ((1u << S) - 1);
  uint32_t c, p;
  if (kGlobalSteps) {
    const uint2 e = __ldg(g_steps + i);
    c = e.x;
    p = e.y;
  } else {
    const uint32_t e = s_steps[i];
    c = e & ((1u << 26) - 1);
    p = e >> 26;
  }
  const uint32_t m = pow3[p];
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
  d += static_cast<uint32_t>(S) + p;
  return true;
}

__device__ __forceinline__ void RecordPending(const StatsParams& P, uint64_t h_lo, uint64_t h_hi, uint32_t s,
                                              uint16_t* s_delay) {
  s_delay[s] = kStatsPending;
  const unsigned int slot = atomicAdd(P.finish_count, 1u);
  if (slot < P.finish_capacity) P.finish[slot] = StatsFinishEntry{h_lo, h_hi, s, 0};
}

__device__ __forceinline__ void StoreDelay(const StatsParams& P, uint64_t h_lo, uint64_t h_hi, uint32_t s, uint32_t d,
                                           uint16_t* s_delay) {
  if (d >= kStatsPending) {
    RecordPending(P, h_lo, h_hi, s, s_delay);  // cannot happen below 2^128; never truncated anyway
  } else {
    s_delay[s] = static_cast<uint16_t>(d);
  }
}

// Phase 1, plain: thread t walks survivors t, t + kThreads, ... to the end.
template <int kThreads, bool kGlobalSteps>
__device__ __forceinline__ void WalkSurvivors(const StatsParams& P, uint64_t h_lo, uint64_t h_hi,
                                              const uint32_t* s_steps, const uint32_t* s_pow3, uint16_t* s_delay) {
  for (uint32_t s = threadIdx.x; s < P.survivor_count; s += kThreads) {
    const uint2 e = __ldg(P.survivors + s);
    uint64_t hi = h_hi, lo = h_lo;
    uint32_t d = static_cast<uint32_t>(P.sieve_bits) + e.y;
    bool ok = MulAdd32(hi, lo, s_pow3[e.y], e.x);
    while (ok && (hi != 0 || (lo >> P.tail_bits) != 0)) {
      ok = StepOnce<kGlobalSteps>(hi, lo, d, s_steps, P.global_steps, s_pow3, P.step_bits);
    }
    if (ok) StoreDelay(P, h_lo, h_hi, s, d + __ldg(P.tail + lo), s_delay);
    else RecordPending(P, h_lo, h_hi, s, s_delay);
  }
}

// Phase 1, two walks per thread: survivors s and s + kThreads advance in the same loop, so
// each thread has two independent step-table loads (and, at the end, two tail loads) in
// flight instead of one.
template <int kThreads, bool kGlobalSteps>
__device__ __forceinline__ void WalkSurvivorPairs(const StatsParams& P, uint64_t h_lo, uint64_t h_hi,
                                                  const uint32_t* s_steps, const uint32_t* s_pow3, uint16_t* s_delay) {
  for (uint32_t s0 = threadIdx.x; s0 < P.survivor_count; s0 += 2 * kThreads) {
    const uint32_t s1 = s0 + kThreads;
    const bool has1 = s1 < P.survivor_count;
    const uint2 e0 = __ldg(P.survivors + s0);
    const uint2 e1 = has1 ? __ldg(P.survivors + s1) : make_uint2(0, 0);
    uint64_t hi0 = h_hi, lo0 = h_lo, hi1 = h_hi, lo1 = h_lo;
    uint32_t d0 = static_cast<uint32_t>(P.sieve_bits) + e0.y, d1 = static_cast<uint32_t>(P.sieve_bits) + e1.y;
    bool ok0 = MulAdd32(hi0, lo0, s_pow3[e0.y], e0.x);
    bool ok1 = has1 && MulAdd32(hi1, lo1, s_pow3[e1.y], e1.x);
    bool run0 = ok0 && (hi0 != 0 || (lo0 >> P.tail_bits) != 0);
    bool run1 = ok1 && (hi1 != 0 || (lo1 >> P.tail_bits) != 0);
    while (run0 || run1) {
      if (run0) {
        ok0 = StepOnce<kGlobalSteps>(hi0, lo0, d0, s_steps, P.global_steps, s_pow3, P.step_bits);
        run0 = ok0 && (hi0 != 0 || (lo0 >> P.tail_bits) != 0);
      }
      if (run1) {
        ok1 = StepOnce<kGlobalSteps>(hi1, lo1, d1, s_steps, P.global_steps, s_pow3, P.step_bits);
        run1 = ok1 && (hi1 != 0 || (lo1 >> P.tail_bits) != 0);
      }
    }
    const uint32_t t0 = ok0 ? __ldg(P.tail + lo0) : 0;
    const uint32_t t1 = ok1 ? __ldg(P.tail + lo1) : 0;
    if (ok0) StoreDelay(P, h_lo, h_hi, s0, d0 + t0, s_delay);
    else RecordPending(P, h_lo, h_hi, s0, s_delay);
    if (has1) {
      if (ok1) StoreDelay(P, h_lo, h_hi, s1, d1 + t1, s_delay);
      else RecordPending(P, h_lo, h_hi, s1, s_delay);
    }
  }
}

// Phase 1 with lane refill: each warp owns a contiguous share of the survivors and a lane
// that finishes takes the next one at once, so no lane idles while the slowest of 32 walks.
template <int kThreads, bool kGlobalSteps>
__device__ __forceinline__ void WalkSurvivorsRefill(const StatsParams& P, uint64_t h_lo, uint64_t h_hi,
                                                    const uint32_t* s_steps, const uint32_t* s_pow3,
                                                    uint16_t* s_delay) {
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
          const uint2 e = __ldg(P.survivors + cur);
          hi = h_hi;
          lo = h_lo;
          d = static_cast<uint32_t>(P.sieve_bits) + e.y;
          active = MulAdd32(hi, lo, s_pow3[e.y], e.x);
          if (!active) RecordPending(P, h_lo, h_hi, cur, s_delay);
        }
      }
      next += __popc(idle);
    }
    // Done when no lane walks and nothing is left (all new lanes may have overflowed at once).
    if (!__any_sync(0xFFFFFFFFu, active) && next >= end) break;
    if (active) {
      if (hi == 0 && (lo >> P.tail_bits) == 0) {
        StoreDelay(P, h_lo, h_hi, cur, d + __ldg(P.tail + lo), s_delay);
        active = false;
      } else if (!StepOnce<kGlobalSteps>(hi, lo, d, s_steps, P.global_steps, s_pow3, P.step_bits)) {
        RecordPending(P, h_lo, h_hi, cur, s_delay);
        active = false;
      }
    }
  }
}

// kMode: 0 fixed stride, 1 lane refill, 2 two walks per thread.
template <int kThreads, int kMode, bool kGlobalSteps>
__global__ void __launch_bounds__(kThreads) StatsKernel(const StatsParams P) {
  extern __shared__ uint32_t shared[];
  __shared__ uint32_t s_pow3[21];
  if (threadIdx.x < 21) s_pow3[threadIdx.x] = kPow3Const[threadIdx.x];
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

  for (uint64_t j = blockIdx.x; j < P.blocks; j += gridDim.x) {
    const uint64_t h_lo = P.first_h_lo + j;
    const uint64_t h_hi = P.first_h_hi + (h_lo < j ? 1 : 0);
    const bool first_block = h_lo == 0 && h_hi == 0;

    if (!first_block) {
      if constexpr (kMode == 1) {
        WalkSurvivorsRefill<kThreads, kGlobalSteps>(P, h_lo, h_hi, s_steps, s_pow3, s_delay);
      } else if constexpr (kMode == 2) {
        WalkSurvivorPairs<kThreads, kGlobalSteps>(P, h_lo, h_hi, s_steps, s_pow3, s_delay);
      } else {
        WalkSurvivors<kThreads, kGlobalSteps>(P, h_lo, h_hi, s_steps, s_pow3, s_delay);
      }
    }
    __syncthreads();

    // Launch positions of this block: [j K - begin_offset, (j + 1) K - begin_offset) within [0, numbers).
    const uint64_t block_x = j * K;  // position + begin_offset
    const uint64_t x_begin = block_x > P.begin_offset ? block_x - P.begin_offset : 0;
    const uint64_t x_end_raw = block_x + K - P.begin_offset;
    const uint64_t x_end = x_end_raw < P.numbers ? x_end_raw : P.numbers;
    for (uint64_t b = (x_begin >> P.batch_bits) + warp; b < (x_end >> P.batch_bits); b += kWarps) {
      const uint32_t i0 = static_cast<uint32_t>((b << P.batch_bits) + P.begin_offset - block_x);
      uint32_t mn = 0xFFFFFFFFu, mx = 0, count = 0, sum = 0;
      if (first_block) {
        for (uint32_t t = lane; t < B; t += 32) {
          const uint32_t i = i0 + t;
          if (i == 0) continue;
          const uint32_t d = __ldg(P.tail + i);
          mn = min(mn, d);
          mx = max(mx, d);
          ++count;
          sum += d;
        }
      } else {
        if (P.rep16 != nullptr) {
#pragma unroll 4
          for (uint32_t t = lane; t < B; t += 32) {
            const uint32_t d = s_delay[__ldg(P.rep16 + i0 + t)];
            if (d != kStatsPending) {
              mn = min(mn, d);
              mx = max(mx, d);
              ++count;
              sum += d;
            }
          }
        } else {
#pragma unroll 4
          for (uint32_t t = lane; t < B; t += 32) {
            const uint32_t d = s_delay[__ldg(P.rep + i0 + t)];
            if (d != kStatsPending) {
              mn = min(mn, d);
              mx = max(mx, d);
              ++count;
              sum += d;
            }
          }
        }
      }
      unsigned long long sum64 = sum;
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) {
        mn = min(mn, __shfl_xor_sync(0xFFFFFFFFu, mn, off));
        mx = max(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, off));
        count += __shfl_xor_sync(0xFFFFFFFFu, count, off);
        sum64 += __shfl_xor_sync(0xFFFFFFFFu, sum64, off);
      }
      if (lane == 0) {
        P.out[b] = StatsBatchOut{static_cast<uint16_t>(count == 0 ? 0xFFFFu : mn), static_cast<uint16_t>(mx), count,
                                 sum64};
      }
    }
    __syncthreads();  // s_delay is rewritten by the next block
  }
}

__global__ void FillTailKernel(const uint32_t* steps, int S, uint16_t* tail, int base_bits, int tail_bits,
                               int* failed) {
  __shared__ uint32_t s_pow3[21];
  if (threadIdx.x < 21) s_pow3[threadIdx.x] = kPow3Const[threadIdx.x];
  __syncthreads();
  const uint64_t begin = uint64_t{1} << base_bits, end = uint64_t{1} << tail_bits;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  const uint32_t mask = (1u << S) - 1;
  for (uint64_t n = begin + static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; n < end; n += stride) {
    uint64_t hi = 0, lo = n;
    uint32_t d = 0;
    bool ok = true;
    while (hi != 0 || (lo >> base_bits) != 0) {  // v >= 2^base >= 2^S: the step is valid
      const uint32_t e = __ldg(steps + (static_cast<uint32_t>(lo) & mask));
      const uint32_t p = e >> 26;
      lo = (lo >> S) | (hi << (64 - S));
      hi >>= S;
      if (!MulAdd32(hi, lo, s_pow3[p], e & ((1u << 26) - 1))) {
        ok = false;
        break;
      }
      d += static_cast<uint32_t>(S) + p;
    }
    if (ok) d += tail[lo];
    if (!ok || d >= 0xFFFFu) {
      *failed = 1;
      d = 0xFFFFu;
    }
    tail[n] = static_cast<uint16_t>(d);
  }
}

// The kernel instance for (threads, refill, global steps).
using KernelFn = void (*)(const StatsParams);

template <int kThreads, int kMode>
KernelFn PickSteps(bool global_steps) {
  return global_steps ? StatsKernel<kThreads, kMode, true> : StatsKernel<kThreads, kMode, false>;
}

template <int kThreads>
KernelFn Pick(int mode, bool global_steps) {
  switch (mode) {
    case 0: return PickSteps<kThreads, 0>(global_steps);
    case 1: return PickSteps<kThreads, 1>(global_steps);
    case 2: return PickSteps<kThreads, 2>(global_steps);
    default: return nullptr;
  }
}

KernelFn PickKernel(int block_threads, int mode, bool global_steps) {
  switch (block_threads) {
    case 256: return Pick<256>(mode, global_steps);
    case 512: return Pick<512>(mode, global_steps);
    case 1024: return Pick<1024>(mode, global_steps);
    default: return nullptr;
  }
}

}  // namespace

size_t StatsSharedBytes(int step_bits, uint32_t survivor_count) {
  const size_t steps = step_bits <= kStatsMaxSharedStepBits ? (size_t{1} << step_bits) * sizeof(uint32_t) : 0;
  return steps + ((static_cast<size_t>(survivor_count) * 2 + 15) / 16) * 16;
}

cudaError_t LaunchStats(const StatsParams& p, int block_threads, int mode, int grid_blocks, cudaStream_t stream) {
  const KernelFn kernel = PickKernel(block_threads, mode, p.step_bits > kStatsMaxSharedStepBits);
  if (kernel == nullptr) return cudaErrorInvalidValue;
  const size_t shared = StatsSharedBytes(p.step_bits, p.survivor_count);
  const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared));
  if (e != cudaSuccess) return e;
  kernel<<<grid_blocks, block_threads, shared, stream>>>(p);
  return cudaGetLastError();
}

cudaError_t StatsBlocksPerSm(int block_threads, int mode, int step_bits, uint32_t survivor_count, int* blocks) {
  const KernelFn kernel = PickKernel(block_threads, mode, step_bits > kStatsMaxSharedStepBits);
  if (kernel == nullptr) return cudaErrorInvalidValue;
  const size_t shared = StatsSharedBytes(step_bits, survivor_count);
  const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared));
  if (e != cudaSuccess) return e;
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, block_threads, shared);
}

cudaError_t LaunchStatsFillTail(const uint32_t* steps, int step_bits, uint16_t* tail, int base_bits,
                                int tail_bits, int* failed, cudaStream_t stream) {
  if (tail_bits <= base_bits) return cudaSuccess;
  FillTailKernel<<<132 * 16, 256, 0, stream>>>(steps, step_bits, tail, base_bits, tail_bits, failed);
  return cudaGetLastError();
}

}  // namespace collatz::gpu
