// A sieve's fingerprint: its survivor count and hashes of its residues and of their (p, c),
// so that a sieve built elsewhere (on a GPU: gpu/sieve_builder.h) can be compared with
// Sieve::Generate's of the same width without generating that (20 s at 28 bits, 75 s at 30
// on one core). The fingerprints of Sieve::Generate for every width a GPU builds are
// compiled in (core/sieve_fingerprints.inc, written by sieve_fingerprint_gen from
// Sieve::Generate itself; core/sieve_fingerprint_test.cc recomputes the widths that are
// cheap on a CPU, the GPU sieve test the rest through the GPU's sieves).
#pragma once

#include <cstdint>
#include <string>

#include "core/sieve.h"

namespace collatz {

struct SieveFingerprint {
  int bits = 0;
  uint64_t survivors = 0;
  uint64_t residues_hash = 0;  // XXH64 (seed 0) of the residues, ascending, as 64-bit words
  uint64_t steps_hash = 0;     // XXH64 of the c words, seeded with the XXH64 of the p bytes
  bool operator==(const SieveFingerprint& o) const = default;
};

SieveFingerprint FingerprintOf(const Sieve& sieve);

// The widest sieve with a compiled-in fingerprint.
constexpr int kMaxFingerprintBits = 30;

// Sieve::Generate's fingerprint of `bits` as compiled in; nullptr outside 1..kMaxFingerprintBits.
const SieveFingerprint* KnownSieveFingerprint(int bits);

// One row of core/sieve_fingerprints.inc: "  {bits, survivors, 0x..., 0x...},".
std::string FingerprintRow(const SieveFingerprint& f);

}  // namespace collatz
