// Kernels that build the join map (gpu/join_map.h) on the device, and their launch
// wrappers (join_map_kernels.cu). Plain types only: shared by nvcc and the host compiler.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace collatz::gpu {

// The deepest level: residues below 2^34, values below 2^34 (3/2)^34 < 2^54 in 64 bits.
constexpr int kMaxJoinBits = 34;
// The key of a residue's (p, c) after L T-steps: p << kJoinKeyCBits | c (c = T^L(r) < 3^p
// <= 3^34 < 2^54; p <= 34 in 6 bits).
constexpr int kJoinKeyCBits = 54;
constexpr int kJoinKeyBits = kJoinKeyCBits + 6;

// Delay-only units examine N = 2^L H + r only when N mod 9 is not 2, 4, 5 or 8
// (core/sieve.h, DelayOnlySkipsMod9), which depends on H mod 9: their maps come in
// kJoinDelayVariants variants, one for each H mod 9.
constexpr int kJoinDelayVariants = 9;
// The host twin's key of a lift that variant's numbers never examine (BuildJoinMapOnHost):
// unique (no p reaches 63), so such a lift forms a run of its own and no examined lift joins it.
constexpr uint64_t kJoinUnexaminedKey = uint64_t{63} << kJoinKeyCBits;

// The lifts: index i < count = residue_count << (L - k) stands for r = residues_k[i mod
// residue_count] + (i / residue_count) 2^k, ascending in i when residues_k is. keys[i] =
// its key, indices[i] = i. Sets *failed if a key would not fit (never, for L <= 34).
cudaError_t LaunchJoinKeys(const uint32_t* residues_k, uint32_t residue_count, int k, int L, uint64_t count,
                           uint64_t* keys, uint32_t* indices, int* failed, cudaStream_t stream);

// Sorts (keys[0], indices[0]) by key, stably (the lifts of one key stay ascending), using
// keys[1] and indices[1] as the second buffers (CUB's double buffers: no third copy);
// *sorted says which buffer holds the result. temp == nullptr: *temp_bytes gets the
// scratch size needed. At most 2^31 - 1 lifts.
cudaError_t SortJoinKeys(void* temp, size_t* temp_bytes, uint64_t* keys[2], uint32_t* indices[2], uint64_t count,
                         int* sorted, cudaStream_t stream);

// map[r >> 1] = the length of the run (<= 255; else *failed = 1) for the first lift r of
// every run of equal keys in the sorted (keys, indices); the map must be zero before.
cudaError_t LaunchMarkJoinRuns(const uint32_t* residues_k, uint32_t residue_count, int k, const uint64_t* keys,
                               const uint32_t* indices, uint64_t count, uint8_t* map, int* failed,
                               cudaStream_t stream);

// The kJoinDelayVariants delay-only maps (map_bytes each, one after the other, zero before)
// from one stable sort of every lift's key (LaunchJoinKeys): in variant t,
// the first lift of a run that variant examines gets the count of the run's lifts it
// examines (<= 255; else *failed = 1), and every lift it does not examine gets 1, as one
// sort of the variant's own keys would give (nine sorts took 0.5 s at k = 19, L = 32).
cudaError_t LaunchMarkDelayJoinRuns(const uint32_t* residues_k, uint32_t residue_count, int k, int L,
                                    const uint64_t* keys, const uint32_t* indices, uint64_t count, uint8_t* maps,
                                    uint64_t map_bytes, int* failed, cudaStream_t stream);

}  // namespace collatz::gpu
