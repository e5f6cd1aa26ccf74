#include "core/sieve_check.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <random>

#include "core/sieve_fingerprint.h"
#include "core/sieve_membership.h"
#include "core/step_table.h"

namespace collatz {
namespace {

std::string Hex(uint64_t x) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, x);
  return buf;
}

}  // namespace

Status CheckSieveSamples(const Sieve& sieve, int samples, uint64_t seed) {
  const int k = sieve.bits();
  const std::vector<uint64_t>& residues = sieve.residues();
  const uint64_t mask = k >= 64 ? ~uint64_t{0} : (uint64_t{1} << k) - 1;
  const std::string where = " (" + std::to_string(k) + "-bit sieve, sample seed " + std::to_string(seed) + ")";
  std::mt19937_64 rng(seed);
  for (int s = 0; s < samples; ++s) {
    // Any odd residue: in the list exactly when it survives.
    const uint64_t r = (rng() & mask) | 1;
    const bool listed = std::binary_search(residues.begin(), residues.end(), r);
    if (listed != IsSieveResidue(r, k)) {
      return Status::Corruption("residue " + std::to_string(r) + (listed ? " is listed but does not survive"
                                                                          : " survives but is not listed") + where);
    }
    // A listed one: a survivor, with its (p, c).
    if (residues.empty()) continue;
    const size_t j = static_cast<size_t>(rng() % residues.size());
    const uint64_t m = residues[j];
    uint32_t p = 0;
    uint64_t c = 0;
    TStepsOfResidue(m, k, &p, &c);
    if (!IsSieveResidue(m, k)) {
      return Status::Corruption("listed residue " + std::to_string(m) + " (index " + std::to_string(j) +
                                ") does not survive" + where);
    }
    if (sieve.p()[j] != p || sieve.c()[j] != c) {
      return Status::Corruption("listed residue " + std::to_string(m) + " carries (p, c) = (" +
                                std::to_string(sieve.p()[j]) + ", " + std::to_string(sieve.c()[j]) + "), its steps give (" +
                                std::to_string(p) + ", " + std::to_string(c) + ")" + where);
    }
  }
  return Status::Ok();
}

Status CheckBuiltSieve(const Sieve& sieve, const std::string& what, uint64_t seed, int samples) {
  const int k = sieve.bits();
  const std::string name = what + " of " + std::to_string(k) + " bits";
  const SieveFingerprint* want = KnownSieveFingerprint(k);
  if (want == nullptr) {
    return Status::FailedPrecondition(name + ": no compiled-in fingerprint of Sieve::Generate for this width (1.." +
                                      std::to_string(kMaxFingerprintBits) + "): it cannot be checked");
  }
  const SieveFingerprint got = FingerprintOf(sieve);
  if (got.survivors != want->survivors) {
    return Status::Corruption(name + ": " + std::to_string(got.survivors) + " survivors, Sieve::Generate's has " +
                              std::to_string(want->survivors) + " (compiled-in fingerprint)");
  }
  if (got.residues_hash != want->residues_hash) {
    return Status::Corruption(name + ": its residues hash to " + Hex(got.residues_hash) + ", Sieve::Generate's to " +
                              Hex(want->residues_hash) + " (same count, other residues)");
  }
  if (got.steps_hash != want->steps_hash) {
    return Status::Corruption(name + ": the (p, c) of its residues hash to " + Hex(got.steps_hash) +
                              ", Sieve::Generate's to " + Hex(want->steps_hash));
  }
  if (seed == 0) seed = std::random_device{}() | (uint64_t{std::random_device{}()} << 32);
  if (Status st = CheckSieveSamples(sieve, samples, seed); !st.ok()) return Status::Corruption(name + ": " + st.message());
  return Status::Ok();
}

}  // namespace collatz
