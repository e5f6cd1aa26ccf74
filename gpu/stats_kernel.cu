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

// Walks v (after `d` steps) with the S-bit table until v < 2^tail_bits; returns the delay,
// or kStatsPending if a step would leave 128 bits.
// steps and pow3 live in shared memory (lanes index them divergently: constant memory would serialize).
__device__ __forceinline__ uint32_t WalkToTail(uint64_t hi, uint64_t lo, uint32_t d, const uint32_t* steps,
                                               const uint32_t* pow3, int S, const uint16_t* tail, int tail_bits) {
  const uint32_t mask = (1u << S) - 1;
  while (hi != 0 || (lo >> tail_bits) != 0) {
    const uint32_t e = steps[static_cast<uint32_t>(lo) & mask];
    const uint32_t p = e >> 26;
    const uint32_t m = pow3[p];
    if (hi == 0) {
      // The common case below 2^64: a 64 x 32-bit product (two limbs), which cannot overflow.
      const uint64_t h = lo >> S;
      const uint64_t p0 = static_cast<uint64_t>(static_cast<uint32_t>(h)) * m + (e & ((1u << 26) - 1));
      const uint64_t p1 = static_cast<uint64_t>(static_cast<uint32_t>(h >> 32)) * m + (p0 >> 32);
      lo = (p1 << 32) | static_cast<uint32_t>(p0);
      hi = p1 >> 32;
    } else {
      lo = (lo >> S) | (hi << (64 - S));
      hi >>= S;
      if (!MulAdd32(hi, lo, m, e & ((1u << 26) - 1))) return kStatsPending;
    }
    d += static_cast<uint32_t>(S) + p;
  }
  return d + __ldg(tail + lo);
}

template <int kThreads>
__global__ void __launch_bounds__(kThreads) StatsKernel(const StatsParams P) {
  extern __shared__ uint32_t shared[];
  __shared__ uint32_t s_pow3[21];
  if (threadIdx.x < 21) s_pow3[threadIdx.x] = kPow3Const[threadIdx.x];
  uint32_t* s_steps = shared;
  uint16_t* s_delay = reinterpret_cast<uint16_t*>(shared + (1u << P.step_bits));
  for (uint32_t i = threadIdx.x; i < (1u << P.step_bits); i += kThreads) s_steps[i] = __ldg(P.steps + i);
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
      for (uint32_t s = threadIdx.x; s < P.survivor_count; s += kThreads) {
        const uint2 e = __ldg(P.survivors + s);
        uint64_t hi = h_hi, lo = h_lo;
        uint32_t d = kStatsPending;
        if (MulAdd32(hi, lo, s_pow3[e.y], e.x)) {
          d = WalkToTail(hi, lo, static_cast<uint32_t>(k) + e.y, s_steps, s_pow3, P.step_bits, P.tail, P.tail_bits);
        }
        if (d >= kStatsPending) {
          d = kStatsPending;
          const unsigned int slot = atomicAdd(P.finish_count, 1u);
          if (slot < P.finish_capacity) P.finish[slot] = StatsFinishEntry{h_lo, h_hi, s, 0};
        }
        s_delay[s] = static_cast<uint16_t>(d);
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

template <int kThreads>
cudaError_t Launch(const StatsParams& p, int grid_blocks, cudaStream_t stream) {
  const size_t shared = StatsSharedBytes(p.step_bits, p.survivor_count);
  cudaError_t e = cudaFuncSetAttribute(StatsKernel<kThreads>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(shared));
  if (e != cudaSuccess) return e;
  StatsKernel<kThreads><<<grid_blocks, kThreads, shared, stream>>>(p);
  return cudaGetLastError();
}

template <int kThreads>
cudaError_t Occupancy(size_t shared, int* blocks) {
  cudaError_t e = cudaFuncSetAttribute(StatsKernel<kThreads>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(shared));
  if (e != cudaSuccess) return e;
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, StatsKernel<kThreads>, kThreads, shared);
}

}  // namespace

size_t StatsSharedBytes(int step_bits, uint32_t survivor_count) {
  return (size_t{1} << step_bits) * sizeof(uint32_t) + ((static_cast<size_t>(survivor_count) * 2 + 15) / 16) * 16;
}

cudaError_t LaunchStats(const StatsParams& p, int block_threads, int grid_blocks, cudaStream_t stream) {
  switch (block_threads) {
    case 256: return Launch<256>(p, grid_blocks, stream);
    case 512: return Launch<512>(p, grid_blocks, stream);
    case 1024: return Launch<1024>(p, grid_blocks, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t StatsBlocksPerSm(int block_threads, size_t shared_bytes, int* blocks) {
  switch (block_threads) {
    case 256: return Occupancy<256>(shared_bytes, blocks);
    case 512: return Occupancy<512>(shared_bytes, blocks);
    case 1024: return Occupancy<1024>(shared_bytes, blocks);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchStatsFillTail(const uint32_t* steps, int step_bits, uint16_t* tail, int base_bits,
                                int tail_bits, int* failed, cudaStream_t stream) {
  if (tail_bits <= base_bits) return cudaSuccess;
  FillTailKernel<<<132 * 16, 256, 0, stream>>>(steps, step_bits, tail, base_bits, tail_bits, failed);
  return cudaGetLastError();
}

}  // namespace collatz::gpu
