// Device side of the sieve builder (gpu/sieve_kernels.h): keys of all residues, a CUB radix
// sort, the first of each run, a selection; and the search's entries of a sieve.
#include "gpu/sieve_kernels.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "gpu/residue_steps.cuh"

namespace collatz::gpu {
namespace {

__device__ __forceinline__ uint64_t CandidateResidue(const SieveCandidates& c, uint64_t t) {
  if (c.base == nullptr) return t;
  const uint64_t b = t / c.base_count;
  return c.base[t - b * c.base_count] + (b << c.m);
}

__global__ void SieveKeysKernel(SieveCandidates candidates, int k, int c_bits, uint64_t* keys, uint32_t* values) {
  for (uint64_t t = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; t < candidates.count;
       t += uint64_t{gridDim.x} * blockDim.x) {
    uint32_t p;
    const uint64_t c = ResidueTSteps(CandidateResidue(candidates, t), k, &p);
    keys[t] = (uint64_t{p} << c_bits) | c;
    values[t] = static_cast<uint32_t>(t);
  }
}

__global__ void MarkSurvivorsKernel(SieveCandidates candidates, const uint64_t* keys, const uint32_t* values,
                                    bool odd_only, uint8_t* flags) {
  for (uint64_t j = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; j < candidates.count;
       j += uint64_t{gridDim.x} * blockDim.x) {
    const uint32_t t = values[j];
    const bool first = j == 0 || keys[j] != keys[j - 1];
    flags[t] = first && (!odd_only || (CandidateResidue(candidates, t) & 1) != 0) ? 1 : 0;
  }
}

// The flagged candidates (t, ascending) to their residues, in place.
__global__ void CandidateResiduesKernel(SieveCandidates candidates, const uint32_t* count, uint64_t* list) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < *count; i += uint64_t{gridDim.x} * blockDim.x) {
    list[i] = CandidateResidue(candidates, list[i]);
  }
}

__global__ void SieveStepsKernel(const uint64_t* survivors, uint32_t count, int k, uint64_t* c, uint8_t* p) {
  for (uint64_t j = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; j < count;
       j += uint64_t{gridDim.x} * blockDim.x) {
    uint32_t odd;
    c[j] = ResidueTSteps(survivors[j], k, &odd);
    p[j] = static_cast<uint8_t>(odd);
  }
}

// Whether survivor j's residue class mod `modulus` is one the variant keeps.
struct KeptClass {
  const uint64_t* residues;
  unsigned modulus;
  uint32_t kept_classes;
  __device__ __forceinline__ bool operator()(uint32_t j) const {
    return ((kept_classes >> static_cast<unsigned>(residues[j] % modulus)) & 1) != 0;
  }
};

__global__ void FillEntriesKernel(const uint64_t* residues, const uint64_t* c, const uint8_t* p,
                                  const uint32_t* selected, uint32_t selected_count, int k, unsigned variant,
                                  SieveEntry* entries) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < selected_count;
       i += uint64_t{gridDim.x} * blockDim.x) {
    const uint32_t j = selected[i];
    uint64_t pow3 = 1;
    for (uint32_t s = 0; s < p[j]; ++s) pow3 *= 3;
    entries[i] = SieveEntry{(uint64_t{variant} << k) + residues[j], c[j], pow3, static_cast<uint32_t>(k) + p[j], 0};
  }
}

}  // namespace

int SieveKeyCBits(int k) {
  // 3^k < 2^(c bits): 1.585 k rounded up.
  int bits = 0;
  unsigned __int128 pow3 = 1;
  for (int i = 0; i < k; ++i) pow3 *= 3;
  while ((static_cast<unsigned __int128>(1) << bits) <= pow3) ++bits;
  return bits;
}

int SieveKeyBits(int k) {
  int p_bits = 0;
  while ((1 << p_bits) <= k) ++p_bits;
  return SieveKeyCBits(k) + p_bits;
}

static bool CandidatesFit(const SieveCandidates& c, int k) {
  return k >= 1 && k <= kMaxDeviceSieveBits && c.count > 0 && c.count <= static_cast<uint64_t>(INT32_MAX) &&
         (c.base == nullptr ? c.count == (uint64_t{1} << k)
                            : c.m >= 1 && c.m < k && c.base_count > 0 && c.count == uint64_t{c.base_count} << (k - c.m));
}

cudaError_t LaunchSieveKeys(const SieveCandidates& candidates, int k, uint64_t* keys, uint32_t* values,
                            cudaStream_t stream) {
  if (!CandidatesFit(candidates, k)) return cudaErrorInvalidValue;
  (void)cudaGetLastError();
  SieveKeysKernel<<<GridFor(candidates.count), 256, 0, stream>>>(candidates, k, SieveKeyCBits(k), keys, values);
  return cudaGetLastError();
}

cudaError_t SortSieveKeys(void* temp, size_t* temp_bytes, uint64_t* keys[2], uint32_t* values[2], uint64_t count,
                          int k, int* sorted, cudaStream_t stream) {
  if (k < 1 || k > kMaxDeviceSieveBits || count > static_cast<uint64_t>(INT32_MAX)) return cudaErrorInvalidValue;
  cub::DoubleBuffer<uint64_t> key_buffers(keys[0], keys[1]);
  cub::DoubleBuffer<uint32_t> value_buffers(values[0], values[1]);
  // LSD radix sort: stable, so the candidates of one key stay ascending.
  const cudaError_t e = cub::DeviceRadixSort::SortPairs(temp, *temp_bytes, key_buffers, value_buffers,
                                                        static_cast<int>(count), 0, SieveKeyBits(k), stream);
  *sorted = key_buffers.selector;
  return e;
}

cudaError_t LaunchMarkSieveSurvivors(const SieveCandidates& candidates, const uint64_t* keys, const uint32_t* values,
                                     bool odd_only, uint8_t* flags, cudaStream_t stream) {
  if (candidates.count == 0 || candidates.count > static_cast<uint64_t>(INT32_MAX)) return cudaErrorInvalidValue;
  (void)cudaGetLastError();
  MarkSurvivorsKernel<<<GridFor(candidates.count), 256, 0, stream>>>(candidates, keys, values, odd_only, flags);
  return cudaGetLastError();
}

cudaError_t SelectSieveSurvivors(void* temp, size_t* temp_bytes, const SieveCandidates& candidates,
                                 const uint8_t* flags, uint64_t* survivors, uint32_t* count, cudaStream_t stream) {
  if (candidates.count == 0 || candidates.count > static_cast<uint64_t>(INT32_MAX)) return cudaErrorInvalidValue;
  cudaError_t e = cub::DeviceSelect::Flagged(temp, *temp_bytes, thrust::counting_iterator<uint64_t>(0), flags,
                                             survivors, count, static_cast<int>(candidates.count), stream);
  if (e != cudaSuccess || temp == nullptr) return e;
  CandidateResiduesKernel<<<GridFor(candidates.count), 256, 0, stream>>>(candidates, count, survivors);
  return cudaGetLastError();
}

cudaError_t LaunchSieveSteps(const uint64_t* survivors, uint32_t count, int k, uint64_t* c, uint8_t* p,
                             cudaStream_t stream) {
  if (k < 1 || k > 40) return cudaErrorInvalidValue;
  (void)cudaGetLastError();
  SieveStepsKernel<<<GridFor(count), 256, 0, stream>>>(survivors, count, k, c, p);
  return cudaGetLastError();
}

cudaError_t SelectVariant(void* temp, size_t* temp_bytes, const uint64_t* residues, uint32_t count, unsigned modulus,
                          uint32_t kept_classes, uint32_t* selected, uint32_t* selected_count, cudaStream_t stream) {
  if (modulus == 0 || modulus > 32 || count > static_cast<uint32_t>(INT32_MAX)) return cudaErrorInvalidValue;
  return cub::DeviceSelect::If(temp, *temp_bytes, thrust::counting_iterator<uint32_t>(0), selected, selected_count,
                               static_cast<int>(count), KeptClass{residues, modulus, kept_classes}, stream);
}

cudaError_t LaunchFillSieveEntries(const uint64_t* residues, const uint64_t* c, const uint8_t* p,
                                   const uint32_t* selected, uint32_t selected_count, int k, unsigned variant,
                                   SieveEntry* entries, cudaStream_t stream) {
  if (k < 1 || k > 40) return cudaErrorInvalidValue;
  (void)cudaGetLastError();
  FillEntriesKernel<<<GridFor(selected_count), 256, 0, stream>>>(residues, c, p, selected, selected_count, k, variant,
                                                                 entries);
  return cudaGetLastError();
}

}  // namespace collatz::gpu
