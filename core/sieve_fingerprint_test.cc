// The compiled-in fingerprints (core/sieve_fingerprints.inc) against Sieve::Generate,
// recomputed here for every width up to 24 bits (about 3 s; the wider ones are checked on
// the GPU, gpu/sieve_builder_test.cc), so the table cannot drift from the generator; and a
// fingerprint changes with any edit of a sieve.
#include "core/sieve_fingerprint.h"

#include <gtest/gtest.h>

namespace collatz {
namespace {

constexpr int kCheckedOnCpuBits = 24;

TEST(SieveFingerprint, TheTableHoldsEveryWidthOnce) {
  EXPECT_EQ(KnownSieveFingerprint(0), nullptr);
  EXPECT_EQ(KnownSieveFingerprint(kMaxFingerprintBits + 1), nullptr);
  uint64_t last = 0;
  for (int k = 1; k <= kMaxFingerprintBits; ++k) {
    const SieveFingerprint* f = KnownSieveFingerprint(k);
    ASSERT_NE(f, nullptr) << k;
    EXPECT_EQ(f->bits, k);
    EXPECT_GE(f->survivors, last) << k;  // a survivor's lifts hold one at least
    last = f->survivors;
  }
  EXPECT_EQ(KnownSieveFingerprint(20)->survivors, 132429u);  // SPEC section 2
}

TEST(SieveFingerprint, TheTableEqualsGenerateUpTo24Bits) {
  for (int k = 1; k <= kCheckedOnCpuBits; ++k) {
    std::shared_ptr<const Sieve> sieve;
    ASSERT_TRUE(Sieve::Generate(k, &sieve).ok());
    const SieveFingerprint got = FingerprintOf(*sieve);
    EXPECT_EQ(FingerprintRow(got), FingerprintRow(*KnownSieveFingerprint(k)))
        << "core/sieve_fingerprints.inc is stale: regenerate it with sieve_fingerprint_gen";
  }
}

TEST(SieveFingerprint, AnyEditChangesIt) {
  std::shared_ptr<const Sieve> sieve;
  ASSERT_TRUE(Sieve::Generate(16, &sieve).ok());
  const SieveFingerprint base = FingerprintOf(*sieve);
  auto with = [&](std::vector<uint64_t> r, std::vector<uint64_t> c, std::vector<uint8_t> p) {
    std::shared_ptr<const Sieve> s;
    EXPECT_TRUE(Sieve::FromSteps(16, std::move(r), std::move(c), std::move(p), &s).ok());
    return FingerprintOf(*s);
  };
  std::vector<uint64_t> r = sieve->residues(), c = sieve->c();
  std::vector<uint8_t> p = sieve->p();
  EXPECT_EQ(with(r, c, p), base);
  // One survivor dropped.
  auto r1 = r, c1 = c;
  auto p1 = p;
  r1.erase(r1.begin() + 100);
  c1.erase(c1.begin() + 100);
  p1.erase(p1.begin() + 100);
  const SieveFingerprint dropped = with(r1, c1, p1);
  EXPECT_EQ(dropped.survivors, base.survivors - 1);
  EXPECT_NE(dropped.residues_hash, base.residues_hash);
  // One residue moved to a neighbour that is not listed (same count).
  auto r2 = r;
  size_t j = 100;
  while (r2[j + 1] == r2[j] + 2) ++j;
  r2[j] += 2;
  const SieveFingerprint moved = with(r2, c, p);
  EXPECT_EQ(moved.survivors, base.survivors);
  EXPECT_NE(moved.residues_hash, base.residues_hash);
  // One c, or one p, wrong.
  auto c3 = c;
  c3[7] ^= 1;
  EXPECT_NE(with(r, c3, p).steps_hash, base.steps_hash);
  auto p3 = p;
  p3[7] = static_cast<uint8_t>(p3[7] == 0 ? 1 : p3[7] - 1);
  EXPECT_NE(with(r, c, p3).steps_hash, base.steps_hash);
}

}  // namespace
}  // namespace collatz
