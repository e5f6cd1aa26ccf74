// Whether one residue survives the k-bit join sieve, from the definition alone (SPEC 2, rule
// 3), without building the sieve: an independent oracle for spot checks of a sieve built
// elsewhere (core/sieve_check.h), and for tests.
//
// Residue i < 2^k reaches (p, c) after k T-steps: c = T^k(i), p its odd steps. It survives
// when no smaller residue j reaches the same (p, c). Those j are the preimages of c under
// T^k whose trajectories take p odd steps: the paths of k steps back from c (x <- 2x always,
// x <- (2x - 1)/3 when x = 2 mod 3), about (4/3)^k of them, fewer with p fixed: about 10^4
// at k = 30, well under a millisecond.
#pragma once

#include <cstdint>

namespace collatz {

// Whether residue i (odd or even, below 2^bits; bits 1..40) is the smallest residue of its
// (p, c) group at level `bits`. The sieve (core/sieve.h) holds the odd ones.
bool IsJoinSurvivor(uint64_t i, int bits);

// Whether odd residue i is in the k-bit sieve: odd and IsJoinSurvivor.
inline bool IsSieveResidue(uint64_t i, int bits) { return (i & 1) != 0 && IsJoinSurvivor(i, bits); }

}  // namespace collatz
