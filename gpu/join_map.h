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

// Delay-only units examine only the N = 2^L H + r whose N mod 9 the mod-9 rule keeps
// (core/sieve.h), which depends on H mod 9 (a residue group's members share it: their H grow
// by the cycle's modulus, 9). Their map has a variant for each H mod 9 whose runs are made
// of the examined lifts alone: a member with 0 has a smaller examined twin of its delay, and
// the run's smallest examined member stands for the run's examined members in the tallies.
// Entries of unexamined lifts are 1 and never read. A delay-only cycle (9 2^k numbers) does
// not divide 2^L, so a join unit's partial cycles at its ends are walked as positions beside
// the groups; they follow the map as well (weight 0 or the run's length), so that a run split
// between the two sides counts once.

// The map on the host (the CPU twin of BuildJoinMap, for tests): 2^(L - 1) entries.
// odd_residues: the k-bit sieve's odd survivors, ascending; k < L <= 34 (the device build: k <= 32 and at most 2^31 lifts).
// h_mod9: -1 every odd lift (delay+class units), else the delay-only variant for H = h_mod9 (mod 9).
Status BuildJoinMapOnHost(const std::vector<uint64_t>& odd_residues, int k, int L, std::vector<uint8_t>* map,
                          int h_mod9 = -1);

// The same map in device memory (a radix sort of every lift's (p, c) on the current
// device). Unavailable when the device lacks the memory for the sort (about 24 bytes a
// lift, 14 GB for k = 19 and L = 32) or a run is longer than 255: the engine then runs
// without it.
Status BuildJoinMap(const std::vector<uint64_t>& odd_residues, int k, int L, DeviceArray<uint8_t>* map);

// The delay-only maps: gpu::kJoinDelayVariants maps of 2^(L - 1) bytes one after the other,
// variant t for H = t (mod 9). Unavailable as above (9 maps: 18 GiB at L = 32).
Status BuildDelayJoinMaps(const std::vector<uint64_t>& odd_residues, int k, int L, DeviceArray<uint8_t>* maps);

}  // namespace collatz
