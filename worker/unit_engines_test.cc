// UnitEngines: the startup engine for its width (and for units that name none), other
// widths built once, self-tested with the worker's own startup self-test, and refused for
// good when they cannot be built or fail it.
#include "worker/unit_engines.h"

#include <gtest/gtest.h>

#include "core/cpu_engine.h"
#include "worker/self_test.h"

namespace collatz::worker {
namespace {

std::shared_ptr<const SearchTables> Tables(int bits) {
  std::shared_ptr<const SearchTables> t;
  EXPECT_TRUE(SearchTables::Build(bits, 12, 16, &t).ok());
  return t;
}

TEST(UnitEnginesTest, ANewWidthPassesTheStartupSelfTestOnceAndIsKept) {
  const std::shared_ptr<const SearchTables> startup_tables = Tables(12);
  CpuEngine startup(startup_tables, CpuEngineOptions{});
  int builds = 0, self_tests = 0;
  UnitEngines engines(
      "cpu", 12, &startup,
      [&](int bits, std::unique_ptr<SearchEngine>* engine, std::shared_ptr<const SearchTables>* t) {
        ++builds;
        std::shared_ptr<const Sieve> sieve;
        Status st = Sieve::Generate(bits, &sieve);
        if (st.ok()) st = SearchTables::FromSieve(sieve, startup_tables->delay, t);
        if (st.ok()) engine->reset(new CpuEngine(*t, CpuEngineOptions{}));
        return st;
      },
      [&](SearchEngine& engine, const SearchTables& t, std::string* summary) {
        ++self_tests;
        return RunSelfTest(engine, t, summary, Pow2(20));  // the startup test, a smaller window
      });
  SearchEngine* e = nullptr;
  ASSERT_TRUE(engines.EngineFor(12, &e).ok());
  EXPECT_EQ(e, &startup);
  ASSERT_TRUE(engines.EngineFor(0, &e).ok());  // a unit from a server before Unit.sieve_bits
  EXPECT_EQ(e, &startup);
  EXPECT_EQ(builds, 0);
  Status st = engines.EngineFor(14, &e);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_NE(e, &startup);
  EXPECT_NE(e->Describe().find("14-bit sieve"), std::string::npos) << e->Describe();
  SearchEngine* again = nullptr;
  ASSERT_TRUE(engines.EngineFor(14, &again).ok());
  EXPECT_EQ(again, e);
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(self_tests, 1);
}

TEST(UnitEnginesTest, AWidthThatCannotBeBuiltOrFailsItsSelfTestIsRefusedForGood) {
  const std::shared_ptr<const SearchTables> tables = Tables(12);
  CpuEngine startup(tables, CpuEngineOptions{});
  int builds = 0;
  UnitEngines engines(
      "gpu0", 12, &startup,
      [&](int bits, std::unique_ptr<SearchEngine>* engine, std::shared_ptr<const SearchTables>* t) {
        ++builds;
        if (bits == 20) return Status::Internal("out of device memory");
        *t = Tables(bits);
        engine->reset(new CpuEngine(*t, CpuEngineOptions{}));
        return Status::Ok();
      },
      [](SearchEngine&, const SearchTables& t, std::string*) {
        return t.sieve->bits() == 13 ? Status::Internal("the wide record is missing") : Status::Ok();
      });
  SearchEngine* e = nullptr;
  for (int round = 0; round < 2; ++round) {
    Status st = engines.EngineFor(13, &e);
    EXPECT_EQ(st.code(), Status::Code::kFailedPrecondition);
    EXPECT_NE(st.message().find("13-bit sieve: self-test FAILED"), std::string::npos) << st.ToString();
    st = engines.EngineFor(20, &e);
    EXPECT_EQ(st.code(), Status::Code::kFailedPrecondition);
    EXPECT_NE(st.message().find("out of device memory"), std::string::npos) << st.ToString();
    st = engines.EngineFor(31, &e);
    EXPECT_NE(st.message().find("1 to 30 bits"), std::string::npos) << st.ToString();
  }
  EXPECT_EQ(builds, 2);  // once each: refusals are kept
  ASSERT_TRUE(engines.EngineFor(14, &e).ok());
  ASSERT_TRUE(engines.EngineFor(12, &e).ok());
  EXPECT_EQ(e, &startup);
}

}  // namespace
}  // namespace collatz::worker
