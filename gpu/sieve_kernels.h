// Kernels that build the k-bit join sieve (core/sieve.h) and a search's sieve entries on the
// device, and their launch wrappers (sieve_kernels.cu). Plain types only: shared by nvcc and
// the host compiler. The host side is gpu/sieve_builder.h; the CPU twin is Sieve::Generate.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "gpu/search_kernels.h"

namespace collatz::gpu {

// The widest sieve built on the device: one sort of all 2^k residues, at most 2^31 - 1 items.
constexpr int kMaxDeviceSieveBits = 30;

// Bits of the key of a residue's (p, c) after k T-steps: p << SieveKeyCBits(k) | c, with
// c = T^k(i) < 3^p <= 3^k.
int SieveKeyCBits(int k);
int SieveKeyBits(int k);

// The candidates of a k-bit sieve: every residue below 2^k (base == nullptr), or the lifts
// of the survivors (odd and even) of a level m < k: t < count = base_count 2^(k - m) stands
// for r = base[t mod base_count] + (t / base_count) 2^m, ascending in t (base ascends). A
// residue that is not the smallest of its (p, c) group at level m has a smaller twin at every
// level above, and so do its lifts, while the smallest of a level-k group is always a lift of
// a level-m survivor: the candidates' runs keep the same first members.
struct SieveCandidates {
  const uint64_t* base = nullptr;
  uint32_t base_count = 0;
  int m = 0;
  uint64_t count = 0;
};

// keys[t] = the key at level k of candidate t, values[t] = t.
cudaError_t LaunchSieveKeys(const SieveCandidates& candidates, int k, uint64_t* keys, uint32_t* values,
                            cudaStream_t stream);

// Sorts (keys[0], values[0]) by key, stably (a key's candidates stay ascending), with
// keys[1] and values[1] as CUB's second buffers; *sorted says which holds the result.
// temp == nullptr: *temp_bytes gets the scratch size.
cudaError_t SortSieveKeys(void* temp, size_t* temp_bytes, uint64_t* keys[2], uint32_t* values[2], uint64_t count,
                          int k, int* sorted, cudaStream_t stream);

// flags[t] = 1 for the candidates t that come first in their run of equal keys (the smallest
// of their (p, c) group; with odd_only, only the odd ones), 0 for the rest.
cudaError_t LaunchMarkSieveSurvivors(const SieveCandidates& candidates, const uint64_t* keys, const uint32_t* values,
                                     bool odd_only, uint8_t* flags, cudaStream_t stream);

// survivors = the flagged candidates' residues, ascending; *count (device) their number.
cudaError_t SelectSieveSurvivors(void* temp, size_t* temp_bytes, const SieveCandidates& candidates,
                                 const uint8_t* flags, uint64_t* survivors, uint32_t* count, cudaStream_t stream);

// c[j], p[j] of survivors[j] after k T-steps.
cudaError_t LaunchSieveSteps(const uint64_t* survivors, uint32_t count, int k, uint64_t* c, uint8_t* p,
                             cudaStream_t stream);

// A search's sieve entries of one variant (gpu/search_kernels.h, SieveEntry): the survivors j
// (residue, c, p after k T-steps) whose residue mod `modulus` has its bit in `kept_classes`,
// ascending, each as {offset = (variant << k) + residue, c, 3^p, k + p}. selected: scratch of
// `count` indices; *selected_count (device) gets how many the variant has.
cudaError_t SelectVariant(void* temp, size_t* temp_bytes, const uint64_t* residues, uint32_t count, unsigned modulus,
                          uint32_t kept_classes, uint32_t* selected, uint32_t* selected_count, cudaStream_t stream);
cudaError_t LaunchFillSieveEntries(const uint64_t* residues, const uint64_t* c, const uint8_t* p,
                                   const uint32_t* selected, uint32_t selected_count, int k, unsigned variant,
                                   SieveEntry* entries, cudaStream_t stream);

}  // namespace collatz::gpu
