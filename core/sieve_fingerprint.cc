#include "core/sieve_fingerprint.h"

#include <xxhash.h>

#include <bit>
#include <cinttypes>
#include <cstdio>

namespace collatz {
namespace {

static_assert(std::endian::native == std::endian::little, "the fingerprints hash little-endian words");

// Written by sieve_fingerprint_gen (core/sieve_fingerprint_gen.cc) from Sieve::Generate.
constexpr SieveFingerprint kKnown[] = {
#include "core/sieve_fingerprints.inc"
};

}  // namespace

SieveFingerprint FingerprintOf(const Sieve& sieve) {
  SieveFingerprint f;
  f.bits = sieve.bits();
  f.survivors = sieve.size();
  f.residues_hash = XXH64(sieve.residues().data(), sieve.residues().size() * sizeof(uint64_t), 0);
  const uint64_t p_hash = XXH64(sieve.p().data(), sieve.p().size(), 0);
  f.steps_hash = XXH64(sieve.c().data(), sieve.c().size() * sizeof(uint64_t), p_hash);
  return f;
}

const SieveFingerprint* KnownSieveFingerprint(int bits) {
  for (const SieveFingerprint& f : kKnown) {
    if (f.bits == bits) return &f;
  }
  return nullptr;
}

std::string FingerprintRow(const SieveFingerprint& f) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "  {%d, %" PRIu64 "u, 0x%016" PRIx64 "u, 0x%016" PRIx64 "u},", f.bits, f.survivors,
                f.residues_hash, f.steps_hash);
  return buf;
}

}  // namespace collatz
