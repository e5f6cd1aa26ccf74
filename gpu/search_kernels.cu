// The search kernel: one thread per computed number (sieve-offset entry or, in the first
// block, odd number kept by the kind's mod rule) on a persistent grid in which each warp
// walks tiles of 32 consecutive positions, so a tile is an ascending run of N and a warp
// prefix max finds its ladder entries. Warps never wait for each other (no block barrier
// per tile): with early termination the lengths of the numbers are very uneven, and a
// block-wide tile would make 8 warps wait for the slowest of 256 lanes.
// The step table lives either in global memory (L2; S <= 20, 16-byte entries) or, for
// S <= 13, in shared memory (4-byte entries c | p << 26).
// QueueKernel (below) is the faster kernel for delay-only units with a floor, and
// GroupKernel, which stops whole residue groups at once and hands the rest to the same walk
// queue, the fastest for the whole cycles of such units; this one serves the rest (class
// searches, floor 0, shared-memory step tables). All return identical results. Variants measured slower and removed: docs/PERFORMANCE.md, GPU levers.
#include "gpu/search_kernels.h"

#include "core/work_hash.h"

#include <cub/block/block_reduce.cuh>

namespace collatz::gpu {
namespace {

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

// (hi:lo) <- m * ((hi:lo) >> S) + c for m, c < 2^32 and 0 < S < 32, in 32-bit limbs: four
// funnel shifts, four high products and one carry chain of multiply-adds (PTX, because the
// compiler's 64-bit adds cost about twice the instructions); false if the result would not
// fit in 128 bits.
__device__ __forceinline__ bool StepMulAdd(uint64_t& hi, uint64_t& lo, int S, uint32_t m, uint32_t c) {
  const uint32_t v0 = static_cast<uint32_t>(lo), v1 = static_cast<uint32_t>(lo >> 32);
  const uint32_t v2 = static_cast<uint32_t>(hi), v3 = static_cast<uint32_t>(hi >> 32);
  const uint32_t h0 = __funnelshift_r(v0, v1, S), h1 = __funnelshift_r(v1, v2, S);
  const uint32_t h2 = __funnelshift_r(v2, v3, S), h3 = v3 >> S;
  const uint32_t t0 = __umulhi(h0, m), t1 = __umulhi(h1, m), t2 = __umulhi(h2, m), t3 = __umulhi(h3, m);
  uint32_t r0, r1, r2, r3, r4;
  asm("mad.lo.cc.u32 %0, %5, %9, %10;\n\t"
      "madc.lo.cc.u32 %1, %6, %9, %11;\n\t"
      "madc.lo.cc.u32 %2, %7, %9, %12;\n\t"
      "madc.lo.cc.u32 %3, %8, %9, %13;\n\t"
      "addc.u32 %4, %14, 0;"
      : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3), "=r"(r4)
      : "r"(h0), "r"(h1), "r"(h2), "r"(h3), "r"(m), "r"(c), "r"(t0), "r"(t1), "r"(t2), "r"(t3));
  lo = (static_cast<uint64_t>(r1) << 32) | r0;
  hi = (static_cast<uint64_t>(r3) << 32) | r2;
  return r4 == 0;
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
    if (x.v_hi == 0) {
      // h < 2^64 (N < 2^(64+k), every search today): a 64x64-bit product, which cannot overflow.
      const uint64_t h = x.v_lo;
      x.v_lo = h * e.pow3 + e.c;
      x.v_hi = __umul64hi(h, e.pow3) + (x.v_lo < e.c ? 1 : 0);
    } else {
      *overflow = !MulAdd(x.v_hi, x.v_lo, e.pow3, e.c);
    }
    hash += WorkHashTerm(x.v_lo);  // the low 64 bits of 3^p h + c, exact even on overflow
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
    hash += WorkHashTerm(x.n_lo);
  }
  ++candidates;
  return true;
}

__device__ __forceinline__ void HostFinish(const LaunchParams& P, const Number& x, uint32_t weight = 1) {
  const unsigned long long i = atomicAdd(&P.acc->host_finish_count, 1ULL);
  if (i < P.host_finish_capacity) P.host_finish[i] = HostFinishEntry{x.n_lo, x.n_hi, weight, 0};
}

// Records a finished number's delay; returns its ladder key (d above the ladder floor, else 0).
template <typename Count>
__device__ __forceinline__ uint32_t Finish(const LaunchParams& P, const Number& x, uint32_t d, Count& count,
                                           unsigned long long& sum) {
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

// Checks whether a number can stop or finish here; kContinue if it needs a step.
__device__ __forceinline__ int Check(const LaunchParams& P, uint64_t hi, uint64_t lo, uint32_t s, uint32_t* delay) {
  if (P.early_stop && CanStop(P, s, hi, lo)) return kStopped;
  if (hi == 0 && (lo >> P.tables.tail_bits) == 0) {
    *delay = s + __ldg(P.tables.tail + lo);
    return kFinished;
  }
  return kContinue;
}

// N (and N - base) of a position, without the first jump: for the rare numbers that
// finish after the walk (tail, host finish, class minimum) in the queue kernel.
template <bool kSieved>
__device__ __forceinline__ Number PositionNumber(const LaunchParams& P, uint64_t cycle, uint64_t index) {
  Number x{};
  if (kSieved) {
    x.rel = cycle * P.cycle_stride + P.entries[index].offset;
    x.n_lo = P.base_lo + x.rel;
    x.n_hi = P.base_hi + (x.n_lo < x.rel ? 1 : 0);
  } else {
    x.n_hi = 0;
    x.n_lo = static_cast<uint64_t>(P.period) * (index / P.npat) + P.pattern[index % P.npat];
    x.rel = x.n_lo;
  }
  return x;
}

// Walk queue: a warp keeps the numbers that must walk on in a ring in shared memory and
// its lanes take the next one as soon as their own is done, so lanes stay busy (the plain
// kernel runs each tile of 32 as long as its slowest number, with about 16 of 32 lanes
// active). Whenever fewer than 32 numbers are queued, the warp sets up its next tile of 32
// positions with every lane busy (sieve entry, first jump, work hash, first check) and
// queues those that must walk on. Ladder entries (delay above the ladder floor) go
// straight to the ladder buffer, unfiltered by tile: the engine uses this kernel for units
// with a floor above 0 only, whose ladders are sparse. Global-memory step table.
constexpr uint32_t kRing = 64;  // at most 31 + 32 numbers are queued

// The number at position pos_begin + rel of the launch (for the rare finishing paths).
template <bool kSieved>
__device__ __forceinline__ Number QueuedNumber(const LaunchParams& P, uint32_t rel) {
  const uint64_t pos = P.pos_begin + rel;
  if (!kSieved) return PositionNumber<false>(P, 0, pos);
  const uint64_t cycle = pos / P.cycle_len;
  return PositionNumber<true>(P, cycle, pos - cycle * P.cycle_len);
}

template <typename Count>
__device__ __forceinline__ void FinishToLadder(const LaunchParams& P, const Number& x, uint32_t d, Count& count,
                                               unsigned long long& sum) {
  const uint32_t key = Finish(P, x, d, count, sum);
  if (key != 0) {
    const unsigned long long at = atomicAdd(&P.acc->ladder_count, 1ULL);
    if (at < P.ladder_capacity) P.ladder[at] = LadderEntry{x.n_lo, x.n_hi, key, 0};
  }
}

// One warp's ring (structure of arrays: conflict-free, one base address).
struct QueueRing {
  uint64_t lo[kRing];
  uint64_t hi[kRing];
  uint32_t rel[kRing];  // position - pos_begin
  uint16_t s[kRing];    // steps so far (k + p <= 80)
};

// N of group-launch position rel (rare finishing paths).
__device__ __forceinline__ Number GroupNumber(const LaunchParams& P, uint32_t rel) {
  const uint32_t entry = rel / P.group_cycles;
  const uint32_t cycle = rel - entry * P.group_cycles;
  Number x{};
  x.rel = cycle * P.cycle_stride + P.entries[P.group_first_entry + entry].offset;
  x.n_lo = P.base_lo + x.rel;
  x.n_hi = P.base_hi + (x.n_lo < x.rel ? 1 : 0);
  return x;
}

// The join-map entry of N (group launches with a map): the map of H = N >> L mod 9 in
// delay-only launches (2^32 = 4, 2^64 = 7, 2^96 = 1 mod 9), the one map otherwise.
__device__ __forceinline__ uint32_t JoinEntry(const LaunchParams& P, uint64_t n_hi, uint64_t n_lo) {
  const uint8_t* map = P.join_map;
  if (P.join_delay_variants != 0) {
    const int L = P.join_bits;  // 0 < L < 64
    const uint64_t h_lo = (n_lo >> L) | (n_hi << (64 - L)), h_hi = n_hi >> L;
    const uint64_t folded = (h_lo & 0xFFFFFFFFu) + 4 * (h_lo >> 32) + 7 * (h_hi & 0xFFFFFFFFu) + (h_hi >> 32);
    map += static_cast<uint64_t>(folded % 9) << (L - 1);
  }
  return map[(n_lo & P.join_mask) >> 1];
}

// The rare finishing paths of the queue and group kernels (a number leaves 128 bits, or
// reaches the tail with its delay). Kept out of line: inlined, the compiler computed N
// from the position (a division) on every step, ahead of the branch that needs it.
enum RelLayout { kFirstBlockRel = 0, kSievedRel = 1, kGroupRel = 2 };

// `params` points to the kernel's copy of its parameters in shared memory (a reference to
// the parameters themselves would make every thread copy them to its stack).
template <int kLayout>
__device__ __noinline__ void FinishRel(const LaunchParams* params, uint32_t rel, uint32_t d, bool host) {
  const LaunchParams& P = *params;
  const Number x = kLayout == kGroupRel ? GroupNumber(P, rel) : QueuedNumber<kLayout == kSievedRel>(P, rel);
  // The number stands for its join-map twins in the tallies (they were skipped).
  const uint32_t weight = kLayout == kGroupRel && P.join_map != nullptr ? JoinEntry(P, x.n_hi, x.n_lo) : 1;
  if (host || d >= kClassSlots) {
    HostFinish(P, x, weight);
    return;
  }
  unsigned long long count = 0, sum = 0;
  FinishToLadder(P, x, d, count, sum);
  if (count != 0) {
    atomicAdd(&P.acc->tally_count, count * weight);
    atomicAdd(&P.acc->tally_sum, sum * weight);
  }
}

// Idle lanes take queued numbers, then every live lane takes one step of its walk.
// Returns false (nothing done) when no lane is live after the pops. (Waiting until 4, 8 or
// 12 lanes are idle, to pop less often, measured the same.)
template <int kLayout>
__device__ __forceinline__ bool PopAndStep(const LaunchParams& P, const LaunchParams* shared_params, QueueRing& ring,
                                           const uint4* steps, int S, unsigned lanes_below, uint32_t& head,
                                           uint32_t& queued, bool& live, uint64_t& hi, uint64_t& lo, uint32_t& s,
                                           uint32_t& rel) {
  const uint32_t mask = (1u << S) - 1;
  const unsigned idle = __ballot_sync(0xFFFFFFFFu, !live);
  if (idle != 0 && queued != 0) {
    const uint32_t take = min(static_cast<uint32_t>(__popc(idle)), queued);
    if (!live) {
      const uint32_t rank = __popc(idle & lanes_below);
      if (rank < take) {
        const uint32_t slot = (head + rank) & (kRing - 1);
        lo = ring.lo[slot];
        hi = ring.hi[slot];
        rel = ring.rel[slot];
        s = ring.s[slot];
        live = true;
      }
    }
    head = (head + take) & (kRing - 1);
    queued -= take;
    __syncwarp();
  }
  if (__ballot_sync(0xFFFFFFFFu, live) == 0) return false;
  if (live) {
    const uint4 e = __ldg(steps + (static_cast<uint32_t>(lo) & mask));
    if (!StepMulAdd(hi, lo, S, e.y, e.x)) {
      FinishRel<kLayout>(shared_params, rel, 0, true);
      live = false;
    } else {
      s += e.z;
      uint32_t d = 0;
      const int outcome = Check(P, hi, lo, s, &d);
      if (outcome != kContinue) {
        if (outcome == kFinished) FinishRel<kLayout>(shared_params, rel, d, false);
        live = false;
      }
    }
  }
  return true;
}

// Queues the numbers of a set-up round that must walk on (outcome kContinue).
__device__ __forceinline__ void PushWalking(QueueRing& ring, unsigned lanes_below, uint32_t head, uint32_t& queued,
                                            bool walks, uint64_t hi, uint64_t lo, uint32_t rel, uint32_t s) {
  const unsigned walking = __ballot_sync(0xFFFFFFFFu, walks);
  if (walks) {
    const uint32_t slot = (head + queued + __popc(walking & lanes_below)) & (kRing - 1);
    ring.lo[slot] = lo;
    ring.hi[slot] = hi;
    ring.rel[slot] = rel;
    ring.s[slot] = static_cast<uint16_t>(s);
  }
  queued += __popc(walking);
  __syncwarp();
}

template <int kThreads, bool kSieved, int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks * kThreads > COLLATZ_THREADS_PER_SM
                                                ? COLLATZ_THREADS_PER_SM / kThreads
                                                : kMinBlocks) QueueKernel(const LaunchParams P) {
  constexpr int kWarps = kThreads / 32;
  __shared__ QueueRing rings[kWarps];
  __shared__ LaunchParams shared_params;  // for the out-of-line rare paths
  if (threadIdx.x == 0) shared_params = P;
  __syncthreads();
  const unsigned lane = threadIdx.x & 31;
  const unsigned lanes_below = (1u << lane) - 1;
  QueueRing& ring = rings[threadIdx.x / 32];
  const int S = P.tables.step_bits;
  const uint4* steps = reinterpret_cast<const uint4*>(P.tables.steps);
  // Per-thread totals; 32-bit where a launch's 2^32 positions bound them (fewer registers).
  uint32_t candidates = 0;  // tallies of finished numbers go straight to the accumulators
  unsigned long long hash = 0;
  // Tiles relative to the launch's first (fewer than 2^32). First-block launches: a tile
  // is 32 consecutive positions. Sieved launches: a tile is a column of 32 sieve entries
  // (residues) over column_cycles consecutive cycles, taken one cycle per round: the first
  // round does the multiply-add 3^p h + c, every later one adds modulus * 3^p (h grows by
  // modulus per cycle), and the entry is loaded once per column.
  uint32_t tile = blockIdx.x * kWarps + threadIdx.x / 32;
  const uint32_t tiles = static_cast<uint32_t>(P.tile_end - P.tile_begin);
  uint32_t column_left = 0;  // warp-uniform: rounds left in the current column
  uint64_t col_lo = 0, col_hi = 0, delta_lo = 0, delta_hi = 0, col_pos = 0;
  uint32_t col_s = 0;
  bool col_entry = false, col_overflow = false;
  uint32_t head = 0, queued = 0;  // warp-uniform: the ring holds slots head .. head + queued - 1
  bool live = false;
  uint64_t hi = 0, lo = 0;
  uint32_t s = 0, rel = 0;
  while (true) {
    if (queued < 32 && (tile < tiles || column_left != 0)) {
      // Set up 32 more positions, every lane busy. N itself is not kept: the rare paths
      // that need it (host finish, tail, ladder) recompute it from the position.
      uint64_t pos;
      bool in_launch;
      if (kSieved) {
        if (column_left == 0) {
          const uint32_t group = tile / P.tiles_per_cycle;
          const uint32_t index = (tile - group * P.tiles_per_cycle) * 32 + lane;
          tile += gridDim.x * kWarps;
          const uint64_t cycle = P.first_tile_cycle + static_cast<uint64_t>(group) * P.column_cycles;
          const uint64_t cycles_left = P.last_cycle + 1 - cycle;
          column_left = cycles_left < P.column_cycles ? static_cast<uint32_t>(cycles_left) : P.column_cycles;
          col_entry = index < P.cycle_len;
          col_pos = cycle * P.cycle_len + index;
          col_overflow = false;
          if (col_entry) {
            const SieveEntry e = P.entries[index];
            const uint64_t n_rel = cycle * P.cycle_stride + e.offset;
            const uint64_t n_lo = P.base_lo + n_rel;
            const uint64_t n_hi = P.base_hi + (n_lo < n_rel ? 1 : 0);
            const int k = P.sieve_bits;
            col_hi = n_hi >> k;
            col_lo = (n_lo >> k) | (n_hi << (64 - k));
            if (col_hi == 0) {  // h < 2^64: a 64x64-bit product, which cannot overflow
              const uint64_t h = col_lo;
              col_lo = h * e.pow3 + e.c;
              col_hi = __umul64hi(h, e.pow3) + (col_lo < e.c ? 1 : 0);
            } else {
              col_overflow = !MulAdd(col_hi, col_lo, e.pow3, e.c);
            }
            col_s = e.steps;
            delta_lo = e.pow3 * P.column_modulus;
            delta_hi = __umul64hi(e.pow3, P.column_modulus);
          }
        } else {
          // Next cycle: v += modulus * 3^p (128-bit; a carry out means the value left 128
          // bits, and so do all later ones: they are finished on the host).
          const uint64_t new_lo = col_lo + delta_lo;
          const uint64_t carry = new_lo < col_lo ? 1 : 0;
          const uint64_t new_hi = col_hi + delta_hi + carry;
          col_overflow |= new_hi < col_hi || (new_hi == col_hi && (delta_hi | carry) != 0);
          col_lo = new_lo;
          col_hi = new_hi;
          col_pos += P.cycle_len;
        }
        --column_left;
        pos = col_pos;
        in_launch = col_entry;
      } else {
        pos = (P.tile_begin + tile) * 32 + lane;
        tile += gridDim.x * kWarps;
        in_launch = true;
      }
      in_launch = in_launch && pos >= P.pos_begin && pos < P.pos_end;
      const uint32_t my_rel = static_cast<uint32_t>(pos - P.pos_begin);
      int outcome = kStopped;
      uint64_t v_hi = 0, v_lo = 0;
      uint32_t v_s = 0;
      if (in_launch) {
        ++candidates;
        bool overflow = false;
        if (kSieved) {
          v_lo = col_lo;
          v_hi = col_hi;
          v_s = col_s;
          overflow = col_overflow;
          hash += WorkHashTerm(v_lo);  // the low 64 bits of 3^p h + c, exact even on overflow
        } else {
          v_lo = static_cast<uint64_t>(P.period) * (pos / P.npat) + P.pattern[pos % P.npat];
          hash += WorkHashTerm(v_lo);
        }
        uint32_t d = 0;
        if (overflow) {
          FinishRel<kSieved ? kSievedRel : kFirstBlockRel>(&shared_params, my_rel, 0, true);
        } else {
          outcome = Check(P, v_hi, v_lo, v_s, &d);
          if (outcome == kFinished) FinishRel<kSieved ? kSievedRel : kFirstBlockRel>(&shared_params, my_rel, d, false);
        }
      }
      PushWalking(ring, lanes_below, head, queued, outcome == kContinue, v_hi, v_lo, my_rel, v_s);
    }
    if (!PopAndStep<kSieved ? kSievedRel : kFirstBlockRel>(P, &shared_params, ring, steps, S, lanes_below, head, queued,
                                                           live, hi, lo, s, rel)) {
      if (tile >= tiles && column_left == 0) break;
    }
  }
  AddTotals<kThreads>(P, candidates, 0, 0, hash);
}

// Residue groups (delay-only units with a floor, whole cycles, N < 2^100). The walk queue
// above sets up every computed number; most of them stop within their first 30 T-steps
// (docs/PERFORMANCE.md, host model). Here the numbers of one sieve entry whose cycles agree
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

// (hi:lo) += a * m (a, m < 2^64; the caller guarantees no overflow past 128 bits).
__device__ __forceinline__ void AddProduct(uint64_t& hi, uint64_t& lo, uint64_t a, uint64_t m) {
  const uint64_t p_lo = a * m;
  const uint64_t p_hi = __umul64hi(a, m);
  lo += p_lo;
  hi += p_hi + (lo < p_lo ? 1 : 0);
}

// (hi:lo) = (a_hi:a_lo) + b in one carry chain.
__device__ __forceinline__ void Sum128(uint64_t& hi, uint64_t& lo, uint64_t a_hi, uint64_t a_lo, uint64_t b) {
  asm("add.cc.u64 %0, %2, %4;\n\taddc.u64 %1, %3, 0;" : "=l"(lo), "=l"(hi) : "l"(a_lo), "l"(a_hi), "l"(b));
}

// (hi:lo) < (l_hi:l_lo) as the borrow of one subtraction chain (the compiler's
// hi < l_hi || (hi == l_hi && lo < l_lo) costs seven compares and two branches).
__device__ __forceinline__ bool Less128(uint64_t hi, uint64_t lo, uint64_t l_hi, uint64_t l_lo) {
  uint32_t borrow;
  asm("{\n\t.reg .u64 t;\n\tsub.cc.u64 t, %1, %3;\n\tsubc.cc.u64 t, %2, %4;\n\tsubc.u32 %0, 0, 0;\n\t}"
      : "=r"(borrow)
      : "l"(lo), "l"(hi), "l"(l_lo), "l"(l_hi));
  return borrow != 0;
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

__device__ __forceinline__ bool Below(const LaunchParams& P, uint32_t s, uint64_t hi, uint64_t lo) {
  if (s > P.floor) return false;
  const ulonglong2 limit = __ldg(P.tables.stop_below + s);
  return Less128(hi, lo, limit.y, limit.x);
}

// (hi:lo) <- T(hi:lo), the T-step: (3v + 1) / 2 = v + (v >> 1) + 1 for odd v (the caller
// keeps v below 2^127), v / 2 for even v; *s counts the Collatz steps.
__device__ __forceinline__ void TStep(uint64_t& hi, uint64_t& lo, uint32_t* s) {
  const uint64_t half_lo = (lo >> 1) | (hi << 63), half_hi = hi >> 1;
  if ((lo & 1) != 0) {
    asm("add.cc.u64 %0, %0, %2;\n\taddc.u64 %1, %1, %3;" : "+l"(lo), "+l"(hi) : "l"(half_lo + 1), "l"(half_hi));
    *s += 2;
  } else {
    lo = half_lo;
    hi = half_hi;
    *s += 1;
  }
}

// True if every number of a residue-group launch's sieve entry (offset) can stop within its
// first k T-steps: then so can the entry's largest number here, N = base + 2^k modulus
// (group_cycles - 1) + offset, after some j <= k steps, and conversely, because its value
// after j <= k steps is 3^p_j (N >> j) + c_j, which grows with N while the threshold is fixed.
// The decision after k steps alone misses the many numbers that dip below their threshold
// early and climb back (docs/PERFORMANCE.md, lever 48). One T-step and a check a step.
__device__ __forceinline__ bool EntryStops(const LaunchParams& P, uint64_t offset) {
  const int k = P.sieve_bits;
  uint64_t hi = P.h_base_hi, lo = P.h_base_lo;
  const uint64_t top = P.column_modulus * (P.group_cycles - 1);  // < 2^64: the launch's cycles are few
  lo += top;
  hi += lo < top ? 1 : 0;
  hi = (hi << k) | (lo >> (64 - k));  // 0 < k < 64
  lo <<= k;
  lo += offset;
  hi += lo < offset ? 1 : 0;
  uint32_t s = 0;
  for (int j = 0; j < k; ++j) {
    TStep(hi, lo, &s);
    if (Below(P, s, hi, lo)) return true;
  }
  return false;
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

// Two-step walk rounds between two hand-outs of walking groups: 6 in delay-only units (144
// T-steps), 12 in delay+class units, whose members walk about four times longer, so that
// the hand-out's ballots and ring reads come half as often (H100, 2^60, 2^40 numbers: 6 / 8
// / 10 / 12 / 16 / 24 rounds gave class 1.975 / 1.987 / 1.991 / 1.995 / 1.996 / 1.991e12,
// delay-only 8.96e12 at 6, 8.90e12 at 12, 8.62e12 at 16).
constexpr int kDelayPairWalkRounds = 6;
constexpr int kClassPairWalkRounds = 12;
// The exactness suite's mutation check (gpu/gpu_known_answer_test.cc): built with
// -DCOLLATZ_GPU_MUTATION=1 the group walk ends its members one step early.
#ifndef COLLATZ_GPU_MUTATION
#define COLLATZ_GPU_MUTATION 0
#endif
constexpr uint32_t kMutationStepsShort = COLLATZ_GPU_MUTATION == 1 ? 1 : 0;

// Full-delay walks (no early termination: every member walks to the tail) are the longest.
constexpr int kFullDelayPairWalkRounds = 12;

// The walk table of two-step rounds (kPairStepBits = 12) in shared memory: 8-byte entries
// {PackPairStep(c, steps, StepValueClass(p, c)), 3^p} (steps = 12 + p <= 24, c < 3^12 < 2^20).
template <int kThreads>
__device__ __forceinline__ void FillSharedPairSteps(const StepEntry* table, uint2* shared_steps) {
  for (uint32_t i = threadIdx.x; i < (1u << kPairStepBits); i += kThreads) {
    const uint4 e = __ldg(reinterpret_cast<const uint4*>(table) + i);
    shared_steps[i] = make_uint2(PackPairStep(e.x, e.z, StepValueClass(e.z - kPairStepBits, e.x)), e.y);
  }
}

// Two 12-bit steps of the group walk with one wide multiply. With v = 2^24 H + 2^12 L + i1
// and (c1, m1) the entry of i1, the first step makes v1 = m1 (2^12 H + L) + c1: its low 12
// bits i2 and v1 >> 12 = m1 H + q follow from t = m1 L + c1 < 2^32 alone (q = t >> 12); the
// second makes m2 (m1 H + q) + c2 = (m1 m2) H + (m2 q + c2): one 96 x 32-bit product when
// m1 m2 < 2^32 (p1 + p2 <= 20) and H < 2^96 (nearly always), else the two steps one by one.
// s += both steps' counts, *row_bit = the second step's value class << kWalkCheckBits. A value that would
// leave 128 bits (only on the rare path) goes to on_overflow, which ends the member (s = 0):
// the common path carries no overflow test.
template <typename OnOverflow>
__device__ __forceinline__ void GroupWalkPairStep(uint32_t table_at, uint64_t& hi, uint64_t& lo, uint32_t& s,
                                                  uint32_t* row_bit, const OnOverflow& on_overflow) {
  constexpr uint32_t kMask = (1u << kPairStepBits) - 1;
  const uint32_t v0 = static_cast<uint32_t>(lo);
  const uint2 e1 = LoadShared64(table_at + ((v0 & kMask) << 3));
  // Bits 12 .. 23 of v0 as (v0 << 8) >> 20 with the left shift kept apart (an empty asm), so
  // that it runs as IMAD.SHL on the FMA pipe: the compiler's shift and mask were two
  // instructions on the ALU pipe, which bounds the walk (docs/PERFORMANCE.md, lever 69).
  uint32_t high = v0 << (32 - 2 * kPairStepBits);
  asm("" : "+r"(high));
  const uint32_t t = e1.y * (high >> (32 - kPairStepBits)) + (e1.x >> kPairStepCShift);
  const uint2 e2 = LoadShared64(table_at + ((t & kMask) << 3));
  s += (e1.x & 0x7F) + (e2.x & 0x7F);
  *row_bit = (e2.x >> (7 - kWalkCheckBits)) & (3u << kWalkCheckBits);
  const uint32_t v1 = static_cast<uint32_t>(lo >> 32);
  const uint32_t v2 = static_cast<uint32_t>(hi), v3 = static_cast<uint32_t>(hi >> 32);
  const uint32_t h3 = v3 >> (2 * kPairStepBits);
  // The fast path needs m = 3^(p1 + p2) < 2^32 (p1 + p2 <= 20) and H < 2^96 (v < 2^120):
  // then H m + a < 2^128 always. Otherwise (rarely) the two steps one by one.
  if ((__umulhi(e1.y, e2.y) | h3) != 0) {
    const bool fits = StepMulAdd(hi, lo, kPairStepBits, e1.y, e1.x >> kPairStepCShift);
    if (!(StepMulAdd(hi, lo, kPairStepBits, e2.y, e2.x >> kPairStepCShift) && fits)) on_overflow();
    return;
  }
  const uint32_t m = e1.y * e2.y;
  const uint64_t a = static_cast<uint64_t>(e2.y) * (t >> kPairStepBits) + (e2.x >> kPairStepCShift);
  const uint32_t h0 = __funnelshift_r(v0, v1, 2 * kPairStepBits), h1 = __funnelshift_r(v1, v2, 2 * kPairStepBits);
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

// kWalk: 0 walks on the global (L2) step table; -1 on a shared-memory table of
// P.walk_step_bits; a positive width on a shared-memory table of that many bits, known at
// compile time (immediate shifts and masks: fewer instructions in the issue-bound walk).
// kRoundSteps: table steps per walk round (P.walk_round_steps), each round ending in one
// check and one chance to take the next member.
// kFullDelay: the unit has no early termination (P.early_stop == 0: a provable floor but no
// trusted or covered record table), so no member can stop before the tail: the decisions
// and the walk's check skip the stop tables, and a member whose delay is not open (at most
// the floor and no open hole) finishes without the out-of-line path, which would record
// nothing for it.
template <int kThreads, int kMinBlocks, int kWalk, int kRoundSteps, int kPairRounds, bool kFullDelay = false>
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
  // gen_end_rel - (gen_left + 1) 2^G (computed on the rare finishing paths only).
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
  const int walk_rounds = P.walk_rounds;
  while (true) {
    if (group_queued < 32 && round < P.group_rounds) {
      // Decide groups until 32 walking ones are queued (or none are left).
      while (group_queued < 32 && round < P.group_rounds) {
        const uint32_t g = round * 32 + lane;
        round = next_round();
        const uint32_t entry = g >> G, q = g & group_mask;
        const SieveEntry e = P.entries[P.group_first_entry + entry];
        // Members: cycles q, q + 2^G, ... below group_cycles (none if q >= group_cycles).
        const uint32_t n = q < P.group_cycles ? (P.group_cycles - q + group_mask) >> G : 0;
        // w = 3^p (h0 + r + modulus q) + c: the first member's value after k steps.
        const uint64_t a1 = e.pow3 * P.column_modulus;
        uint64_t w_hi = P.h_base_hi, w_lo = P.h_base_lo + (e.offset >> P.sieve_bits);
        w_hi += w_lo < P.h_base_lo ? 1 : 0;
        MulAdd(w_hi, w_lo, e.pow3, e.c);  // cannot overflow below 2^100
        // Work hash over every number of the entry (values w0 + A1 c after k steps, c <
        // group_cycles): one closed form, by the lane of the entry's group q = 0.
        if (q == 0) atomicAdd(&warp_hash[threadIdx.x / 32], WorkHashProgression(w_lo, a1, P.group_cycles));
        AddProduct(w_hi, w_lo, a1, q);
        const uint32_t warp_n = WarpSum(n);  // n <= 2^16: no overflow
        if (lane == 0) warp_candidates[threadIdx.x / 32] += warp_n;
        // The last member after k steps, then after k + G.
        uint64_t last_hi = w_hi, last_lo = w_lo;
        AddProduct(last_hi, last_lo, a1, static_cast<uint64_t>(n - 1) << G);
        bool walks = n != 0 && P.group_skip[g] == 0 && (kFullDelay || !Below(P, e.steps, last_hi, last_lo));
        uint64_t b2_hi = 0, b2_lo = 0, a2 = 0;
        uint32_t s2 = 0;
        if (walks) {
          const uint64_t packed = __ldg(P.group_steps + (static_cast<uint32_t>(w_lo) & group_mask));
          constexpr uint64_t kField = (uint64_t{1} << kGroupStepFieldBits) - 1;
          const uint3 t2 = make_uint3(static_cast<uint32_t>(packed & kField),
                                      static_cast<uint32_t>((packed >> kGroupStepFieldBits) & kField),
                                      static_cast<uint32_t>(packed >> (2 * kGroupStepFieldBits)));
          b2_hi = w_hi >> G;
          b2_lo = (w_lo >> G) | (w_hi << (64 - G));
          MulAdd(b2_hi, b2_lo, t2.y, t2.x);  // cannot overflow below 2^100
          a2 = a1 * t2.y;
          s2 = e.steps + t2.z;
          uint64_t l2_hi = b2_hi, l2_lo = b2_lo;
          AddProduct(l2_hi, l2_lo, a2, n - 1);
          walks = kFullDelay || !Below(P, s2, l2_hi, l2_lo);
        }
        const unsigned walking = __ballot_sync(0xFFFFFFFFu, walks);
        if (walks) {
          const uint32_t slot = (group_head + group_queued + __popc(walking & lanes_below)) & (kRing - 1);
          groups.lo[slot] = b2_lo;
          groups.hi[slot] = b2_hi;
          groups.step[slot] = a2;
          groups.rel[slot] = entry * P.group_cycles + q;
          groups.s[slot] = static_cast<uint16_t>(s2);
          groups.n[slot] = static_cast<uint16_t>(n);
        }
        group_queued += __popc(walking);
        __syncwarp();
      }
    }
    // Lanes with nothing left to walk take the next walking groups.
    const unsigned needy = __ballot_sync(0xFFFFFFFFu, (s | gen_left) == 0);
    if (needy != 0 && group_queued != 0) {
      const uint32_t take = min(static_cast<uint32_t>(__popc(needy)), group_queued);
      if ((s | gen_left) == 0) {
        const uint32_t rank = __popc(needy & lanes_below);
        if (rank < take) {
          const uint32_t slot = (group_head + rank) & (kRing - 1);
          gen_lo = groups.lo[slot];
          gen_hi = groups.hi[slot];
          gen_step = groups.step[slot];
          gen_s = groups.s[slot];
          gen_left = groups.n[slot];
          gen_end_rel = groups.rel[slot] + (gen_left << G);
        }
      }
      group_head = (group_head + take) & (kRing - 1);
      group_queued -= take;
      __syncwarp();
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
      if (s != 0) {
        // Leaving 128 bits: the host finishes the member exactly; s = 0 ends it here (the
        // tail test below needs s >= tail_from >= 1, so it skips the garbage value).
        auto to_host = [&]() {
          FinishRel<kGroupRel>(&shared_params, gen_end_rel - ((gen_left + 1) << G), 0, true);
          s = 0;
        };
        uint32_t row_bit;
        bool fits = true;
        if constexpr (kFullDelay) {
          static_assert(kRoundSteps == 2, "full-delay walks take two-step rounds");
          GroupWalkPairStep(shared_steps_at, hi, lo, s, &row_bit, to_host);
          // s == 0: the member went to the host. Every value at a check is at least 2^(2S)
          // unless it is in the tail (see above), so the tail test is the whole check.
          if (s != 0 && (hi | (lo >> P.tables.tail_bits)) == 0) {
            const uint32_t d = s + __ldg(P.tables.tail + lo) - kMutationStepsShort;
            if (d > P.floor || d >= kClassSlots ||
                (P.classes && __ldg(P.tables.hole_prefix + d + 1) != __ldg(P.tables.hole_prefix + d))) {
              FinishRel<kGroupRel>(&shared_params, gen_end_rel - ((gen_left + 1) << G), d, false);
            }
            s = 0;
          }
          return;
        } else if constexpr (kRoundSteps == 2) {
          GroupWalkPairStep(shared_steps_at, hi, lo, s, &row_bit, to_host);
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
          FinishRel<kGroupRel>(&shared_params, gen_end_rel - ((gen_left + 1) << G),
                               s + __ldg(P.tables.tail + lo) - kMutationStepsShort, false);
          s = 0;
        }
      }
    };
    if constexpr (kRoundSteps == 2) {
      // A fixed count, two rounds a loop pass (unrolled further it spills at the 48-register cap).
      static_assert(kPairRounds % 2 == 0, "rounds two to a loop pass");
      for (int r = 0; r < kPairRounds / 2; ++r) {
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

// The group launch's prelude kernels' block size (LaunchGroups).
constexpr int kPreludeThreads = 128;

// entry_stops[i] = EntryStops of the launch's entry i, ahead of the group kernel (inlined
// there, its loop cost the walk registers: spills, and -7% in class units).
__global__ void __launch_bounds__(kPreludeThreads) EntryStopKernel(const LaunchParams P, uint8_t* entry_stops) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < P.group_entries; i += gridDim.x * blockDim.x) {
    entry_stops[i] = EntryStops(P, P.entries[P.group_first_entry + i].offset) ? 1 : 0;
  }
}

// group_skip[g] for the launch's groups: 1 if the group's entry stops (entry_stops), 2 if the
// join map says that every member has a smaller twin of the same delay in the unit (N mod
// 2^L = offset + 2^k (h_base + q) mod 2^L, one residue a group since L <= k + G); counts
// the groups of the second kind. Apart from the group kernel, whose walk registers any
// code in its decisions costs (spills).
template <int kThreads>
__global__ void __launch_bounds__(kThreads) GroupSkipKernel(const LaunchParams P, const uint8_t* entry_stops,
                                                            uint8_t* group_skip) {
  const int G = P.group_bits;
  const uint32_t groups = P.group_entries << G;
  unsigned long long joined = 0;
  for (uint32_t g = blockIdx.x * kThreads + threadIdx.x; g < groups; g += gridDim.x * kThreads) {
    const uint32_t entry = g >> G, q = g & ((1u << G) - 1);
    uint8_t skip = entry_stops[entry];
    if (skip == 0 && P.join_map != nullptr && q < P.group_cycles) {
      // The group's first member: base + q cycles + the entry's offset.
      const uint64_t add = q * P.cycle_stride + P.entries[P.group_first_entry + entry].offset;
      const uint64_t n_lo = P.base_lo + add, n_hi = P.base_hi + (n_lo < add ? 1 : 0);
      if (JoinEntry(P, n_hi, n_lo) == 0) {
        skip = 2;
        ++joined;
      }
    }
    group_skip[g] = skip;
  }
  using Reduce = cub::BlockReduce<unsigned long long, kThreads>;
  __shared__ typename Reduce::TempStorage temp;
  const unsigned long long total = Reduce(temp).Sum(joined);
  if (threadIdx.x == 0 && total != 0) atomicAdd(&P.acc->join_skipped_groups, total);
}

template <int kThreads, int kWalk, int kRoundSteps, int kPairRounds = kDelayPairWalkRounds, bool kFullDelay = false>
cudaError_t GroupKernelFor(int threads_per_sm, void (**kernel)(LaunchParams)) {
  switch (threads_per_sm) {
    case 0: *kernel = GroupKernel<kThreads, 1, kWalk, kRoundSteps, kPairRounds, kFullDelay>; break;
    case 1280:
      *kernel = GroupKernel<kThreads, (1280 / kThreads > 0 ? 1280 / kThreads : 1), kWalk, kRoundSteps, kPairRounds,
                            kFullDelay>;
      break;
    case 1536: *kernel = GroupKernel<kThreads, 1536 / kThreads, kWalk, kRoundSteps, kPairRounds, kFullDelay>; break;
    default: *kernel = nullptr; return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

template <int kThreads>
cudaError_t GroupKernelSized(int threads_per_sm, int walk_step_bits, void (**kernel)(LaunchParams)) {
  // The default width (12) has its own instantiation; other shared widths read it at run time.
  return walk_step_bits == 12 ? GroupKernelFor<kThreads, 12, 1>(threads_per_sm, kernel)
         : walk_step_bits > 0 ? GroupKernelFor<kThreads, -1, 1>(threads_per_sm, kernel)
                              : GroupKernelFor<kThreads, 0, 1>(threads_per_sm, kernel);
}

// The group kernel of a block size, register cap, walk table (shared when walk_step_bits >
// 0), steps a walk round (two: kPairStepBits-bit table, kPairWalkBlockThreads threads) and
// kind (two-step rounds between hand-outs).
cudaError_t FindGroupKernel(int block_threads, int threads_per_sm, int walk_step_bits, int round_steps,
                            bool classes, bool full_delay, void (**kernel)(LaunchParams)) {
  if (walk_step_bits < 0 || walk_step_bits > kMaxSharedStepBits) return cudaErrorInvalidValue;
  if (round_steps == 2) {
    if (walk_step_bits != kPairStepBits || block_threads != kPairWalkBlockThreads) return cudaErrorInvalidValue;
    if (full_delay) {
      return GroupKernelFor<kPairWalkBlockThreads, kPairStepBits, 2, kFullDelayPairWalkRounds, true>(threads_per_sm,
                                                                                                     kernel);
    }
    return classes ? GroupKernelFor<kPairWalkBlockThreads, kPairStepBits, 2, kClassPairWalkRounds>(threads_per_sm, kernel)
                   : GroupKernelFor<kPairWalkBlockThreads, kPairStepBits, 2>(threads_per_sm, kernel);
  }
  if (round_steps != 1) return cudaErrorInvalidValue;
  switch (block_threads) {
    case 128: return GroupKernelSized<128>(threads_per_sm, walk_step_bits, kernel);
    case 256: return GroupKernelSized<256>(threads_per_sm, walk_step_bits, kernel);
    default: return cudaErrorInvalidValue;
  }
}

size_t GroupDynamicShared(int walk_step_bits, int round_steps) {
  if (round_steps == 2) return sizeof(uint2) << kPairStepBits;
  return walk_step_bits > 0 ? (sizeof(uint32_t) << walk_step_bits) + 32 * sizeof(uint32_t) : 0;
}

// The walk-queue kernel of a register cap (resident threads per SM; 0: none).
template <int kThreads, bool kSieved>
cudaError_t QueueKernelFor(int threads_per_sm, void (**kernel)(LaunchParams)) {
  switch (threads_per_sm) {
    case 0: *kernel = QueueKernel<kThreads, kSieved, 1>; break;
    case 1280: *kernel = QueueKernel<kThreads, kSieved, (1280 / kThreads > 0 ? 1280 / kThreads : 1)>; break;
    case 1536: *kernel = QueueKernel<kThreads, kSieved, 1536 / kThreads>; break;
    case 2048: *kernel = QueueKernel<kThreads, kSieved, 2048 / kThreads>; break;
    default: *kernel = nullptr; return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

template <int kThreads, bool kSieved, bool kShared>
cudaError_t LaunchOne(const LaunchParams& p, int grid_blocks, cudaStream_t stream) {
  const size_t shared = kShared ? (sizeof(uint32_t) << p.tables.step_bits) : 0;
  if (p.queue && !kShared) {
    void (*kernel)(LaunchParams) = nullptr;
    const cudaError_t e = QueueKernelFor<kThreads, kSieved>(p.queue_threads_per_sm, &kernel);
    if (e != cudaSuccess) return e;
    kernel<<<grid_blocks, kThreads, 0, stream>>>(p);
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
cudaError_t BlocksPerSm(bool shared_steps, int step_bits, bool full, bool queue, int queue_threads_per_sm, int* blocks) {
  if (queue && !shared_steps) {
    void (*kernel)(LaunchParams) = nullptr;
    const cudaError_t e = QueueKernelFor<kThreads, true>(queue_threads_per_sm, &kernel);
    if (e != cudaSuccess) return e;
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, kThreads, 0);
  }
  const size_t shared = shared_steps ? sizeof(uint32_t) << step_bits : 0;
  if (full) {
    return shared_steps ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                              blocks, SearchKernel<kThreads, true, true, 2048 / kThreads>, kThreads, shared)
                        : cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                              blocks, SearchKernel<kThreads, true, false, 2048 / kThreads>, kThreads, 0);
  }
  return shared_steps
             ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, SearchKernel<kThreads, true, true, 1>, kThreads,
                                                             shared)
             : cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, SearchKernel<kThreads, true, false, 1>, kThreads, 0);
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

cudaError_t SearchBlocksPerSm(int block_threads, bool shared_steps, int step_bits, bool full, bool queue,
                              int queue_threads_per_sm, int* blocks) {
  switch (block_threads) {
    case 128: return BlocksPerSm<128>(shared_steps, step_bits, full, queue, queue_threads_per_sm, blocks);
    case 256: return BlocksPerSm<256>(shared_steps, step_bits, full, queue, queue_threads_per_sm, blocks);
    case 512: return BlocksPerSm<512>(shared_steps, step_bits, full, queue, queue_threads_per_sm, blocks);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchGroups(const LaunchParams& p, int block_threads, int grid_blocks, cudaStream_t stream) {
  (void)cudaGetLastError();
  if (p.entry_stops == nullptr || p.group_skip == nullptr || p.group_entries == 0) return cudaErrorInvalidValue;
  // Blocks of kPreludeThreads: they fit beside a running group kernel (2 x 640 threads at 48
  // registers leave 4096 registers an SM), so the next launch's preludes run during this one
  // instead of in the gap between the two.
  EntryStopKernel<<<(p.group_entries + kPreludeThreads - 1) / kPreludeThreads, kPreludeThreads, 0, stream>>>(
      p, p.entry_stops);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  const uint64_t groups = static_cast<uint64_t>(p.group_entries) << p.group_bits;
  GroupSkipKernel<kPreludeThreads><<<static_cast<unsigned>(std::min<uint64_t>(
                                         (groups + kPreludeThreads - 1) / kPreludeThreads, 8192)),
                                     kPreludeThreads, 0, stream>>>(
      p, p.entry_stops, p.group_skip);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  void (*kernel)(LaunchParams) = nullptr;
  cudaError_t e = FindGroupKernel(block_threads, p.queue_threads_per_sm, p.walk_step_bits, p.walk_round_steps,
                                  p.classes != 0, p.early_stop == 0, &kernel);
  if (e != cudaSuccess) return e;
  // More than 48 KiB of shared memory a block (a 13-bit walk table and the rings) must be
  // allowed explicitly.
  e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(GroupDynamicShared(p.walk_step_bits, p.walk_round_steps)));
  if (e != cudaSuccess) return e;
  kernel<<<grid_blocks, block_threads, GroupDynamicShared(p.walk_step_bits, p.walk_round_steps), stream>>>(p);
  return cudaGetLastError();
}

cudaError_t GroupBlocksPerSm(int block_threads, int threads_per_sm, int walk_step_bits, int walk_round_steps,
                             int* blocks) {
  void (*kernel)(LaunchParams) = nullptr;
  // Both kinds' kernels take the same registers and shared memory.
  cudaError_t e =
      FindGroupKernel(block_threads, threads_per_sm, walk_step_bits, walk_round_steps, false, false, &kernel);
  if (e != cudaSuccess) return e;
  e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(GroupDynamicShared(walk_step_bits, walk_round_steps)));
  if (e != cudaSuccess) return e;
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, block_threads,
                                                       GroupDynamicShared(walk_step_bits, walk_round_steps));
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
