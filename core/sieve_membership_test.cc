// The one-residue oracle (core/sieve_membership.h) against the direct definition over every
// residue up to 16 bits, and against Sieve::Generate at random residues of 20 and 24 bits.
#include "core/sieve_membership.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/sieve.h"

namespace collatz {
namespace {

TEST(SieveMembership, EqualsTheDirectDefinitionAtEveryResidue) {
  for (int k = 1; k <= 16; ++k) {
    const std::vector<uint64_t> direct = DirectSieveSurvivors(k);  // ascending, odd and even
    size_t survivors = 0, wrong = 0;
    for (uint64_t i = 0; i < (uint64_t{1} << k); ++i) {
      const bool want = std::binary_search(direct.begin(), direct.end(), i);
      survivors += IsJoinSurvivor(i, k) ? 1 : 0;
      if (IsJoinSurvivor(i, k) != want) ++wrong;
      if (IsSieveResidue(i, k) != (want && (i & 1) != 0)) ++wrong;
    }
    EXPECT_EQ(wrong, 0u) << "k " << k;
    EXPECT_EQ(survivors, direct.size()) << "k " << k;
  }
}

TEST(SieveMembership, EqualsGenerateAtRandomResidues) {
  for (int k : {20, 24}) {
    std::shared_ptr<const Sieve> sieve;
    ASSERT_TRUE(Sieve::Generate(k, &sieve).ok());
    const std::vector<uint64_t>& r = sieve->residues();
    std::mt19937_64 rng(k);
    size_t in = 0;
    for (int s = 0; s < 20000; ++s) {
      const uint64_t i = rng() & ((uint64_t{1} << k) - 1);
      const bool listed = std::binary_search(r.begin(), r.end(), i);
      in += listed ? 1 : 0;
      ASSERT_EQ(IsSieveResidue(i, k), listed) << "k " << k << " residue " << i;
    }
    EXPECT_GT(in, 500u);  // both answers were tried
    for (int s = 0; s < 2000; ++s) ASSERT_TRUE(IsSieveResidue(r[rng() % r.size()], k));
  }
}

// At 3 bits 8h + 4 and 8h + 5 both reach 3h + 2 (p = 1, c = 2): 4 survives, 5 does not.
TEST(SieveMembership, KnownCases) {
  EXPECT_TRUE(IsSieveResidue(27, 8));
  EXPECT_FALSE(IsSieveResidue(26, 8));  // even
  EXPECT_FALSE(IsJoinSurvivor(5, 3));
  EXPECT_TRUE(IsJoinSurvivor(4, 3));
}

}  // namespace
}  // namespace collatz
