// The residue-group kernel's prelude (gpu/kernels/group_kernel.cu has the kernel): the entry
// stop (EntryStopKernel: an entry whose largest number in the launch stops within its first k
// T-steps) and the group decisions ahead of it (GroupSkipKernel: a group's last member inside
// its shared steps, each half one T-step after k + G, the join map's skips), with their pickers
// (FindEntryStopKernel, FindGroupSkipKernel); launched by LaunchGroups in gpu/search_launch.cu.
// Mutations of this file's code (the exactness suite, gpu/kernels/group_common.cuh): =3 a
// group's first member decides its stops inside the shared steps, =4 the checks take the largest
// predecessor bound (value class 3, v = 8 mod 9; residue 80 mod 162) whatever the value's
// residue, =6 each half of a group is decided by its first member (GroupStopsWithin).
#include "core/early_termination.h"
#include "gpu/kernels/find_kernels.h"
#include "gpu/kernels/group_common.cuh"

namespace collatz::gpu {
namespace {

// core's ValueClassOfResidue9 for r = 0 .. 8, 2 bits a residue: one shift and mask in the kernel.
constexpr uint32_t PackedValueClasses() {
  uint32_t packed = 0;
  for (unsigned r = 0; r < 9; ++r) packed |= ValueClassOfResidue9(r) << (2 * r);
  return packed;
}

// The walk table's value class (StepValueClass, ValueClassOfResidue9) of v (2^32 = 4, 2^64 =
// 7, 2^96 = 1 mod 9).
__device__ __forceinline__ uint32_t ValueClassMod9(uint64_t hi, uint64_t lo) {
  const uint64_t folded = (lo & 0xFFFFFFFFu) + 4 * (lo >> 32) + 7 * (hi & 0xFFFFFFFFu) + (hi >> 32);
  constexpr uint32_t kClassOfResidue = PackedValueClasses();
  return (kClassOfResidue >> (2 * static_cast<uint32_t>(folded % 9))) & 3;
}

// True if every number of an entry or group in the prelude can stop, whose largest is v =
// (hi:lo) after s steps, `odd` of its T-steps odd: all of them are no larger and take the
// same steps, so Below(v) stops each. From P.group_class_min_odd odd T-steps on they differ
// by multiples of 9 (LaunchParams), so they share v's value class, and v below the walk
// table's threshold for an odd value of that class (the larger of stop_below[s] and the
// class's predecessor bounds, gpu/stop_tables.h) stops each of them, whatever its parity;
// from P.group_deep_min_odd on, with their parity shared (parity_shared), they share v mod
// 162, and v below the ancestor table's threshold for it stops each. The prelude's checks
// only: in the group kernel's decisions (after k and k + G steps) the classes stopped no more
// (2^66, 2^46 numbers: 8.321e12 against 8.305e12) and cost the walk 8 bytes of spills.
__device__ __forceinline__ bool GroupBelow(const LaunchParams& P, uint32_t s, uint32_t odd, bool parity_shared,
                                           uint64_t hi, uint64_t lo) {
  if (parity_shared && odd >= P.group_deep_min_odd && s <= P.ancestor_stop_last) {
    // The thresholds of every smaller ancestor of v's residue mod 162 (gpu/stop_tables.h):
    // v mod 81 folded from 2^32 = 49, 2^64 = 52, 2^96 = 37 (mod 81), then its parity (81 is odd).
    const uint64_t folded = (lo & 0xFFFFFFFFu) + 49 * (lo >> 32) + 52 * (hi & 0xFFFFFFFFu) + 37 * (hi >> 32);
    uint32_t r = static_cast<uint32_t>(folded % 81);
    r += ((r ^ static_cast<uint32_t>(lo)) & 1) * 81;
#if COLLATZ_GPU_MUTATION == 4
    r = 80;
#endif
    const ulonglong2 limit = __ldg(P.ancestor_stop + s * kAncestorResidues + r);
    return Less128(hi, lo, limit.y, limit.x);
  }
  if (odd < P.group_class_min_odd) return Below(P, s, hi, lo);
  const uint32_t row = min(s, P.walk_stop_last) << kWalkRowBits;
#if COLLATZ_GPU_MUTATION == 4  // exactness suite's mutation check: every value taken for 8 (mod 9)
  const uint32_t value_class = 3;
#else
  const uint32_t value_class = ValueClassMod9(hi, lo);
#endif
  const ulonglong2 limit = __ldg(P.walk_stop + row + (value_class << kWalkCheckBits) + 1);
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
    // The entry's numbers differ by multiples of 2^(k - j - 1): they share their parity but
    // after the last step.
    if (GroupBelow(P, s, s - (j + 1), j + 1 < k, hi, lo)) return true;
  }
  return false;
}

// kSkipStopped if the last of a group's n members (cycle q + (n - 1) 2^G of entry e) can stop
// after one of the T-steps k + 1 .. k + G - 1: the members agree mod 2^(k + G), so they take
// the same parities up to k + G and have spent the same steps, and their values there grow
// with N, so then every member can. The decision checks k and k + G alone; a value that dips
// below its threshold in between and climbs back would walk (lever 78: about 10% of the
// walking groups at 2^66). One T-step and a check a step. Then (P.group_half_checks, n >= 2)
// one step past k + G, where the members' values B2 + A2 t (A2 odd) split by the parity of
// t: each half takes the same step, grows with t and shares its value class (its members
// differ by 2 A2 before the step, A2 or 3 A2 after: multiples of 9), so its last member (t =
// n - 1 or n - 2) decides for it: kSkipHalf + j if only the half t = j (mod 2) can walk on,
// kSkipStopped if neither (host model at 2^66: 3.3% fewer walk rounds).
__device__ __forceinline__ uint8_t GroupStopsWithin(const LaunchParams& P, const SieveEntry& e, uint32_t q,
                                                    uint32_t n, bool* shallow) {
  const int G = P.group_bits;
  uint64_t hi, lo;
  EntryValueAfterK(P, e, hi, lo);
  const uint64_t a1 = e.pow3 * P.column_modulus;
#if COLLATZ_GPU_MUTATION == 3  // exactness suite's mutation check: the group's first member decides
  AddProduct(hi, lo, a1, q);
#else
  AddProduct(hi, lo, a1, q + (static_cast<uint64_t>(n - 1) << G));
#endif
  uint32_t s = e.steps;
  for (int j = 1; j < G; ++j) {
    TStep(hi, lo, &s);
    if (GroupBelow(P, s, s - (P.sieve_bits + j), true, hi, lo)) return kSkipStopped;  // members 2^(G - j) apart
  }
  TStep(hi, lo, &s);  // the last member after k + G steps
  // A group past group_shallow_steps walks whole from k T-steps (its A2 could pass 2^64;
  // the group kernel): no half check. Else A2 = A1 3^(the odd steps among the G shared ones).
  if (s > P.group_shallow_steps) {
    *shallow = true;
    return 0;
  }
  if (P.group_half_checks == 0 || n < 2) return 0;
  uint64_t a2 = a1;
  for (uint32_t odd = s - e.steps - static_cast<uint32_t>(G); odd != 0; --odd) a2 *= 3;
  uint32_t stops = 0;
  for (uint32_t back = 0; back < 2; ++back) {  // members n - 1 and n - 2
    uint64_t v_hi = hi, v_lo = lo;
#if COLLATZ_GPU_MUTATION == 6  // exactness suite's mutation check: each half's first member decides
    const uint64_t less = (n - 1 - ((n - 1 - back) & 1)) * a2;
#else
    const uint64_t less = back * a2;
#endif
    v_hi -= v_lo < less ? 1 : 0;
    v_lo -= less;
    uint32_t s_half = s;
    TStep(v_hi, v_lo, &s_half);
    // The half's members differ by odd multiples of 9 A1 3^...: no shared parity.
    if (GroupBelow(P, s_half, s_half - (P.sieve_bits + G + 1), false, v_hi, v_lo)) stops |= 1u << ((n - 1 - back) & 1);
  }
  return stops == 3 ? kSkipStopped : stops == 0 ? 0 : static_cast<uint8_t>(kSkipHalf + (stops == 1 ? 1 : 0));
}

// entry_stops[i] = EntryStops of the launch's entry i, ahead of the group kernel (inlined
// there, its loop cost the walk registers: spills, and -7% in class units).
__global__ void __launch_bounds__(kPreludeThreads) EntryStopKernel(const LaunchParams P, uint8_t* entry_stops) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < P.group_entries; i += gridDim.x * blockDim.x) {
    entry_stops[i] = EntryStops(P, P.entries[P.group_first_entry + i].offset) ? 1 : 0;
  }
}

// group_skip[g] for the launch's groups: 1 if the group's entry stops (entry_stops), 3 if
// its last member can stop inside its k + G steps (GroupStopsWithin; P.group_step_checks),
// 2 if the join map says that every member has a smaller twin of the same delay in the unit
// (N mod 2^L = offset + 2^k (h_base + q) mod 2^L, one residue a group since L <= k + G);
// counts the groups of the last two kinds. Apart from the group kernel, whose walk registers
// any code in its decisions costs (spills).
// At most 32 registers (16 blocks an SM), so that a 128-thread block still fits beside two
// group-kernel blocks (lever 70) with the checks inside the shared steps compiled in.
template <int kThreads>
__global__ void __launch_bounds__(kThreads, 65536 / (32 * kThreads)) GroupSkipKernel(const LaunchParams P, const uint8_t* entry_stops,
                                                            uint8_t* group_skip) {
  const int G = P.group_bits;
  const uint32_t groups = P.group_entries << G;
  // Two counts in each sum, one a half (each < 2^32 a launch): joined and stopped groups;
  // halved groups and groups that walk from k T-steps (GroupStopsWithin: shallow).
  unsigned long long counts = 0, half_counts = 0;
  for (uint32_t g = blockIdx.x * kThreads + threadIdx.x; g < groups; g += gridDim.x * kThreads) {
    const uint32_t entry = g >> G, q = g & ((1u << G) - 1);
    uint8_t skip = entry_stops[entry] != 0 ? kSkipEntryStops : 0;
    bool shallow = false;
    const SieveEntry* e = P.entries + P.group_first_entry + entry;
    if (skip == 0 && P.group_step_checks != 0 && q < P.group_cycles) {
      skip = GroupStopsWithin(P, *e, q, GroupMembers(P, q, G), &shallow);
      if (skip == kSkipStopped) counts += uint64_t{1} << 32;
    }
    if ((skip == 0 || skip >= kSkipHalf) && P.join_map != nullptr && q < P.group_cycles) {
      // The group's first member: base + q cycles + the entry's offset.
      const uint64_t add = q * P.cycle_stride + e->offset;
      const uint64_t n_lo = P.base_lo + add, n_hi = P.base_hi + (n_lo < add ? 1 : 0);
      if (JoinEntry(P, n_hi, n_lo) == 0) {
        skip = kSkipJoined;
        ++counts;
      }
    }
    if (skip >= kSkipHalf) ++half_counts;                      // halved and not joined
    if (shallow && skip == 0) half_counts += uint64_t{1} << 32;  // walks from k, not joined
    group_skip[g] = skip;
  }
  using Reduce = cub::BlockReduce<unsigned long long, kThreads>;
  __shared__ typename Reduce::TempStorage temp;
  const unsigned long long total = Reduce(temp).Sum(counts);
  __syncthreads();  // temp again
  const unsigned long long halves = Reduce(temp).Sum(half_counts);
  if (threadIdx.x == 0 && (total & 0xFFFFFFFFu) != 0) atomicAdd(&P.acc->join_skipped_groups, total & 0xFFFFFFFFu);
  if (threadIdx.x == 0 && (total >> 32) != 0) atomicAdd(&P.acc->step_stopped_groups, total >> 32);
  if (threadIdx.x == 0 && (halves & 0xFFFFFFFFu) != 0) atomicAdd(&P.acc->half_stopped_groups, halves & 0xFFFFFFFFu);
  if (threadIdx.x == 0 && (halves >> 32) != 0) atomicAdd(&P.acc->shallow_walk_groups, halves >> 32);
}

}  // namespace

EntryStopKernelFn FindEntryStopKernel() { return EntryStopKernel; }
GroupSkipKernelFn FindGroupSkipKernel() { return GroupSkipKernel<kPreludeThreads>; }

}  // namespace collatz::gpu
