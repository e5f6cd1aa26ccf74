// The k-bit join sieve (SPEC section 2, rule 3) and the sieve-offset tables (rule 4).
//
// Write N = 2^k h + i. After k T-steps N is 3^p h + c with (p, c) depending on i alone.
// Only the smallest residue of each (p, c) group can hold a record of either kind; the
// rule is valid for h >= 1, so the block [1, 2^k) is always computed without it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/status.h"
#include "core/u128.h"

namespace collatz {

constexpr int kMinSieveBits = 1;
constexpr int kMaxSieveBits = 40;  // c < 3^k must fit in 64 bits

// The odd surviving residues of a k-bit sieve with the first k T-steps of each.
class Sieve {
 public:
  // Builds level by level from the survivors of the level below (the lifting property):
  // memory is proportional to the survivors, not to 2^k (about 34 bytes an odd survivor at
  // the peak: the last level is made bucket by bucket). Each level's buckets (one per p) are
  // lifted and sorted on `threads` threads (0: all), the largest cut into ranges of c; any
  // count gives the same sieve.
  static Status Generate(int bits, std::shared_ptr<const Sieve>* out, int threads = 0);

  // From a list of odd residues (e.g. a sieve file); computes (p, c) for each.
  // Residues must be odd, ascending, unique and below 2^bits.
  static Status FromResidues(int bits, std::vector<uint64_t> residues, std::shared_ptr<const Sieve>* out);

  // From odd residues and their (p, c) as a builder computed them (gpu/sieve_builder.h);
  // checks the residues as FromResidues does, and p <= bits, but takes c as given.
  static Status FromSteps(int bits, std::vector<uint64_t> residues, std::vector<uint64_t> c, std::vector<uint8_t> p,
                          std::shared_ptr<const Sieve>* out);

  int bits() const { return bits_; }
  size_t size() const { return residues_.size(); }
  const std::vector<uint64_t>& residues() const { return residues_; }
  // After k T-steps N = 2^k h + residues()[j] is pow3(j) * h + c()[j], having spent k + p(j) steps.
  const std::vector<uint64_t>& c() const { return c_; }
  const std::vector<uint8_t>& p() const { return p_; }
  // How many residues are r (mod 9), r = 0 .. 8: the sizes of the delay-only offset variants
  // in closed form (CountExamined), so that tables without an OffsetTable count a unit without
  // a pass over every residue.
  const std::array<uint64_t, 9>& residues_by_mod9() const { return residues_by_mod9_; }

 private:
  Sieve() = default;
  void CountResiduesByMod9();
  int bits_ = 0;
  std::array<uint64_t, 9> residues_by_mod9_{};
  std::vector<uint64_t> residues_;
  std::vector<uint64_t> c_;
  std::vector<uint8_t> p_;
};

// Survivor counts for a direct (non-incremental) computation, the test oracle:
// all residues i < 2^k that are the smallest of their (p, c) group.
std::vector<uint64_t> DirectSieveSurvivors(int bits);

// Search kinds (SPEC section 5).
enum class Kinds { kDelay, kDelayAndClass };

// Whether odd N may be skipped in a delay-only search: N = 2 (mod 3) (rule 2, i.e. 5 mod 6)
// or N = 4 (mod 9) (its predecessor (8N-5)/9 < N reaches it in 5 steps). n_mod9 = N mod 9.
constexpr bool DelayOnlySkipsMod9(unsigned n_mod9) { return n_mod9 == 2 || n_mod9 == 5 || n_mod9 == 8 || n_mod9 == 4; }
// Rule 2 alone (the three mod-3 variants).
constexpr bool DelayOnlySkipsMod3(unsigned n_mod3) { return n_mod3 == 2; }

// Sieve-offset table variants: for a base 2^k h, the odd survivors i such that
// N = 2^k h + i is computed. In delay-only searches (N mod m) depends on (h mod m), so
// there are m variants (m = 3: rule 2; m = 9: rule 2 and the 4 mod 9 rule); in
// delay+class searches there is one (all odd survivors). Each variant holds indices into
// the sieve, ascending, so residues ascend too.
class OffsetTable {
 public:
  // modulus: 1 (no mod rule), 3 or 9.
  OffsetTable(std::shared_ptr<const Sieve> sieve, unsigned modulus);

  unsigned modulus() const { return modulus_; }
  const Sieve& sieve() const { return *sieve_; }
  // Variant for h mod modulus.
  const std::vector<uint32_t>& Variant(unsigned h_mod) const { return variants_[h_mod]; }

 private:
  std::shared_ptr<const Sieve> sieve_;
  unsigned modulus_;
  std::vector<std::vector<uint32_t>> variants_;
};

// Whether odd N is computed in a search of `kinds` with mod rule `modulus` (1, 3, 9),
// ignoring the join sieve. Used for the first block and by tests.
bool OddNumberIsComputed(unsigned n_mod9, Kinds kinds, unsigned modulus);

// The engines' rule for which N a search of `kinds` with `sieve` examines (SPEC 2): N odd,
// kept by the kind's mod-9 rule, and in the first block [1, 2^k) or of a residue mod 2^k
// that the sieve keeps. SearchRangeSimple and the result verifier use it.
bool IsExamined(const Sieve& sieve, Kinds kinds, u128 n);

// How many N of [begin, end) IsExamined keeps: the `candidates` every engine reports for a
// unit of `kinds` searched with `sieve`, so a result searched with another sieve (or one
// that skipped numbers) shows. Whole blocks in closed form (delay-only: the sizes of the
// mod-9 variants from Sieve::residues_by_mod9, so tables without an OffsetTable count as
// fast), partial blocks by binary search and, delay-only, a pass over their residues.
u128 CountExamined(const Sieve& sieve, Kinds kinds, u128 begin, u128 end);

}  // namespace collatz
