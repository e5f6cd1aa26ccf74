#include "core/result_verifier.h"

#include <gtest/gtest.h>

#include "core/delay.h"

namespace collatz {
namespace {

std::shared_ptr<const SearchTables> Tables() {
  static std::shared_ptr<const SearchTables> tables = [] {
    std::shared_ptr<const SearchTables> t;
    EXPECT_TRUE(SearchTables::Build(6, 12, 16, &t).ok());
    return t;
  }();
  return tables;
}

UnitSpec Spec(u128 begin, u128 end) {
  UnitSpec spec;
  spec.begin = begin;
  spec.end = end;
  return spec;
}

TEST(VerifyUnitResult, AcceptsExactEntries) {
  UnitResult r;
  r.ladder = {{25, 23}, {27, 111}};
  r.class_minima = {{25, 23}, {27, 111}};
  r.candidates = static_cast<uint64_t>(CountExamined(*Tables()->sieve, Kinds::kDelayAndClass, 20, 100));
  r.tally_count = r.candidates;
  EXPECT_TRUE(VerifyUnitResult(nullptr, Spec(20, 100), r).ok());
  Status st = VerifyUnitResult(*Tables(), Spec(20, 100), r);
  EXPECT_TRUE(st.ok()) << st.ToString();
}

TEST(VerifyUnitResult, RejectsAWrongDelay) {
  UnitResult r;
  r.candidates = r.tally_count = 30;
  r.ladder = {{27, 112}};
  Status st = VerifyUnitResult(nullptr, Spec(20, 100), r);
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("the exact delay is 111"), std::string::npos) << st.ToString();
  r.ladder.clear();
  r.class_minima = {{25, 24}};
  EXPECT_FALSE(VerifyUnitResult(nullptr, Spec(20, 100), r).ok());
}

TEST(VerifyUnitResult, RejectsEntriesOutsideTheUnitOrOutOfOrder) {
  UnitResult r;
  r.candidates = r.tally_count = 30;
  r.ladder = {{25, 23}};
  EXPECT_FALSE(VerifyUnitResult(nullptr, Spec(26, 100), r).ok());
  r.ladder = {{27, 111}, {25, 23}};
  EXPECT_FALSE(VerifyUnitResult(nullptr, Spec(1, 100), r).ok());
}

// The examined-number rule is core's IsExamined, the one the engines use: an N the sieve
// drops is refused even with its exact delay.
TEST(VerifyUnitResult, RefusesNumbersTheSieveDrops) {
  const Sieve& sieve = *Tables()->sieve;
  const u128 block = Pow2(static_cast<unsigned>(sieve.bits()));
  u128 dropped = 0, kept = 0;
  for (u128 n = 3 * block + 1; n < 4 * block && (dropped == 0 || kept == 0); n += 2) {
    (IsExamined(sieve, Kinds::kDelayAndClass, n) ? kept : dropped) = n;
  }
  ASSERT_NE(dropped, 0u);
  ASSERT_NE(kept, 0u);
  UnitResult r;
  r.candidates = r.tally_count = sieve.size();  // a whole block
  r.class_minima = {{dropped, SlowDelay(dropped)}};
  Status st = VerifyUnitResult(*Tables(), Spec(3 * block, 4 * block), r);
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("not a number the sieve and mod rule keep"), std::string::npos) << st.ToString();
  EXPECT_TRUE(VerifyUnitResult(nullptr, Spec(3 * block, 4 * block), r).ok());  // without the sieve
  r.class_minima = {{kept, SlowDelay(kept)}};
  EXPECT_TRUE(VerifyUnitResult(*Tables(), Spec(3 * block, 4 * block), r).ok());
}

// Candidates are a count of residues (CountExamined): a result of the right entries searched
// with another sieve width reports another count and is refused, with the sieve or without
// its offset tables alike.
TEST(VerifyUnitResult, RefusesTheCandidatesOfAnotherSieveWidth) {
  std::shared_ptr<const SearchTables> wider;
  ASSERT_TRUE(SearchTables::Build(8, 12, 16, &wider).ok());
  for (Kinds kinds : {Kinds::kDelay, Kinds::kDelayAndClass}) {
    UnitSpec spec = Spec(Pow2(12), Pow2(14));
    spec.kinds = kinds;
    spec.floor = 200;
    UnitResult narrow = SearchRangeSimple(*Tables(), spec, spec.begin, spec.end);
    const UnitResult wide = SearchRangeSimple(*wider, spec, spec.begin, spec.end);
    ASSERT_NE(narrow.candidates, wide.candidates);
    EXPECT_EQ(narrow.ladder, wide.ladder);  // the sieve is exact: the same records either way
    EXPECT_TRUE(VerifyUnitResult(*Tables(), spec, narrow).ok());
    EXPECT_TRUE(VerifyUnitResult(*wider, spec, wide).ok());
    EXPECT_TRUE(VerifyUnitResult(wider->sieve.get(), spec, wide).ok());
    Status st = VerifyUnitResult(*wider, spec, narrow);
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
    EXPECT_NE(st.message().find("another sieve width"), std::string::npos) << st.ToString();
    EXPECT_FALSE(VerifyUnitResult(*Tables(), spec, wide).ok());
    narrow.candidates -= 1;  // one number skipped
    EXPECT_FALSE(VerifyUnitResult(*Tables(), spec, narrow).ok());
  }
}

TEST(VerifyUnitResult, RefusesImpossibleCounts) {
  UnitResult r;
  r.ladder = {{27, 111}};
  r.candidates = 0;  // fewer examined numbers than entries
  EXPECT_FALSE(VerifyUnitResult(nullptr, Spec(20, 100), r).ok());
  r.candidates = 1000;  // more than the odd numbers of the unit
  EXPECT_FALSE(VerifyUnitResult(nullptr, Spec(20, 100), r).ok());
}

}  // namespace
}  // namespace collatz
