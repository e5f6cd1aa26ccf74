// The plain search kernel (SearchKernel) and its instantiation picker (FindSearchKernel); the
// host launchers are in gpu/search_launch.cu, the device functions it shares with the other
// kernels in walk_common.cuh.
// One thread per computed number (sieve-offset entry or, in the first block, odd number kept
// by the kind's mod rule) on a persistent grid in which each warp walks tiles of 32
// consecutive positions, so a tile is an ascending run of N and a warp prefix max finds its
// ladder entries. Warps never wait for each other (no block barrier per tile): with early
// termination the lengths of the numbers are very uneven, and a block-wide tile would make 8
// warps wait for the slowest of 256 lanes.
// The step table lives either in global memory (L2; S <= 20, 16-byte entries) or, for
// S <= 13, in shared memory (4-byte entries c | p << 26).
// QueueKernel (queue_kernel.cu) is the faster kernel for delay-only units with a floor, and
// GroupKernel (group_kernel.cu), which stops whole residue groups at once and hands the rest
// to a walk queue, the fastest for the whole cycles of such units; this one serves
// the rest (class searches, floor 0, shared-memory step tables). All return identical
// results. Variants measured slower and removed: docs/PERFORMANCE.md, GPU levers.
#include "gpu/kernels/find_kernels.h"
#include "gpu/kernels/walk_common.cuh"

namespace collatz::gpu {
namespace {

// One step of the walk of a number at (hi:lo) after s steps.
template <bool kSharedSteps>
__device__ __forceinline__ int WalkStep(const LaunchParams& P, const uint32_t* shared_steps,
                                        const uint32_t* shared_pow3, uint64_t& hi, uint64_t& lo, uint32_t& s,
                                        uint32_t* delay) {
  if (P.early_stop && CanStop(P, s, hi, lo)) return kStopped;
  if (hi == 0 && (lo >> P.tables.tail_bits) == 0) {
    *delay = s + __ldg(P.tables.tail + lo);
    return kFinished;
  }
  const int S = P.tables.step_bits;
  const uint64_t i = lo & ((uint64_t{1} << S) - 1);
  uint32_t c, m, steps;
  if (kSharedSteps) {
    const uint32_t e = shared_steps[i];
    const uint32_t p = e >> 26;
    c = e & ((1u << 26) - 1);
    m = shared_pow3[p];
    steps = static_cast<uint32_t>(S) + p;
  } else {
    const uint4 e = __ldg(reinterpret_cast<const uint4*>(P.tables.steps) + i);
    c = e.x;
    m = e.y;
    steps = e.z;
  }
  if (!StepMulAdd(hi, lo, S, m, c)) return kHostFinish;
  s += steps;
  return kContinue;
}

// kMinBlocks = 2048 / kThreads caps registers at 32 for full occupancy (more warps to
// hide the step table's L2 latency, at the price of a few spills).
template <int kThreads, bool kSieved, bool kSharedSteps, int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks == 1 ? 1 : COLLATZ_THREADS_PER_SM / kThreads)
    SearchKernel(const LaunchParams P) {
  extern __shared__ uint32_t shared_steps[];
  __shared__ uint32_t shared_pow3[32];
  if (kSharedSteps) {
    const uint32_t n = 1u << P.tables.step_bits;
    for (uint32_t i = threadIdx.x; i < n; i += kThreads) {
      const uint4 e = __ldg(reinterpret_cast<const uint4*>(P.tables.steps) + i);
      shared_steps[i] = e.x | ((e.z - static_cast<uint32_t>(P.tables.step_bits)) << 26);
    }
    if (threadIdx.x < 32) {
      uint32_t m = 1;
      for (unsigned j = 0; j < threadIdx.x && j < 20; ++j) m *= 3;
      shared_pow3[threadIdx.x] = m;
    }
    __syncthreads();
  }
  const unsigned lane = threadIdx.x & 31;
  const uint64_t warps_per_block = kThreads / 32;
  unsigned long long candidates = 0, count = 0, sum = 0, hash = 0;
  for (uint64_t tile = P.tile_begin + blockIdx.x * warps_per_block + threadIdx.x / 32; tile < P.tile_end;
       tile += gridDim.x * warps_per_block) {
    uint64_t cycle = 0, index;
    if (kSieved) {
      // 32-bit division: a launch holds fewer than 2^32 tiles.
      const uint32_t t = P.first_tile_rem + static_cast<uint32_t>(tile - P.tile_begin);
      const uint32_t q = t / P.tiles_per_cycle;
      cycle = P.first_tile_cycle + q;
      index = static_cast<uint64_t>(t - q * P.tiles_per_cycle) * 32 + lane;
    } else {
      index = tile * 32 + lane;
    }
    Number x;
    bool overflow;
    uint32_t key = 0;
    if (LoadNumber<kSieved>(P, cycle, index, x, &overflow, candidates, hash)) {
      int outcome = overflow ? kHostFinish : kContinue;
      uint32_t d = 0;
      while (outcome == kContinue) {
        outcome = WalkStep<kSharedSteps>(P, shared_steps, shared_pow3, x.v_hi, x.v_lo, x.s, &d);
      }
      if (outcome == kHostFinish) HostFinish(P, x);
      if (outcome == kFinished) key = Finish(P, x, d, count, sum);
    }
    // Ladder: entries above the ladder floor and above every earlier delay of the tile.
    if (__any_sync(0xFFFFFFFFu, key != 0)) {
      uint32_t inclusive = key;
#pragma unroll
      for (int off = 1; off < 32; off <<= 1) {
        const uint32_t y = __shfl_up_sync(0xFFFFFFFFu, inclusive, off);
        if (lane >= static_cast<unsigned>(off)) inclusive = y > inclusive ? y : inclusive;
      }
      uint32_t before = __shfl_up_sync(0xFFFFFFFFu, inclusive, 1);
      if (lane == 0) before = 0;
      if (key != 0 && key > before) {
        const unsigned long long i = atomicAdd(&P.acc->ladder_count, 1ULL);
        if (i < P.ladder_capacity) P.ladder[i] = LadderEntry{x.n_lo, x.n_hi, key, 0};
      }
    }
  }
  AddTotals<kThreads>(P, candidates, count, sum, hash);
}

template <int kThreads, bool kSieved, bool kShared>
LaunchKernelFn SearchKernelOf(bool full_occupancy) {
  return full_occupancy ? SearchKernel<kThreads, kSieved, kShared, 2048 / kThreads>
                        : SearchKernel<kThreads, kSieved, kShared, 1>;
}

template <int kThreads>
LaunchKernelFn SearchKernelSized(bool sieved, bool shared_steps, bool full_occupancy) {
  if (shared_steps) {
    return sieved ? SearchKernelOf<kThreads, true, true>(full_occupancy)
                  : SearchKernelOf<kThreads, false, true>(full_occupancy);
  }
  return sieved ? SearchKernelOf<kThreads, true, false>(full_occupancy)
                : SearchKernelOf<kThreads, false, false>(full_occupancy);
}

}  // namespace

cudaError_t FindSearchKernel(int block_threads, bool sieved, bool shared_steps, bool full_occupancy,
                             LaunchKernelFn* kernel) {
  switch (block_threads) {
    case 128: *kernel = SearchKernelSized<128>(sieved, shared_steps, full_occupancy); break;
    case 256: *kernel = SearchKernelSized<256>(sieved, shared_steps, full_occupancy); break;
    case 512: *kernel = SearchKernelSized<512>(sieved, shared_steps, full_occupancy); break;
    default: *kernel = nullptr; return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

}  // namespace collatz::gpu
