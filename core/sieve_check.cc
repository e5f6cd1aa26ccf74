#include "core/sieve_check.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <random>

#include "core/parallel_tasks.h"
#include "core/sieve_fingerprint.h"
#include "core/sieve_membership.h"
#include "core/step_table.h"
#include "core/thread_count.h"

namespace collatz {
namespace {

std::string Hex(uint64_t x) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, x);
  return buf;
}

// Sample s: odd residue `r` is listed exactly when it survives, and the listed residue at
// index `j` is a survivor with the (p, c) of its first k T-steps.
Status CheckOneSample(const Sieve& sieve, uint64_t r, size_t j) {
  const int k = sieve.bits();
  const std::vector<uint64_t>& residues = sieve.residues();
  const bool listed = std::binary_search(residues.begin(), residues.end(), r);
  if (listed != IsSieveResidue(r, k)) {
    return Status::Corruption("residue " + std::to_string(r) +
                              (listed ? " is listed but does not survive" : " survives but is not listed"));
  }
  if (residues.empty()) return Status::Ok();
  const uint64_t m = residues[j];
  uint32_t p = 0;
  uint64_t c = 0;
  TStepsOfResidue(m, k, &p, &c);
  if (sieve.p()[j] != p || sieve.c()[j] != c) {
    return Status::Corruption("listed residue " + std::to_string(m) + " carries (p, c) = (" +
                              std::to_string(sieve.p()[j]) + ", " + std::to_string(sieve.c()[j]) + "), its steps give (" +
                              std::to_string(p) + ", " + std::to_string(c) + ")");
  }
  if (!IsSieveResidue(m, k)) {
    return Status::Corruption("listed residue " + std::to_string(m) + " (index " + std::to_string(j) + ") does not survive");
  }
  return Status::Ok();
}

}  // namespace

Status CheckSieveSamples(const Sieve& sieve, int samples, uint64_t seed) {
  const int k = sieve.bits();
  const size_t n = samples > 0 ? static_cast<size_t>(samples) : 0;
  const uint64_t mask = k >= 64 ? ~uint64_t{0} : (uint64_t{1} << k) - 1;
  // The samples are drawn first, in one sequence, so that a seed names the same ones on any
  // number of threads; then checked on all cores (a survivor's group search is the slow part:
  // about 0.3 ms at 30 bits).
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> odd(n);
  std::vector<size_t> listed(n);
  const size_t size = sieve.size();
  for (size_t s = 0; s < n; ++s) {
    odd[s] = (rng() & mask) | 1;
    const uint64_t pick = rng();
    listed[s] = size > 0 ? static_cast<size_t>(pick % size) : 0;
  }
  const int chunks = n >= 256 ? std::max(1, std::min(ResolveThreadCount(0), static_cast<int>(n / 128))) : 1;
  std::vector<std::pair<size_t, Status>> first_bad(static_cast<size_t>(chunks), {n, Status::Ok()});
  ParallelChunks(n, chunks, [&](int chunk, size_t begin, size_t end) {
    for (size_t s = begin; s < end; ++s) {
      Status st = CheckOneSample(sieve, odd[s], listed[s]);
      if (!st.ok()) {
        first_bad[static_cast<size_t>(chunk)] = {s, std::move(st)};
        return;
      }
    }
  });
  for (const auto& [s, st] : first_bad) {  // chunks in order: the first failing sample
    if (s < n) {
      return Status::Corruption(st.message() + " (" + std::to_string(k) + "-bit sieve, sample " + std::to_string(s) +
                                " of seed " + std::to_string(seed) + ")");
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
