// The join map: the k-bit join sieve (SPEC 2, rule 3) carried to level L <= 34 for the
// numbers a delay+class unit examines, so that residue groups (GroupKernel) whose numbers
// all have a smaller twin of the same delay skip their walks.
//
// Among the odd lifts r < 2^L of the k-bit sieve's odd survivors, those with equal (p, c)
// after L T-steps form runs: for h >= 1 the numbers 2^L h + r of one run reach the same
// value after the same delay, so they share one delay. map[r >> 1] is the run's length for
// its smallest member and 0 for the others. In a unit whose bounds are multiples of 2^L
// (and at least 2^L) every run's members are examined together, all odd lifts of
// survivors: a member with 0 is neither a ladder entry nor a class minimum (its smaller
// twin has its delay), and its audit tallies are its smallest twin's, which the engine
// counts with the run's length as weight. Results stay identical to the CPU engine's.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "gpu/cuda_memory.h"

namespace collatz {

// The map on the host (the CPU twin of BuildJoinMap, for tests): 2^(L - 1) entries.
// odd_residues: the k-bit sieve's odd survivors, ascending; k < L <= 34 (the device build: k <= 32 and at most 2^31 lifts).
Status BuildJoinMapOnHost(const std::vector<uint64_t>& odd_residues, int k, int L, std::vector<uint8_t>* map);

// The same map in device memory (a radix sort of every lift's (p, c) on the current
// device). Unavailable when the device lacks the memory for the sort (about 24 bytes a
// lift, 14 GB for k = 19 and L = 32) or a run is longer than 255: the engine then runs
// without it.
Status BuildJoinMap(const std::vector<uint64_t>& odd_residues, int k, int L, DeviceArray<uint8_t>* map);

}  // namespace collatz
