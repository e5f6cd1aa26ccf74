// Kernels that build the join map (gpu/join_map.h) on the device, and their launch
// wrappers (join_map_kernels.cu). Plain types only: shared by nvcc and the host compiler.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace collatz::gpu {

// Bits of the key (p << kJoinKeyCBits | c) of a residue's (p, c) after L <= 32 T-steps:
// c = T^L(r) < 3^p <= 3^32 < 2^51.
constexpr int kJoinKeyCBits = 51;
constexpr int kJoinKeyBits = kJoinKeyCBits + 6;

// keys[i], residues[i] for i < count = residue_count << (L - k): residue r = residues_k[j] +
// (b << k) with b = i / residue_count, j = i % residue_count (ascending in r when residues_k
// is), key its (p, c) after L T-steps. Sets *failed if a key would not fit (never, for L <= 32).
cudaError_t LaunchJoinKeys(const uint32_t* residues_k, uint32_t residue_count, int k, int L, uint64_t count,
                           uint64_t* keys, uint32_t* residues, int* failed, cudaStream_t stream);

// Sorts (keys[0], residues[0]) by key, stably (the residues of one key stay ascending),
// using keys[1] and residues[1] as the second buffers (CUB's double buffers: no third
// copy); *sorted says which buffer holds the result. temp == nullptr: *temp_bytes gets the
// scratch size needed.
cudaError_t SortJoinKeys(void* temp, size_t* temp_bytes, uint64_t* keys[2], uint32_t* residues[2], uint64_t count,
                         int* sorted, cudaStream_t stream);

// map[r >> 1] = the length of the run (<= 255; else *failed = 1) for the first residue r of
// every run of equal keys in sorted (keys, residues); the map must be zero before.
cudaError_t LaunchMarkJoinRuns(const uint64_t* keys, const uint32_t* residues, uint64_t count, uint8_t* map,
                               int* failed, cudaStream_t stream);

}  // namespace collatz::gpu
