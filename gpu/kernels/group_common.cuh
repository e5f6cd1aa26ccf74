// Device code shared by the residue-group kernel (group_kernel.cu) and its prelude kernels
// (group_prelude_kernel.cu): 128-bit helpers, the plain stop test, a sieve entry's value after k
// T-steps, a group's members and the group_skip codes the prelude writes and the group kernel
// reads. In an anonymous namespace like walk_common.cuh: each .cu gets its own copy.
#pragma once

#include "gpu/kernels/walk_common.cuh"

// The exactness suite's mutation hook (gpu/gpu_known_answer_test.cc, gpu/device_run.sh): each
// .cu lists the mutations of its own code.
#ifndef COLLATZ_GPU_MUTATION
#define COLLATZ_GPU_MUTATION 0
#endif

namespace collatz::gpu {
namespace {

// (hi:lo) += a * m (a, m < 2^64; the caller guarantees no overflow past 128 bits).
__device__ __forceinline__ void AddProduct(uint64_t& hi, uint64_t& lo, uint64_t a, uint64_t m) {
  const uint64_t p_lo = a * m;
  const uint64_t p_hi = __umul64hi(a, m);
  lo += p_lo;
  hi += p_hi + (lo < p_lo ? 1 : 0);
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

// v >> 32 < limit for v = (hi:lo) < 2^128, as the borrow of one 96-bit subtraction chain:
// the narrow walk check (LaunchParams::walk_check_narrow), whose thresholds are the exact
// ones >> 32, rounded down, so that it stops no value the exact check would not.
__device__ __forceinline__ bool HighBitsLess(uint64_t hi, uint64_t lo, uint64_t limit) {
  uint32_t borrow;
  asm("{\n\t.reg .u32 t;\n\tsub.cc.u32 t, %1, %4;\n\tsubc.cc.u32 t, %2, %5;\n\tsubc.cc.u32 t, %3, 0;\n\t"
      "subc.u32 %0, 0, 0;\n\t}"
      : "=r"(borrow)
      : "r"(static_cast<uint32_t>(lo >> 32)), "r"(static_cast<uint32_t>(hi)), "r"(static_cast<uint32_t>(hi >> 32)),
        "r"(static_cast<uint32_t>(limit)), "r"(static_cast<uint32_t>(limit >> 32)));
  return borrow != 0;
}

__device__ __forceinline__ bool Below(const LaunchParams& P, uint32_t s, uint64_t hi, uint64_t lo) {
  if (s > P.floor) return false;
  const ulonglong2 limit = __ldg(P.tables.stop_below + s);
  return Less128(hi, lo, limit.y, limit.x);
}

// A sieve entry's first value after k T-steps in the launch: 3^p (h_base + offset >> k) + c
// (cannot overflow below 2^100).
__device__ __forceinline__ void EntryValueAfterK(const LaunchParams& P, const SieveEntry& e, uint64_t& hi,
                                                 uint64_t& lo) {
  hi = P.h_base_hi;
  lo = P.h_base_lo + (e.offset >> P.sieve_bits);
  hi += lo < P.h_base_lo ? 1 : 0;
  MulAdd(hi, lo, e.pow3, e.c);
}

// Members of group q of a launch: cycles q, q + 2^G, ... below group_cycles (none if q >=
// group_cycles). The decision and the prelude count them alike.
__device__ __forceinline__ uint32_t GroupMembers(const LaunchParams& P, uint32_t q, int G) {
  return q < P.group_cycles ? (P.group_cycles - q + (1u << G) - 1) >> G : 0;
}

// group_skip codes the prelude writes (GroupSkipKernel) beside 0 (the group walks).
constexpr uint8_t kSkipEntryStops = 1;  // its entry stops within k T-steps (EntryStops)
constexpr uint8_t kSkipJoined = 2;      // the join map: every member has a smaller twin
constexpr uint8_t kSkipStopped = 3;     // every member stops inside its shared steps (GroupStopsWithin)
// kSkipHalf + j: the members t = 1 - j (mod 2) stop one T-step after k + G, only those with t
// = j (mod 2) walk (lever 86).
constexpr uint8_t kSkipHalf = 4;

}  // namespace
}  // namespace collatz::gpu
