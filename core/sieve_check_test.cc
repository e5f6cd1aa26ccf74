// The check of a sieve built elsewhere (core/sieve_check.h): Sieve::Generate's sieves pass;
// a dropped or added survivor, a moved residue or a wrong (p, c) is refused, by the
// fingerprint and by the spot checks on their own; a width without a fingerprint is refused.
#include "core/sieve_check.h"

#include <gtest/gtest.h>

#include "core/sieve_membership.h"
#include "core/step_table.h"
#include "core/test_support.h"

namespace collatz {
namespace {

using testing_support::GeneratedSieve;

struct Parts {
  std::vector<uint64_t> r, c;
  std::vector<uint8_t> p;
  explicit Parts(const Sieve& s) : r(s.residues()), c(s.c()), p(s.p()) {}
  std::shared_ptr<const Sieve> Make(int bits) const {
    std::shared_ptr<const Sieve> s;
    EXPECT_TRUE(Sieve::FromSteps(bits, r, c, p, &s).ok());
    return s;
  }
  void Erase(size_t j) {
    r.erase(r.begin() + j);
    c.erase(c.begin() + j);
    p.erase(p.begin() + j);
  }
};

void ExpectCorrupt(const Status& st, const std::string& part) {
  EXPECT_EQ(st.code(), Status::Code::kCorruption) << st.ToString();
  EXPECT_NE(st.message().find(part), std::string::npos) << st.message();
}

TEST(SieveCheck, GeneratedSievesPass) {
  for (int k : {1, 2, 9, 19, 22}) {
    const Status st = CheckBuiltSieve(*GeneratedSieve(k), "test sieve");
    EXPECT_TRUE(st.ok()) << st.ToString();
    EXPECT_TRUE(CheckSieveSamples(*GeneratedSieve(k), 4096, 7 + k).ok()) << k;
  }
}

TEST(SieveCheck, TheFingerprintCatchesEveryKindOfEdit) {
  const auto sieve = GeneratedSieve(18);
  {
    Parts parts(*sieve);
    parts.Erase(1234);
    ExpectCorrupt(CheckBuiltSieve(*parts.Make(18), "GPU-built sieve", 1),
                  "GPU-built sieve of 18 bits: " + std::to_string(sieve->size() - 1) + " survivors, Sieve::Generate's has " +
                      std::to_string(sieve->size()));
  }
  {
    Parts parts(*sieve);
    size_t j = 50;
    while (parts.r[j + 1] == parts.r[j] + 2) ++j;
    parts.r[j] += 2;
    ExpectCorrupt(CheckBuiltSieve(*parts.Make(18), "s", 1), "its residues hash to");
  }
  {
    Parts parts(*sieve);
    parts.c[77] += 1;
    ExpectCorrupt(CheckBuiltSieve(*parts.Make(18), "s", 1), "the (p, c) of its residues hash to");
  }
}

// Independent of the table: the samples alone see a sieve that lacks survivors, holds a
// non-survivor or carries a wrong (p, c) (narrow, so that 2048 samples reach every residue).
TEST(SieveCheck, TheSamplesCatchWhatTheyMeet) {
  const auto sieve = GeneratedSieve(8);
  {
    Parts parts(*sieve);
    const uint64_t dropped = parts.r[10];
    parts.Erase(10);
    ExpectCorrupt(CheckSieveSamples(*parts.Make(8), 2048, 3), "residue " + std::to_string(dropped) +
                                                                  " survives but is not listed");
  }
  {
    Parts parts(*sieve);
    uint64_t extra = 1;
    while (IsSieveResidue(extra, 8)) extra += 2;
    const auto at = std::lower_bound(parts.r.begin(), parts.r.end(), extra) - parts.r.begin();
    uint32_t p = 0;
    uint64_t c = 0;
    TStepsOfResidue(extra, 8, &p, &c);  // its own (p, c): only its membership is wrong
    parts.r.insert(parts.r.begin() + at, extra);
    parts.c.insert(parts.c.begin() + at, c);
    parts.p.insert(parts.p.begin() + at, static_cast<uint8_t>(p));
    ExpectCorrupt(CheckSieveSamples(*parts.Make(8), 2048, 3), "does not survive");
  }
  {
    Parts parts(*sieve);
    parts.c[5] += 3;
    ExpectCorrupt(CheckSieveSamples(*parts.Make(8), 2048, 3), "listed residue " + std::to_string(parts.r[5]) +
                                                                  " carries (p, c)");
  }
  // At 24 bits a sieve missing a tenth of its survivors fails the random samples too.
  const auto wide = GeneratedSieve(24);
  Parts parts(*wide);
  Parts thinned = parts;
  thinned.r.clear();
  thinned.c.clear();
  thinned.p.clear();
  for (size_t j = 0; j < parts.r.size(); ++j) {
    if (j % 10 == 3) continue;
    thinned.r.push_back(parts.r[j]);
    thinned.c.push_back(parts.c[j]);
    thinned.p.push_back(parts.p[j]);
  }
  ExpectCorrupt(CheckSieveSamples(*thinned.Make(24), kBuiltSieveSamples, 11), "survives but is not listed");
}

TEST(SieveCheck, AWidthWithoutAFingerprintIsRefused) {
  std::shared_ptr<const Sieve> s;
  ASSERT_TRUE(Sieve::FromResidues(31, {27, 31}, &s).ok());
  const Status st = CheckBuiltSieve(*s, "GPU-built sieve");
  EXPECT_EQ(st.code(), Status::Code::kFailedPrecondition) << st.ToString();
  EXPECT_NE(st.message().find("no compiled-in fingerprint"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace collatz
