// Device functions shared by the search, walk-queue and residue-group kernels (and the tail
// fill): 128-bit arithmetic, the early-termination check, a number's set-up and finishing
// paths, the queue ring and the out-of-line rare paths. Included by the kernels' .cu files only.
// Everything stays in an anonymous namespace, as when the kernels shared one file: each kernel's
// translation unit gets its own internal copy (nvcc compiles whole programs per .cu, no -rdc).
#pragma once

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

// Resident threads an SM holds: the register caps of __launch_bounds__ divide it.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
#define COLLATZ_THREADS_PER_SM 1024
#else
#define COLLATZ_THREADS_PER_SM 2048
#endif

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

// A warp's walk queue ring (queue_kernel.cu); the group kernel keeps rings of this size too.
constexpr uint32_t kRing = 64;  // at most 31 + 32 numbers are queued

// The warp-wide hand-out of a ring (head, queued: warp-uniform): of the lanes in `wanting`
// (the warp's ballot of `wants`), the first min(popc(wanting), queued) in lane order each
// take one slot, in ring order, through take_slot(slot); then head and queued move on for
// the whole warp. All lanes active.
template <typename TakeSlot>
__device__ __forceinline__ void WarpRingTake(unsigned wanting, bool wants, unsigned lanes_below, uint32_t& head,
                                             uint32_t& queued, const TakeSlot& take_slot) {
  const uint32_t take = min(static_cast<uint32_t>(__popc(wanting)), queued);
  if (wants) {
    const uint32_t rank = __popc(wanting & lanes_below);
    if (rank < take) take_slot((head + rank) & (kRing - 1));
  }
  head = (head + take) & (kRing - 1);
  queued -= take;
  __syncwarp();
}

// The warp-wide append to a ring: every lane with `puts` writes one slot through
// put_slot(slot), in lane order after the queued ones. The caller keeps queued + 32 <= kRing.
// All lanes active.
template <typename PutSlot>
__device__ __forceinline__ void WarpRingPush(bool puts, unsigned lanes_below, uint32_t head, uint32_t& queued,
                                             const PutSlot& put_slot) {
  const unsigned putting = __ballot_sync(0xFFFFFFFFu, puts);
  if (puts) put_slot((head + queued + __popc(putting & lanes_below)) & (kRing - 1));
  queued += __popc(putting);
  __syncwarp();
}

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
  // The number stands for its join-map twins in the tallies (they were skipped), or (weight
  // 0) a smaller twin stands for it. Sieved positions of a join unit (the partial cycles at
  // its ends, beside the groups: a delay-only cycle of 9 2^k numbers does not divide 2^L)
  // follow the map too, so that a run split between them and the groups counts once.
  const uint32_t weight = kLayout != kFirstBlockRel && P.join_map != nullptr ? JoinEntry(P, x.n_hi, x.n_lo) : 1;
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

}  // namespace
}  // namespace collatz::gpu
