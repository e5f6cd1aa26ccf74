// The search kernel: one thread per computed number (sieve-offset entry or, in the first
// block, odd number kept by the kind's mod rule) on a persistent grid in which each warp
// walks tiles of 32 consecutive positions, so a tile is an ascending run of N and a warp
// prefix max finds its ladder entries. Warps never wait for each other (no block barrier
// per tile): with early termination the lengths of the numbers are very uneven, and a
// block-wide tile would make 8 warps wait for the slowest of 256 lanes.
// The step table lives either in global memory (L2; S <= 20, 16-byte entries) or, for
// S <= 13, in shared memory (4-byte entries c | p << 26).
// Variants kept as measured options (docs/PERFORMANCE.md): RefillKernel (lanes take new
// numbers in batches), PairKernel (two numbers per thread), DeferredKernel (second pass
// for numbers still walking after max_passes checks). All return identical results.
#include "gpu/search_kernels.h"

#include <cub/block/block_reduce.cuh>

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

// True if a number at (hi:lo) after s steps can be neither a delay record nor a class
// record of an open class (EarlyTermination::CanStop's test, with the exact R).
__device__ __forceinline__ bool CanStop(const LaunchParams& P, uint32_t s, uint64_t hi, uint64_t lo) {
  if (s > P.floor) return false;
  const ulonglong2 limit = __ldg(P.tables.stop_below + s);
  if (!(hi < limit.y || (hi == limit.y && lo < limit.x))) return false;
  if (!P.classes) return true;
  // delay(N) lies in [s + bitlen(v) - 1, s + R(v)] and s + R(v) <= min(s + bound(v), floor).
  const int b = BitLength(hi, lo);
  const int sb = P.tables.bound_sub_bits;
  unsigned j = 0;
  if (b - 1 >= sb) {
    const int sh = b - 1 - sb;
    uint64_t x;
    if (sh >= 64) {
      x = hi >> (sh - 64);
    } else if (sh == 0) {
      x = lo;
    } else {
      x = (lo >> sh) | (hi << (64 - sh));
    }
    j = static_cast<unsigned>(x) & ((1u << sb) - 1);
  }
  uint32_t top = s + __ldg(P.tables.bound + ((b << sb) | j));
  top = top < P.floor ? top : P.floor;
  const uint32_t low = s + static_cast<uint32_t>(b) - 1;
  return low <= top && __ldg(P.tables.hole_prefix + top + 1) == __ldg(P.tables.hole_prefix + low);
}

// (hi:lo) <- m * ((hi:lo) >> S) + c for m, c < 2^32, in 32-bit limbs (four 32x32+64
// multiply-adds); false if the result would not fit in 128 bits.
__device__ __forceinline__ bool StepMulAdd(uint64_t& hi, uint64_t& lo, int S, uint32_t m, uint32_t c) {
  const uint64_t h_lo = (lo >> S) | (hi << (64 - S));
  const uint64_t h_hi = hi >> S;
  const uint64_t p0 = static_cast<uint64_t>(static_cast<uint32_t>(h_lo)) * m + c;
  const uint64_t p1 = static_cast<uint64_t>(static_cast<uint32_t>(h_lo >> 32)) * m + (p0 >> 32);
  const uint64_t p2 = static_cast<uint64_t>(static_cast<uint32_t>(h_hi)) * m + (p1 >> 32);
  const uint64_t p3 = static_cast<uint64_t>(static_cast<uint32_t>(h_hi >> 32)) * m + (p2 >> 32);
  lo = (p1 << 32) | static_cast<uint32_t>(p0);
  hi = (p3 << 32) | static_cast<uint32_t>(p2);
  return (p3 >> 32) == 0;
}

enum Outcome { kFinished = 0, kStopped = 1, kHostFinish = 2, kContinue = 3 };

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

// A number of the launch, set up after its first k T-steps (or as itself in the first block).
struct Number {
  uint64_t n_hi, n_lo;  // N
  uint64_t rel;         // N - base (< 2^64)
  uint64_t v_hi, v_lo;  // value after s steps
  uint32_t s;
};

// Sets up position (cycle, rem) / pos; false if the position is not in the launch.
// Adds to the candidate count and work hash; *overflow if the first jump leaves 128 bits.
template <bool kSieved>
__device__ __forceinline__ bool LoadNumber(const LaunchParams& P, uint64_t cycle, uint64_t index, Number& x,
                                           bool* overflow, unsigned long long& candidates,
                                           unsigned long long& hash) {
  *overflow = false;
  if (kSieved) {
    const uint64_t pos = cycle * P.cycle_len + index;
    if (index >= P.cycle_len || pos < P.pos_begin || pos >= P.pos_end) return false;
    const SieveEntry e = P.entries[index];
    x.rel = cycle * P.cycle_stride + e.offset;
    x.n_lo = P.base_lo + x.rel;
    x.n_hi = P.base_hi + (x.n_lo < x.rel ? 1 : 0);
    const int k = P.sieve_bits;
    x.v_hi = x.n_hi >> k;
    x.v_lo = (x.n_lo >> k) | (x.n_hi << (64 - k));
    *overflow = !MulAdd(x.v_hi, x.v_lo, e.pow3, e.c);
    hash += Mix64(x.v_lo);  // the low 64 bits of 3^p h + c, exact even on overflow
    x.s = e.steps;
  } else {
    const uint64_t pos = index;
    if (pos < P.pos_begin || pos >= P.pos_end) return false;
    x.n_hi = 0;
    x.n_lo = static_cast<uint64_t>(P.period) * (pos / P.npat) + P.pattern[pos % P.npat];
    x.rel = x.n_lo;
    x.v_hi = 0;
    x.v_lo = x.n_lo;
    x.s = 0;
    hash += Mix64(x.n_lo);
  }
  ++candidates;
  return true;
}

__device__ __forceinline__ void HostFinish(const LaunchParams& P, const Number& x) {
  const unsigned long long i = atomicAdd(&P.acc->host_finish_count, 1ULL);
  if (i < P.host_finish_capacity) P.host_finish[i] = HostFinishEntry{x.n_lo, x.n_hi};
}

// Records a finished number's delay; returns its ladder key (d above the ladder floor, else 0).
__device__ __forceinline__ uint32_t Finish(const LaunchParams& P, const Number& x, uint32_t d,
                                           unsigned long long& count, unsigned long long& sum) {
  if (d >= kClassSlots) {
    HostFinish(P, x);
    return 0;
  }
  const bool open = d > P.floor || (P.classes && __ldg(P.tables.hole_prefix + d + 1) != __ldg(P.tables.hole_prefix + d));
  if (open) {
    ++count;
    sum += d;
    if (P.classes) {
      unsigned long long* slot = P.class_min + d;
      if (x.rel < *slot) atomicMin(slot, static_cast<unsigned long long>(x.rel));
    }
  }
  return d > P.ladder_floor ? d : 0;
}

template <int kThreads>
__device__ __forceinline__ void AddTotals(const LaunchParams& P, unsigned long long candidates,
                                          unsigned long long count, unsigned long long sum,
                                          unsigned long long hash) {
  using Reduce = cub::BlockReduce<unsigned long long, kThreads>;
  __shared__ typename Reduce::TempStorage temp;
  unsigned long long values[4] = {candidates, count, sum, hash};
  unsigned long long* targets[4] = {&P.acc->candidates, &P.acc->tally_count, &P.acc->tally_sum, &P.acc->work_hash};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const unsigned long long total = Reduce(temp).Sum(values[i]);
    if (threadIdx.x == 0 && total != 0) atomicAdd(targets[i], total);
    __syncthreads();
  }
}

// kMinBlocks = 2048 / kThreads caps registers at 32 for full occupancy (more warps to
// hide the step table's L2 latency, at the price of a few spills).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
#define COLLATZ_THREADS_PER_SM 1024
#else
#define COLLATZ_THREADS_PER_SM 2048
#endif
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
      uint32_t passes = 0;
      while (outcome == kContinue) {
        if (passes == P.max_passes && P.max_passes != 0) break;
        outcome = WalkStep<kSharedSteps>(P, shared_steps, shared_pow3, x.v_hi, x.v_lo, x.s, &d);
        ++passes;
      }
      if (outcome == kContinue) {
        const unsigned long long i = atomicAdd(&P.acc->deferred_count, 1ULL);
        if (i < P.deferred_capacity) P.deferred[i] = DeferredEntry{x.n_lo, x.n_hi, x.rel, x.v_lo, x.v_hi, x.s, 0};
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

// The same search with lane refill: a warp owns a tile of kRefillTile positions; a lane
// whose number is done (finished or stopped early) waits until at least
// kRefillThreshold lanes are idle, then they all take the tile's next numbers. The warp
// then no longer waits for its slowest lane on every 32 numbers, only once per tile.
constexpr int kRefillPerLane = kRefillTile / 32;
constexpr int kRefillThreshold = 12;

template <int kThreads, bool kSieved, bool kSharedSteps>
__global__ void __launch_bounds__(kThreads) RefillKernel(const LaunchParams P) {
  extern __shared__ uint32_t shared_steps[];
  __shared__ uint32_t shared_pow3[32];
  __shared__ uint32_t keys_all[kThreads / 32][kRefillTile];
  if (kSharedSteps) {
    const uint32_t n = 1u << P.tables.step_bits;
    for (uint32_t i = threadIdx.x; i < n; i += kThreads) {
      const uint4 e = __ldg(reinterpret_cast<const uint4*>(P.tables.steps) + i);
      shared_steps[i] = e.x | ((e.z - static_cast<uint32_t>(P.tables.step_bits)) << 26);
    }
  }
  if (threadIdx.x < 32) {
    uint32_t m = 1;
    for (unsigned j = 0; j < threadIdx.x && j < 20; ++j) m *= 3;
    shared_pow3[threadIdx.x] = m;
  }
  __syncthreads();
  const unsigned lane = threadIdx.x & 31;
  const unsigned lanes_below = (1u << lane) - 1;
  uint32_t* keys = keys_all[threadIdx.x / 32];
#pragma unroll
  for (int r = 0; r < kRefillPerLane; ++r) keys[r * 32 + lane] = 0;
  __syncwarp();
  const uint64_t warps_per_block = kThreads / 32;
  unsigned long long candidates = 0, count = 0, sum = 0, hash = 0;
  for (uint64_t tile = P.tile_begin + blockIdx.x * warps_per_block + threadIdx.x / 32; tile < P.tile_end;
       tile += gridDim.x * warps_per_block) {
    uint64_t cycle = 0, first;
    if (kSieved) {
      const uint32_t t = P.first_tile_rem + static_cast<uint32_t>(tile - P.tile_begin);
      const uint32_t q = t / P.tiles_per_cycle;
      cycle = P.first_tile_cycle + q;
      first = static_cast<uint64_t>(t - q * P.tiles_per_cycle) * kRefillTile;
    } else {
      first = tile * kRefillTile;
    }
    uint32_t item = 0;
    uint32_t next = 0;  // warp-uniform: the tile's next unclaimed item
    bool live = false;
    Number x;
    while (true) {
      const unsigned idle = __ballot_sync(0xFFFFFFFFu, !live);
      if (next < static_cast<uint32_t>(kRefillTile) && (__popc(idle) >= kRefillThreshold || idle == 0xFFFFFFFFu)) {
        if (!live) {
          const uint32_t mine = next + __popc(idle & lanes_below);
          if (mine < static_cast<uint32_t>(kRefillTile)) {
            item = mine;
            bool overflow;
            live = LoadNumber<kSieved>(P, cycle, first + mine, x, &overflow, candidates, hash);
            if (live && overflow) {
              HostFinish(P, x);
              live = false;
            }
          }
        }
        next += __popc(idle);
        continue;
      }
      if (idle == 0xFFFFFFFFu) break;
      if (live) {
        uint32_t d = 0;
        const int outcome = WalkStep<kSharedSteps>(P, shared_steps, shared_pow3, x.v_hi, x.v_lo, x.s, &d);
        if (outcome != kContinue) {
          if (outcome == kHostFinish) HostFinish(P, x);
          if (outcome == kFinished) {
            const uint32_t key = Finish(P, x, d, count, sum);
            if (key != 0) keys[item] = key;
          }
          live = false;
        }
      }
    }
    __syncwarp();
    // Ladder over the tile in position order: lane l holds items l*kRefillPerLane ...
    uint32_t mine[kRefillPerLane];
    uint32_t local = 0;
#pragma unroll
    for (int r = 0; r < kRefillPerLane; ++r) {
      mine[r] = keys[lane * kRefillPerLane + r];
      local = mine[r] > local ? mine[r] : local;
    }
    if (__any_sync(0xFFFFFFFFu, local != 0)) {
      uint32_t inclusive = local;
#pragma unroll
      for (int off = 1; off < 32; off <<= 1) {
        const uint32_t y = __shfl_up_sync(0xFFFFFFFFu, inclusive, off);
        if (lane >= static_cast<unsigned>(off)) inclusive = y > inclusive ? y : inclusive;
      }
      uint32_t before = __shfl_up_sync(0xFFFFFFFFu, inclusive, 1);
      if (lane == 0) before = 0;
#pragma unroll
      for (int r = 0; r < kRefillPerLane; ++r) {
        if (mine[r] != 0 && mine[r] > before) {
          Number y;
          bool overflow;
          unsigned long long unused_c = 0, unused_h = 0;
          LoadNumber<kSieved>(P, cycle, first + lane * kRefillPerLane + r, y, &overflow, unused_c, unused_h);
          const unsigned long long at = atomicAdd(&P.acc->ladder_count, 1ULL);
          if (at < P.ladder_capacity) P.ladder[at] = LadderEntry{y.n_lo, y.n_hi, mine[r], 0};
        }
        before = mine[r] > before ? mine[r] : before;
      }
      __syncwarp();
#pragma unroll
      for (int r = 0; r < kRefillPerLane; ++r) keys[lane * kRefillPerLane + r] = 0;
    }
    __syncwarp();
  }
  AddTotals<kThreads>(P, candidates, count, sum, hash);
}

// Two numbers per thread, walked in lockstep: each pass first checks both (early stop,
// tail), then issues both step-table loads, then does both multiplies, so two L2 loads are
// in flight per thread (the plain kernel's loop waits on one at a time). Tiles of
// kPairTile = 64 positions per warp: lane l holds positions l and l + 32.
// Checks whether a number can stop or finish here; kContinue if it needs a step.
__device__ __forceinline__ int Check(const LaunchParams& P, uint64_t hi, uint64_t lo, uint32_t s, uint32_t* delay) {
  if (P.early_stop && CanStop(P, s, hi, lo)) return kStopped;
  if (hi == 0 && (lo >> P.tables.tail_bits) == 0) {
    *delay = s + __ldg(P.tables.tail + lo);
    return kFinished;
  }
  return kContinue;
}

template <int kThreads, bool kSieved>
__global__ void __launch_bounds__(kThreads, COLLATZ_THREADS_PER_SM / 2 / kThreads) PairKernel(const LaunchParams P) {
  const unsigned lane = threadIdx.x & 31;
  const uint64_t warps_per_block = kThreads / 32;
  const int S = P.tables.step_bits;
  const uint64_t step_mask = (uint64_t{1} << S) - 1;
  const uint4* steps = reinterpret_cast<const uint4*>(P.tables.steps);
  unsigned long long candidates = 0, count = 0, sum = 0, hash = 0;
  for (uint64_t tile = P.tile_begin + blockIdx.x * warps_per_block + threadIdx.x / 32; tile < P.tile_end;
       tile += gridDim.x * warps_per_block) {
    uint64_t cycle = 0, first;
    if (kSieved) {
      const uint32_t t = P.first_tile_rem + static_cast<uint32_t>(tile - P.tile_begin);
      const uint32_t q = t / P.tiles_per_cycle;
      cycle = P.first_tile_cycle + q;
      first = static_cast<uint64_t>(t - q * P.tiles_per_cycle) * kPairTile;
    } else {
      first = tile * kPairTile;
    }
    Number x[2];
    bool live[2];
    uint32_t key[2] = {0, 0};
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      bool overflow;
      live[i] = LoadNumber<kSieved>(P, cycle, first + i * 32 + lane, x[i], &overflow, candidates, hash);
      if (live[i] && overflow) {
        HostFinish(P, x[i]);
        live[i] = false;
      }
    }
    while (live[0] || live[1]) {
      uint4 e[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        if (!live[i]) continue;
        uint32_t d = 0;
        const int outcome = Check(P, x[i].v_hi, x[i].v_lo, x[i].s, &d);
        if (outcome == kContinue) {
          e[i] = __ldg(steps + (x[i].v_lo & step_mask));
        } else {
          if (outcome == kFinished) key[i] = Finish(P, x[i], d, count, sum);
          live[i] = false;
        }
      }
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        if (!live[i]) continue;
        if (!StepMulAdd(x[i].v_hi, x[i].v_lo, S, e[i].y, e[i].x)) {
          HostFinish(P, x[i]);
          live[i] = false;
        } else {
          x[i].s += e[i].z;
        }
      }
    }
    // Ladder over the 64 positions in order: first the lanes' first numbers, then the second.
    if (__any_sync(0xFFFFFFFFu, (key[0] | key[1]) != 0)) {
      uint32_t carried = 0;
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        uint32_t inclusive = key[i];
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
          const uint32_t y = __shfl_up_sync(0xFFFFFFFFu, inclusive, off);
          if (lane >= static_cast<unsigned>(off)) inclusive = y > inclusive ? y : inclusive;
        }
        uint32_t before = __shfl_up_sync(0xFFFFFFFFu, inclusive, 1);
        if (lane == 0) before = 0;
        before = before > carried ? before : carried;
        if (key[i] != 0 && key[i] > before) {
          const unsigned long long at = atomicAdd(&P.acc->ladder_count, 1ULL);
          if (at < P.ladder_capacity) P.ladder[at] = LadderEntry{x[i].n_lo, x[i].n_hi, key[i], 0};
        }
        const uint32_t total = __shfl_sync(0xFFFFFFFFu, inclusive, 31);
        carried = total > carried ? total : carried;
      }
    }
  }
  AddTotals<kThreads>(P, candidates, count, sum, hash);
}

// Second pass: the deferred numbers, one per thread, dense (every lane has a long walk).
template <int kThreads>
__global__ void __launch_bounds__(kThreads) DeferredKernel(const LaunchParams P) {
  const unsigned long long n_deferred = *reinterpret_cast<volatile unsigned long long*>(&P.acc->deferred_count);
  const uint64_t n = n_deferred < P.deferred_capacity ? n_deferred : P.deferred_capacity;
  unsigned long long count = 0, sum = 0;
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(kThreads) + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * kThreads) {
    const DeferredEntry e = P.deferred[i];
    Number x{e.n_hi, e.n_lo, e.rel, e.v_hi, e.v_lo, e.s};
    int outcome = kContinue;
    uint32_t d = 0;
    while (outcome == kContinue) outcome = WalkStep<false>(P, nullptr, nullptr, x.v_hi, x.v_lo, x.s, &d);
    if (outcome == kHostFinish) HostFinish(P, x);
    if (outcome == kFinished) {
      const uint32_t key = Finish(P, x, d, count, sum);
      if (key != 0) {
        const unsigned long long at = atomicAdd(&P.acc->ladder_count, 1ULL);
        if (at < P.ladder_capacity) P.ladder[at] = LadderEntry{x.n_lo, x.n_hi, key, 0};
      }
    }
  }
  AddTotals<kThreads>(P, 0, count, sum, 0);
}

// Lane streams: a warp owns a tile of kRefillTile positions and lane l walks items l, l+32,
// l+64, ... one after the other, taking its next number as soon as the last one is done,
// with no coordination between lanes (no ballots, no shared counter). The warp runs until
// its busiest lane is done with its kRefillPerLane numbers, which averages out the very
// uneven walk lengths. Global-memory step table only.
template <int kThreads, bool kSieved>
__global__ void __launch_bounds__(kThreads, COLLATZ_THREADS_PER_SM / 2 / kThreads) StreamKernel(const LaunchParams P) {
  __shared__ uint32_t keys_all[kThreads / 32][kRefillTile];
  const unsigned lane = threadIdx.x & 31;
  uint32_t* keys = keys_all[threadIdx.x / 32];
#pragma unroll
  for (int r = 0; r < kRefillPerLane; ++r) keys[r * 32 + lane] = 0;
  __syncwarp();
  const uint64_t warps_per_block = kThreads / 32;
  unsigned long long candidates = 0, count = 0, sum = 0, hash = 0;
  for (uint64_t tile = P.tile_begin + blockIdx.x * warps_per_block + threadIdx.x / 32; tile < P.tile_end;
       tile += gridDim.x * warps_per_block) {
    uint64_t cycle = 0, first;
    if (kSieved) {
      const uint32_t t = P.first_tile_rem + static_cast<uint32_t>(tile - P.tile_begin);
      const uint32_t q = t / P.tiles_per_cycle;
      cycle = P.first_tile_cycle + q;
      first = static_cast<uint64_t>(t - q * P.tiles_per_cycle) * kRefillTile;
    } else {
      first = tile * kRefillTile;
    }
    uint32_t next = lane;  // this lane's next item
    uint32_t cur = 0;      // the item being walked
    bool live = false;
    Number x;
    while (true) {
      if (!live && next < static_cast<uint32_t>(kRefillTile)) {
        bool overflow;
        cur = next;
        next += 32;
        live = LoadNumber<kSieved>(P, cycle, first + cur, x, &overflow, candidates, hash);
        if (live && overflow) {
          HostFinish(P, x);
          live = false;
        }
      }
      if (!__any_sync(0xFFFFFFFFu, live || next < static_cast<uint32_t>(kRefillTile))) break;
      if (live) {
        uint32_t d = 0;
        const int outcome = WalkStep<false>(P, nullptr, nullptr, x.v_hi, x.v_lo, x.s, &d);
        if (outcome != kContinue) {
          if (outcome == kHostFinish) HostFinish(P, x);
          if (outcome == kFinished) {
            const uint32_t key = Finish(P, x, d, count, sum);
            if (key != 0) keys[cur] = key;
          }
          live = false;
        }
      }
    }
    __syncwarp();
    // Ladder over the tile in position order: lane l holds items l*kRefillPerLane ...
    uint32_t mine[kRefillPerLane];
    uint32_t local = 0;
#pragma unroll
    for (int r = 0; r < kRefillPerLane; ++r) {
      mine[r] = keys[lane * kRefillPerLane + r];
      local = mine[r] > local ? mine[r] : local;
    }
    if (__any_sync(0xFFFFFFFFu, local != 0)) {
      uint32_t inclusive = local;
#pragma unroll
      for (int off = 1; off < 32; off <<= 1) {
        const uint32_t y = __shfl_up_sync(0xFFFFFFFFu, inclusive, off);
        if (lane >= static_cast<unsigned>(off)) inclusive = y > inclusive ? y : inclusive;
      }
      uint32_t before = __shfl_up_sync(0xFFFFFFFFu, inclusive, 1);
      if (lane == 0) before = 0;
#pragma unroll
      for (int r = 0; r < kRefillPerLane; ++r) {
        if (mine[r] != 0 && mine[r] > before) {
          Number y;
          bool overflow;
          unsigned long long unused_c = 0, unused_h = 0;
          LoadNumber<kSieved>(P, cycle, first + lane * kRefillPerLane + r, y, &overflow, unused_c, unused_h);
          const unsigned long long at = atomicAdd(&P.acc->ladder_count, 1ULL);
          if (at < P.ladder_capacity) P.ladder[at] = LadderEntry{y.n_lo, y.n_hi, mine[r], 0};
        }
        before = mine[r] > before ? mine[r] : before;
      }
      __syncwarp();
#pragma unroll
      for (int r = 0; r < kRefillPerLane; ++r) keys[lane * kRefillPerLane + r] = 0;
    }
    __syncwarp();
  }
  AddTotals<kThreads>(P, candidates, count, sum, hash);
}

template <int kThreads, bool kSieved, bool kShared>
cudaError_t LaunchOne(const LaunchParams& p, int grid_blocks, cudaStream_t stream) {
  const size_t shared = kShared ? (sizeof(uint32_t) << p.tables.step_bits) : 0;
  if (p.streams) {
    StreamKernel<kThreads, kSieved><<<grid_blocks, kThreads, 0, stream>>>(p);
  } else if (p.pair && !kShared) {
    PairKernel<kThreads, kSieved><<<grid_blocks, kThreads, 0, stream>>>(p);
  } else if (p.refill) {
    RefillKernel<kThreads, kSieved, kShared><<<grid_blocks, kThreads, shared, stream>>>(p);
  } else if (p.full_occupancy) {
    SearchKernel<kThreads, kSieved, kShared, 2048 / kThreads><<<grid_blocks, kThreads, shared, stream>>>(p);
  } else {
    SearchKernel<kThreads, kSieved, kShared, 1><<<grid_blocks, kThreads, shared, stream>>>(p);
  }
  return cudaGetLastError();
}

template <int kThreads>
cudaError_t LaunchSized(const LaunchParams& p, bool shared_steps, int grid_blocks, cudaStream_t stream) {
  (void)cudaGetLastError();  // drop a stale error of an earlier unchecked call (cleanup paths)
  const bool sieved = p.entries != nullptr;
  if (shared_steps) {
    return sieved ? LaunchOne<kThreads, true, true>(p, grid_blocks, stream)
                  : LaunchOne<kThreads, false, true>(p, grid_blocks, stream);
  }
  return sieved ? LaunchOne<kThreads, true, false>(p, grid_blocks, stream)
                : LaunchOne<kThreads, false, false>(p, grid_blocks, stream);
}

template <int kThreads>
cudaError_t BlocksPerSm(bool shared_steps, int step_bits, bool refill, bool full, bool pair, bool streams,
                        int* blocks) {
  if (streams) return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, StreamKernel<kThreads, true>, kThreads, 0);
  if (pair && !shared_steps) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, PairKernel<kThreads, true>, kThreads, 0);
  }
  if (!refill && full) {
    return shared_steps ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                              blocks, SearchKernel<kThreads, true, true, 2048 / kThreads>, kThreads,
                              sizeof(uint32_t) << step_bits)
                        : cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                              blocks, SearchKernel<kThreads, true, false, 2048 / kThreads>, kThreads, 0);
  }
  if (refill) {
    return shared_steps ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, RefillKernel<kThreads, true, true>,
                                                                        kThreads, sizeof(uint32_t) << step_bits)
                        : cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, RefillKernel<kThreads, true, false>,
                                                                        kThreads, 0);
  }
  if (shared_steps) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, SearchKernel<kThreads, true, true, 1>, kThreads,
                                                         sizeof(uint32_t) << step_bits);
  }
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, SearchKernel<kThreads, true, false, 1>, kThreads, 0);
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

cudaError_t LaunchSearch(const LaunchParams& p, int block_threads, bool shared_steps, int grid_blocks,
                         cudaStream_t stream) {
  if (shared_steps && p.tables.step_bits > kMaxSharedStepBits) return cudaErrorInvalidValue;
  switch (block_threads) {
    case 128: return LaunchSized<128>(p, shared_steps, grid_blocks, stream);
    case 256: return LaunchSized<256>(p, shared_steps, grid_blocks, stream);
    case 512: return LaunchSized<512>(p, shared_steps, grid_blocks, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchDeferred(const LaunchParams& p, int block_threads, int grid_blocks, cudaStream_t stream) {
  (void)cudaGetLastError();
  switch (block_threads) {
    case 128: DeferredKernel<128><<<grid_blocks, 128, 0, stream>>>(p); break;
    case 256: DeferredKernel<256><<<grid_blocks, 256, 0, stream>>>(p); break;
    case 512: DeferredKernel<512><<<grid_blocks, 512, 0, stream>>>(p); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t SearchBlocksPerSm(int block_threads, bool shared_steps, int step_bits, bool refill, bool full, bool pair,
                              bool streams, int* blocks) {
  switch (block_threads) {
    case 128: return BlocksPerSm<128>(shared_steps, step_bits, refill, full, pair, streams, blocks);
    case 256: return BlocksPerSm<256>(shared_steps, step_bits, refill, full, pair, streams, blocks);
    case 512: return BlocksPerSm<512>(shared_steps, step_bits, refill, full, pair, streams, blocks);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchFillTail(const StepEntry* steps, int step_bits, uint16_t* tail, int base_bits, int tail_bits,
                           int* failed, cudaStream_t stream) {
  if (tail_bits <= base_bits) return cudaSuccess;
  (void)cudaGetLastError();
  const uint64_t first = uint64_t{1} << base_bits;
  const uint64_t count = (uint64_t{1} << tail_bits) - first;
  FillTailKernel<<<4096, 256, 0, stream>>>(steps, step_bits, tail, base_bits, first, count, failed);
  return cudaGetLastError();
}

}  // namespace collatz::gpu
