// The search kernel: one thread per computed number (sieve-offset entry or, in the first
// block, odd number kept by the kind's mod rule), a persistent grid walking tiles of
// consecutive positions, so each tile is an ascending run of N and a block-wide prefix
// max finds the tile's ladder entries.
#include "gpu/search_kernels.h"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

namespace collatz::gpu {
namespace {

__device__ __forceinline__ uint64_t Mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// (hi:lo) <- m * (hi:lo) + c; false if the result would not fit in 128 bits (SPEC 4).
__device__ __forceinline__ bool MulAdd(uint64_t& hi, uint64_t& lo, uint64_t m, uint64_t c) {
  const uint64_t p_lo = lo * m;
  const uint64_t p_mid = __umul64hi(lo, m);
  const uint64_t q_lo = hi * m;
  const uint64_t q_hi = __umul64hi(hi, m);
  uint64_t r_hi = p_mid + q_lo;
  bool overflow = (q_hi != 0) | (r_hi < p_mid);
  const uint64_t r_lo = p_lo + c;
  const uint64_t carry = r_lo < p_lo ? 1 : 0;
  const uint64_t r_hi2 = r_hi + carry;
  overflow |= r_hi2 < r_hi;
  hi = r_hi2;
  lo = r_lo;
  return !overflow;
}

__device__ __forceinline__ int BitLength(uint64_t hi, uint64_t lo) {
  if (hi != 0) return 128 - __clzll(static_cast<long long>(hi));
  return lo == 0 ? 0 : 64 - __clzll(static_cast<long long>(lo));
}

// EarlyTermination::CanStop, on the device copy of its tables.
__device__ __forceinline__ bool CanStop(const LaunchParams& P, uint32_t s, uint64_t hi, uint64_t lo) {
  const int b = BitLength(hi, lo);
  unsigned j = 0;
  if (b >= 4) {
    const int sh = b - 4;
    uint64_t x;
    if (sh >= 64) {
      x = hi >> (sh - 64);
    } else if (sh == 0) {
      x = lo;
    } else {
      x = (lo >> sh) | (hi << (64 - sh));
    }
    j = static_cast<unsigned>(x) & 7u;
  }
  const uint32_t top = s + __ldg(P.tables.bound + ((b << 3) | j));
  if (top > P.floor) return false;
  if (!P.classes) return true;
  const uint32_t low = s + static_cast<uint32_t>(b) - 1;
  return low <= top && __ldg(P.tables.hole_prefix + top + 1) == __ldg(P.tables.hole_prefix + low);
}

enum Outcome { kFinished = 0, kStopped = 1, kHostFinish = 2 };

// Walks a number that has reached (hi:lo) after s steps.
__device__ __forceinline__ int Walk(const LaunchParams& P, uint64_t hi, uint64_t lo, uint32_t s, uint32_t* delay) {
  const int S = P.tables.step_bits;
  const int T = P.tables.tail_bits;
  const uint64_t step_mask = (uint64_t{1} << S) - 1;
  const uint4* steps = reinterpret_cast<const uint4*>(P.tables.steps);
  while (true) {
    if (P.early_stop && CanStop(P, s, hi, lo)) return kStopped;
    if (hi == 0 && (lo >> T) == 0) {
      *delay = s + __ldg(P.tables.tail + lo);
      return kFinished;
    }
    const uint4 e = __ldg(steps + (lo & step_mask));
    uint64_t h_hi = hi >> S;
    uint64_t h_lo = (lo >> S) | (hi << (64 - S));
    if (!MulAdd(h_hi, h_lo, e.y, e.x)) return kHostFinish;
    hi = h_hi;
    lo = h_lo;
    s += e.z;
  }
}

struct MaxOp {
  __device__ __forceinline__ uint32_t operator()(uint32_t a, uint32_t b) const { return a > b ? a : b; }
};

template <int kThreads, bool kSieved>
__global__ void __launch_bounds__(kThreads) SearchKernel(const LaunchParams P) {
  using Scan = cub::BlockScan<uint32_t, kThreads>;
  using Reduce = cub::BlockReduce<unsigned long long, kThreads>;
  __shared__ union {
    typename Scan::TempStorage scan;
    typename Reduce::TempStorage reduce;
  } temp;

  unsigned long long my_candidates = 0, my_count = 0, my_sum = 0, my_hash = 0;
  for (uint64_t tile = P.tile_begin + blockIdx.x; tile < P.tile_end; tile += gridDim.x) {
    bool active;
    bool first_overflow = false;
    uint64_t n_hi = 0, n_lo = 0, v_hi = 0, v_lo = 0, rel = 0;
    uint32_t s = 0;
    if (kSieved) {
      const uint64_t cycle = tile / P.tiles_per_cycle;
      const uint32_t rem = static_cast<uint32_t>(tile - cycle * P.tiles_per_cycle) * kThreads + threadIdx.x;
      const uint64_t pos = cycle * P.cycle_len + rem;
      active = rem < P.cycle_len && pos >= P.pos_begin && pos < P.pos_end;
      if (active) {
        const SieveEntry e = P.entries[rem];
        rel = cycle * P.cycle_stride + e.offset;  // N - base (< 2^64, checked on the host)
        n_lo = P.base_lo + rel;
        n_hi = P.base_hi + (n_lo < rel ? 1 : 0);
        const int k = P.sieve_bits;
        v_hi = n_hi >> k;
        v_lo = (n_lo >> k) | (n_hi << (64 - k));
        my_hash += Mix64(v_lo * e.pow3 + e.c);
        first_overflow = !MulAdd(v_hi, v_lo, e.pow3, e.c);
        s = e.steps;
      }
    } else {
      const uint64_t pos = tile * kThreads + threadIdx.x;
      active = pos >= P.pos_begin && pos < P.pos_end;
      if (active) {
        n_lo = static_cast<uint64_t>(P.period) * (pos / P.npat) + P.pattern[pos % P.npat];
        rel = n_lo;
        v_lo = n_lo;
        my_hash += Mix64(n_lo);
      }
    }
    uint32_t key = 0;
    if (active) {
      ++my_candidates;
      uint32_t d = 0;
      int outcome = first_overflow ? kHostFinish : Walk(P, v_hi, v_lo, s, &d);
      if (outcome == kFinished && d >= kClassSlots) outcome = kHostFinish;
      if (outcome == kHostFinish) {
        const unsigned long long i = atomicAdd(&P.acc->host_finish_count, 1ULL);
        if (i < P.host_finish_capacity) P.host_finish[i] = HostFinishEntry{n_lo, n_hi};
      } else if (outcome == kFinished) {
        const bool open =
            d > P.floor || (P.classes && __ldg(P.tables.hole_prefix + d + 1) != __ldg(P.tables.hole_prefix + d));
        if (open) {
          ++my_count;
          my_sum += d;
          if (P.classes) {
            unsigned long long* slot = P.class_min + d;
            if (rel < *slot) atomicMin(slot, static_cast<unsigned long long>(rel));
          }
        }
        if (d > P.ladder_floor) key = d;
      }
    }
    // Ladder: entries above the floor and above every earlier delay of the tile.
    if (__syncthreads_or(key != 0)) {
      uint32_t before;
      Scan(temp.scan).ExclusiveScan(key, before, 0u, MaxOp());
      if (key != 0 && key > before) {
        const unsigned long long i = atomicAdd(&P.acc->ladder_count, 1ULL);
        if (i < P.ladder_capacity) P.ladder[i] = LadderEntry{n_lo, n_hi, key, 0};
      }
      __syncthreads();
    }
  }

  unsigned long long values[4] = {my_candidates, my_count, my_sum, my_hash};
  unsigned long long* targets[4] = {&P.acc->candidates, &P.acc->tally_count, &P.acc->tally_sum, &P.acc->work_hash};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const unsigned long long total = Reduce(temp.reduce).Sum(values[i]);
    if (threadIdx.x == 0 && total != 0) atomicAdd(targets[i], total);
    __syncthreads();
  }
}

template <int kThreads>
cudaError_t LaunchSized(const LaunchParams& p, int grid_blocks, cudaStream_t stream) {
  if (p.entries != nullptr) {
    SearchKernel<kThreads, true><<<grid_blocks, kThreads, 0, stream>>>(p);
  } else {
    SearchKernel<kThreads, false><<<grid_blocks, kThreads, 0, stream>>>(p);
  }
  return cudaGetLastError();
}

__global__ void FillTailKernel(const StepEntry* steps, int step_bits, uint16_t* tail, int base_bits,
                               uint64_t first, uint64_t count, int* failed) {
  const uint64_t step_mask = (uint64_t{1} << step_bits) - 1;
  const uint4* table = reinterpret_cast<const uint4*>(steps);
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint64_t hi = 0, lo = first + i;
    uint32_t s = 0;
    bool ok = true;
    while (hi != 0 || (lo >> base_bits) != 0) {
      const uint4 e = __ldg(table + (lo & step_mask));
      uint64_t h_hi = hi >> step_bits;
      uint64_t h_lo = (lo >> step_bits) | (hi << (64 - step_bits));
      if (!MulAdd(h_hi, h_lo, e.y, e.x)) {
        ok = false;
        break;
      }
      hi = h_hi;
      lo = h_lo;
      s += e.z;
    }
    const uint32_t d = ok ? s + tail[lo] : 0;
    if (!ok || d > 0xFFFF) {
      atomicExch(failed, 1);
    } else {
      tail[first + i] = static_cast<uint16_t>(d);
    }
  }
}

}  // namespace

cudaError_t LaunchSearch(const LaunchParams& p, int block_threads, int grid_blocks, cudaStream_t stream) {
  switch (block_threads) {
    case 128: return LaunchSized<128>(p, grid_blocks, stream);
    case 256: return LaunchSized<256>(p, grid_blocks, stream);
    case 512: return LaunchSized<512>(p, grid_blocks, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t SearchBlocksPerSm(int block_threads, int* blocks) {
  switch (block_threads) {
    case 128: return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, SearchKernel<128, true>, 128, 0);
    case 256: return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, SearchKernel<256, true>, 256, 0);
    case 512: return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, SearchKernel<512, true>, 512, 0);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchFillTail(const StepEntry* steps, int step_bits, uint16_t* tail, int base_bits, int tail_bits,
                           int* failed, cudaStream_t stream) {
  if (tail_bits <= base_bits) return cudaSuccess;
  const uint64_t first = uint64_t{1} << base_bits;
  const uint64_t count = (uint64_t{1} << tail_bits) - first;
  FillTailKernel<<<4096, 256, 0, stream>>>(steps, step_bits, tail, base_bits, first, count, failed);
  return cudaGetLastError();
}

}  // namespace collatz::gpu
