#include "core/sieve.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>

#include "core/step_table.h"
#include "core/test_support.h"
#include "core/tail_table.h"

namespace collatz {
namespace {

using testing_support::GeneratedSieve;

// SPEC section 2: all residues / odd residues that survive.
TEST(SieveTest, SurvivorCountsOfTheSpec) {
  const std::map<int, std::pair<uint64_t, uint64_t>> expected = {
      {3, {7, 3}}, {8, {127, 61}}, {12, {1535, 786}}, {16, {19275, 10146}}, {19, {130306, 69578}}, {20, {246912, 132429}}};
  for (const auto& [k, counts] : expected) {
    if (k <= 20) {
      const auto direct = DirectSieveSurvivors(k);
      EXPECT_EQ(direct.size(), counts.first) << "k=" << k;
      EXPECT_EQ(std::count_if(direct.begin(), direct.end(), [](uint64_t r) { return r & 1; }),
                static_cast<long>(counts.second)) << "k=" << k;
    }
    EXPECT_EQ(GeneratedSieve(k)->size(), counts.second) << "k=" << k;
  }
}

TEST(SieveTest, LiftingEqualsDirectDefinition) {
  for (int k = 1; k <= 18; ++k) {
    auto direct = DirectSieveSurvivors(k);
    std::vector<uint64_t> odd;
    for (uint64_t r : direct) if (r & 1) odd.push_back(r);
    auto s = GeneratedSieve(k);
    EXPECT_EQ(s->residues(), odd) << "k=" << k;
    for (size_t j = 0; j < s->size(); ++j) {
      uint32_t p;
      uint64_t c;
      TStepsOfResidue(s->residues()[j], k, &p, &c);
      ASSERT_EQ(s->p()[j], p);
      ASSERT_EQ(s->c()[j], c);
    }
  }
}

// The levels are lifted and sorted on several threads (a bucket larger than an equal share
// cut into ranges of c): any thread count gives the one sieve.
TEST(SieveTest, ThreadCountsGiveTheSameSieve) {
  for (int k : {12, 21}) {
    std::shared_ptr<const Sieve> one, many;
    ASSERT_TRUE(Sieve::Generate(k, &one, 1).ok());
    for (int threads : {2, 3, 8, 64}) {
      ASSERT_TRUE(Sieve::Generate(k, &many, threads).ok());
      EXPECT_EQ(many->residues(), one->residues()) << "k=" << k << " threads " << threads;
      EXPECT_EQ(many->c(), one->c()) << "k=" << k << " threads " << threads;
      EXPECT_EQ(many->p(), one->p()) << "k=" << k << " threads " << threads;
    }
  }
  // And the direct definition, on 8 threads.
  std::shared_ptr<const Sieve> s;
  ASSERT_TRUE(Sieve::Generate(17, &s, 8).ok());
  std::vector<uint64_t> odd;
  for (uint64_t r : DirectSieveSurvivors(17)) {
    if (r & 1) odd.push_back(r);
  }
  EXPECT_EQ(s->residues(), odd);
}

TEST(SieveTest, KeepsTheSpecFractions) {
  auto s = GeneratedSieve(19);
  const double odd_fraction = static_cast<double>(s->size()) / (1 << 19);
  EXPECT_NEAR(odd_fraction, 0.133, 0.0005);
  // With rule 2 as well: 8.85% (SPEC 2).
  OffsetTable mod3(s, 3);
  double kept = 0;
  for (unsigned h = 0; h < 3; ++h) kept += mod3.Variant(h).size();
  EXPECT_NEAR(kept / 3 / (1 << 19), 0.0885, 0.0005);
}

TEST(SieveTest, FromResiduesRoundTripAndRejectsBadInput) {
  auto s = GeneratedSieve(12);
  std::shared_ptr<const Sieve> back;
  ASSERT_TRUE(Sieve::FromResidues(12, s->residues(), &back).ok());
  EXPECT_EQ(back->residues(), s->residues());
  EXPECT_EQ(back->c(), s->c());
  EXPECT_EQ(back->p(), s->p());
  EXPECT_FALSE(Sieve::FromResidues(12, {1, 4}, &back).ok());
  EXPECT_FALSE(Sieve::FromResidues(12, {3, 1}, &back).ok());
  EXPECT_FALSE(Sieve::FromResidues(12, {1, 5000}, &back).ok());
  EXPECT_FALSE(Sieve::FromResidues(0, {1}, &back).ok());
  EXPECT_FALSE(Sieve::Generate(41, &back).ok());
}

TEST(SieveTest, OffsetVariantsHoldExactlyTheComputedNumbers) {
  auto s = GeneratedSieve(10);
  for (unsigned modulus : {1u, 3u, 9u}) {
    OffsetTable table(s, modulus);
    for (uint64_t h = 1; h < 30; ++h) {
      std::vector<uint64_t> expected, got;
      for (uint64_t r : s->residues()) {
        const uint64_t n = (h << 10) + r;
        if (OddNumberIsComputed(static_cast<unsigned>(n % 9), Kinds::kDelay, modulus)) expected.push_back(n);
      }
      for (uint32_t j : table.Variant(static_cast<unsigned>(h % modulus))) got.push_back((h << 10) + s->residues()[j]);
      EXPECT_EQ(got, expected) << "modulus " << modulus << " h " << h;
    }
  }
}

// Every skip rule keeps every record of [1, 2^24): odd records survive the sieve (when
// >= 2^k) and delay records pass the mod rules; even records are doublings of records.
// CountExamined is the count of IsExamined over the range, for ranges inside the first
// block, across it, with partial blocks at either end and many whole blocks (every h mod 9);
// the whole blocks' variant sizes equal the offset table's.
TEST(SieveTest, CountExaminedCountsWhatIsExamined) {
  for (int bits : {3, 6, 8}) {
    std::shared_ptr<const Sieve> sieve;
    ASSERT_TRUE(Sieve::Generate(bits, &sieve).ok());
    const u128 block = Pow2(static_cast<unsigned>(bits));
    const std::vector<std::pair<u128, u128>> ranges = {
        {1, 2},         {1, block},         {3, block - 1},      {1, 5 * block + 7},        {block, 2 * block},
        {block + 5, 2 * block - 3}, {2 * block + 9, 31 * block + 1}, {7 * block, 27 * block}, {40 * block + 3, 40 * block + 4},
        {5, 5}};
    for (Kinds kinds : {Kinds::kDelay, Kinds::kDelayAndClass}) {
      for (const auto& [a, b] : ranges) {
        uint64_t want = 0;
        for (u128 n = a; n < b; ++n) want += IsExamined(*sieve, kinds, n) ? 1 : 0;
        EXPECT_EQ(CountExamined(*sieve, kinds, a, b), static_cast<u128>(want)) << bits << " [" << ToDecimal(a) << ", " << ToDecimal(b) << ")";
      }
    }
  }
  // Far up, whole blocks in closed form: 9 consecutive blocks hold every variant once.
  std::shared_ptr<const Sieve> sieve;
  ASSERT_TRUE(Sieve::Generate(12, &sieve).ok());
  const OffsetTable offsets(sieve, 9);
  const u128 at = Pow2(100) * 9;
  size_t nine = 0;
  for (unsigned m = 0; m < 9; ++m) nine += offsets.Variant(m).size();
  EXPECT_EQ(CountExamined(*sieve, Kinds::kDelay, at, at + 9 * Pow2(12)), static_cast<u128>(nine));
  EXPECT_EQ(CountExamined(*sieve, Kinds::kDelayAndClass, at, at + Pow2(40)), Pow2(28) * sieve->size());
}

// Every way of making a sieve counts its residues by class mod 9 (CountExamined's closed form
// for tables without an offset table, e.g. a coordinator's wide ones).
TEST(SieveTest, ResiduesByMod9CountEveryResidueOnce) {
  std::shared_ptr<const Sieve> generated, from_residues, from_steps;
  ASSERT_TRUE(Sieve::Generate(14, &generated).ok());
  ASSERT_TRUE(Sieve::FromResidues(14, generated->residues(), &from_residues).ok());
  ASSERT_TRUE(Sieve::FromSteps(14, generated->residues(), generated->c(), generated->p(), &from_steps).ok());
  std::array<uint64_t, 9> want{};
  for (uint64_t r : generated->residues()) ++want[r % 9];
  uint64_t sum = 0;
  for (uint64_t n : want) sum += n;
  ASSERT_EQ(sum, generated->size());
  for (const auto& sieve : {generated, from_residues, from_steps}) EXPECT_EQ(sieve->residues_by_mod9(), want);
  // The delay-only variants' sizes follow from them: variant m keeps r when 2^14 m + r is kept.
  const OffsetTable offsets(generated, 9);
  for (unsigned m = 0; m < 9; ++m) {
    uint64_t size = 0;
    for (unsigned r = 0; r < 9; ++r) size += OddNumberIsComputed((Pow2(14) % 9 * m + r) % 9, Kinds::kDelay, 9) ? want[r] : 0;
    EXPECT_EQ(offsets.Variant(m).size(), size) << m;
  }
}

TEST(SieveTest, SkipRulesKeepEveryRecordBelow2p24) {
  TailTable exact(24);  // exact delays of every n < 2^24
  std::vector<uint64_t> delay_records;
  std::map<uint32_t, uint64_t> class_records;
  uint32_t best = 0;
  for (uint64_t n = 1; n < exact.limit(); ++n) {
    const uint32_t d = exact[n];
    if (n == 1 || d > best) {
      delay_records.push_back(n);
      best = d;
    }
    class_records.emplace(d, n);  // keeps the first (smallest) n of each delay
  }
  for (int k : {8, 12, 16, 19}) {
    auto s = GeneratedSieve(k);
    auto survives = [&](uint64_t n) {
      return n < (uint64_t{1} << k) || std::binary_search(s->residues().begin(), s->residues().end(), n & ((uint64_t{1} << k) - 1));
    };
    for (uint64_t n : delay_records) {
      if (n % 2 == 0) {
        EXPECT_TRUE(std::binary_search(delay_records.begin(), delay_records.end(), n / 2)) << n;
        continue;
      }
      EXPECT_TRUE(survives(n)) << "delay record " << n << " k=" << k;
      EXPECT_TRUE(OddNumberIsComputed(static_cast<unsigned>(n % 9), Kinds::kDelay, 9)) << "delay record " << n;
    }
    for (const auto& [d, n] : class_records) {
      if (n % 2 == 0) {
        EXPECT_EQ(class_records.at(d - 1), n / 2) << "class " << d;
        continue;
      }
      EXPECT_TRUE(survives(n)) << "class record " << n << " k=" << k;
    }
  }
  EXPECT_GT(delay_records.size(), 50u);
  EXPECT_GT(class_records.size(), 500u);
}

}  // namespace
}  // namespace collatz
