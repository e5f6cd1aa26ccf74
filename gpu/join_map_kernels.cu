// Device side of the join map (gpu/join_map.h): keys of the lifts, a CUB radix sort, marks.
#include "gpu/join_map_kernels.h"

#include <cub/device/device_radix_sort.cuh>

#include "core/sieve.h"
#include "gpu/residue_steps.cuh"

namespace collatz::gpu {
namespace {

// The lift with index i (ascending in i).
__device__ __forceinline__ uint64_t Lift(const uint32_t* residues_k, uint32_t residue_count, int k, uint64_t i) {
  const uint64_t b = i / residue_count;
  return residues_k[i - b * residue_count] + (b << k);
}

__global__ void JoinKeysKernel(const uint32_t* residues_k, uint32_t residue_count, int k, int L, uint64_t count,
                               uint64_t* keys, uint32_t* indices, int* failed) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += uint64_t{gridDim.x} * blockDim.x) {
    indices[i] = static_cast<uint32_t>(i);
    // T^L(r) < 2^34 (3/2)^34 < 2^54: 64 bits suffice.
    uint32_t p = 0;
    const uint64_t v = ResidueTSteps(Lift(residues_k, residue_count, k, i), L, &p);
    if ((v >> kJoinKeyCBits) != 0) *failed = 1;
    keys[i] = (uint64_t{p} << kJoinKeyCBits) | v;
  }
}

__global__ void MarkJoinRunsKernel(const uint32_t* residues_k, uint32_t residue_count, int k, const uint64_t* keys,
                                   const uint32_t* indices, uint64_t count, uint8_t* map, int* failed) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += uint64_t{gridDim.x} * blockDim.x) {
    if (i == 0 || keys[i] != keys[i - 1]) {
      uint64_t end = i + 1;
      while (end < count && keys[end] == keys[i]) ++end;  // runs are short (a few entries)
      if (end - i > 255) *failed = 1;
      map[Lift(residues_k, residue_count, k, indices[i]) >> 1] = static_cast<uint8_t>(end - i);
    }
  }
}

// core's DelayOnlySkipsMod9 for n = 0 .. 8, a bit each.
constexpr uint32_t DelaySkipMask() {
  uint32_t mask = 0;
  for (unsigned n = 0; n < 9; ++n) mask |= (DelayOnlySkipsMod9(n) ? 1u : 0u) << n;
  return mask;
}

// 2^L mod 9, so that N = 2^L H + r = 2^L h_mod9 + r (mod 9).
__device__ __forceinline__ uint32_t Pow2Mod9(int L) {
  uint32_t pow2_mod9 = 1;
  for (int j = 0; j < L; ++j) pow2_mod9 = pow2_mod9 * 2 % 9;
  return pow2_mod9;
}

// Whether the delay-only variant for H = h_mod9 examines N = 2^L H + r.
__device__ __forceinline__ bool DelayExamines(uint32_t pow2_mod9, uint32_t h_mod9, uint32_t r_mod9) {
  constexpr uint32_t kSkips = DelaySkipMask();
  return ((kSkips >> ((pow2_mod9 * h_mod9 + r_mod9) % 9)) & 1) == 0;
}

// All nine delay-only variants from one sort of every lift: a run's examined members in
// variant t are its lifts that variant examines, ascending (the sort is stable), so the
// first of them gets their count, as a sort of the variant's own keys would give.
__global__ void MarkDelayJoinRunsKernel(const uint32_t* residues_k, uint32_t residue_count, int k, int L,
                                        const uint64_t* keys, const uint32_t* indices, uint64_t count,
                                        uint8_t* maps, uint64_t map_bytes, int* failed) {
  const uint32_t pow2_mod9 = Pow2Mod9(L);
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += uint64_t{gridDim.x} * blockDim.x) {
    if (i != 0 && keys[i] == keys[i - 1]) continue;
    uint64_t first[kJoinDelayVariants];
    uint32_t examined[kJoinDelayVariants];
    for (int t = 0; t < kJoinDelayVariants; ++t) examined[t] = 0;
    for (uint64_t j = i; j < count && (j == i || keys[j] == keys[i]); ++j) {  // runs are short
      const uint64_t r = Lift(residues_k, residue_count, k, indices[j]);
      const uint32_t r_mod9 = static_cast<uint32_t>(r % 9);
      for (int t = 0; t < kJoinDelayVariants; ++t) {
        if (!DelayExamines(pow2_mod9, t, r_mod9)) continue;
        if (examined[t]++ == 0) first[t] = r;
      }
    }
    for (int t = 0; t < kJoinDelayVariants; ++t) {
      if (examined[t] == 0) continue;
      if (examined[t] > 255) *failed = 1;
      maps[map_bytes * t + (first[t] >> 1)] = static_cast<uint8_t>(examined[t]);
    }
  }
}

// A lift that a variant does not examine is a run of its own there: 1 (never read).
__global__ void MarkUnexaminedLiftsKernel(const uint32_t* residues_k, uint32_t residue_count, int k, int L,
                                          uint64_t count, uint8_t* maps, uint64_t map_bytes) {
  const uint32_t pow2_mod9 = Pow2Mod9(L);
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += uint64_t{gridDim.x} * blockDim.x) {
    const uint64_t r = Lift(residues_k, residue_count, k, i);
    const uint32_t r_mod9 = static_cast<uint32_t>(r % 9);
    for (int t = 0; t < kJoinDelayVariants; ++t) {
      if (!DelayExamines(pow2_mod9, t, r_mod9)) maps[map_bytes * t + (r >> 1)] = 1;
    }
  }
}

}  // namespace

cudaError_t LaunchJoinKeys(const uint32_t* residues_k, uint32_t residue_count, int k, int L, uint64_t count,
                           uint64_t* keys, uint32_t* indices, int* failed, cudaStream_t stream) {
  if (residue_count == 0 || k < 1 || L > kMaxJoinBits || L < k || count > (uint64_t{1} << 32)) {
    return cudaErrorInvalidValue;
  }
  (void)cudaGetLastError();
  JoinKeysKernel<<<GridFor(count), 256, 0, stream>>>(residues_k, residue_count, k, L, count, keys, indices, failed);
  return cudaGetLastError();
}

cudaError_t SortJoinKeys(void* temp, size_t* temp_bytes, uint64_t* keys[2], uint32_t* indices[2], uint64_t count,
                         int* sorted, cudaStream_t stream) {
  if (count > static_cast<uint64_t>(INT32_MAX)) return cudaErrorInvalidValue;
  cub::DoubleBuffer<uint64_t> key_buffers(keys[0], keys[1]);
  cub::DoubleBuffer<uint32_t> residue_buffers(indices[0], indices[1]);
  // LSD radix sort: stable, so equal keys keep their residues in ascending order.
  const cudaError_t e = cub::DeviceRadixSort::SortPairs(temp, *temp_bytes, key_buffers, residue_buffers,
                                                        static_cast<int>(count), 0, kJoinKeyBits, stream);
  *sorted = key_buffers.selector;
  return e;
}

cudaError_t LaunchMarkJoinRuns(const uint32_t* residues_k, uint32_t residue_count, int k, const uint64_t* keys,
                               const uint32_t* indices, uint64_t count, uint8_t* map, int* failed,
                               cudaStream_t stream) {
  if (residue_count == 0) return cudaErrorInvalidValue;
  (void)cudaGetLastError();
  MarkJoinRunsKernel<<<GridFor(count), 256, 0, stream>>>(residues_k, residue_count, k, keys, indices, count, map,
                                                         failed);
  return cudaGetLastError();
}

cudaError_t LaunchMarkDelayJoinRuns(const uint32_t* residues_k, uint32_t residue_count, int k, int L,
                                    const uint64_t* keys, const uint32_t* indices, uint64_t count, uint8_t* maps,
                                    uint64_t map_bytes, int* failed, cudaStream_t stream) {
  if (residue_count == 0 || L > kMaxJoinBits || L < k) return cudaErrorInvalidValue;
  (void)cudaGetLastError();
  MarkDelayJoinRunsKernel<<<GridFor(count), 256, 0, stream>>>(residues_k, residue_count, k, L, keys, indices, count,
                                                              maps, map_bytes, failed);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  MarkUnexaminedLiftsKernel<<<GridFor(count), 256, 0, stream>>>(residues_k, residue_count, k, L, count, maps,
                                                                map_bytes);
  return cudaGetLastError();
}

}  // namespace collatz::gpu
