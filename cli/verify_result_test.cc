#include "cli/verify_result.h"

#include <gtest/gtest.h>

namespace collatz::cli {
namespace {

TEST(VerifyUnitResult, AcceptsExactEntries) {
  UnitSpec spec;
  spec.begin = 20;
  spec.end = 100;
  UnitResult r;
  r.ladder = {{25, 23}, {27, 111}};
  r.class_minima = {{27, 111}};
  EXPECT_TRUE(VerifyUnitResult(spec, r).ok());
}

TEST(VerifyUnitResult, RejectsAWrongDelay) {
  UnitSpec spec;
  spec.begin = 20;
  spec.end = 100;
  UnitResult r;
  r.ladder = {{27, 112}};
  Status st = VerifyUnitResult(spec, r);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("exact delay is 111"), std::string::npos) << st.ToString();
  r.ladder.clear();
  r.class_minima = {{25, 24}};
  EXPECT_FALSE(VerifyUnitResult(spec, r).ok());
}

TEST(VerifyUnitResult, RejectsEntriesOutsideTheUnitOrOutOfOrder) {
  UnitSpec spec;
  spec.begin = 26;
  spec.end = 100;
  UnitResult r;
  r.ladder = {{25, 23}};
  EXPECT_FALSE(VerifyUnitResult(spec, r).ok());
  spec.begin = 1;
  r.ladder = {{27, 111}, {25, 23}};
  EXPECT_FALSE(VerifyUnitResult(spec, r).ok());
}

}  // namespace
}  // namespace collatz::cli
