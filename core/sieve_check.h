// The cheap check of a sieve built outside Sieve::Generate (on a GPU: gpu/sieve_builder.h),
// made every time one is built, before its tables are used (issue 41, item 5): a builder
// that dropped survivors would make every engine skip numbers silently, and the results
// verified with the same tables would not show it.
//
//  - its fingerprint (survivor count, hashes of the residues and of their (p, c)) equals
//    the compiled-in one of Sieve::Generate for that width (core/sieve_fingerprint.h);
//  - at `samples` random odd residues, membership equals the join-sieve definition
//    (core/sieve_membership.h), and `samples` random members of its list are survivors
//    with the (p, c) of their first k T-steps.
// The second is independent of both builders and of the table: it catches a wrong table as
// well as a wrong sieve. Both together, on the H200 host: 0.22 s at 28 bits, 0.76 s at 30.
#pragma once

#include <cstdint>
#include <string>

#include "core/sieve.h"
#include "core/status.h"

namespace collatz {

constexpr int kBuiltSieveSamples = 2048;

// The spot checks alone: Corruption naming the residue and the seed at the first mismatch.
Status CheckSieveSamples(const Sieve& sieve, int samples, uint64_t seed);

// Both checks; `what` names the sieve in the message ("GPU-built sieve"). seed 0: a random
// one. Corruption on a mismatch; FailedPrecondition for a width without a compiled-in
// fingerprint (wider than kMaxFingerprintBits).
Status CheckBuiltSieve(const Sieve& sieve, const std::string& what, uint64_t seed = 0,
                       int samples = kBuiltSieveSamples);

}  // namespace collatz
