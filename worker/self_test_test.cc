#include "worker/self_test.h"

#include <gtest/gtest.h>

#include "core/cpu_engine.h"

namespace collatz::worker {
namespace {

std::shared_ptr<const SearchTables> Tables() {
  static std::shared_ptr<const SearchTables> tables = [] {
    std::shared_ptr<const SearchTables> t;
    EXPECT_TRUE(SearchTables::Build(kDefaultSieveBits, kDefaultStepBits, kDefaultTailBits, &t).ok());
    return t;
  }();
  return tables;
}

// An engine that is right except for one thing, as a broken GPU might be.
class FaultyEngine : public SearchEngine {
 public:
  FaultyEngine(std::function<void(const UnitSpec&, UnitResult*)> fault) : inner_(Tables(), {}), fault_(fault) {}
  Status Search(const UnitSpec& spec, UnitResult* result, const ProgressFn& progress,
                const std::atomic<bool>* cancel) override {
    Status st = inner_.Search(spec, result, progress, cancel);
    fault_(spec, result);
    return st;
  }
  std::string Describe() const override { return "faulty"; }

 private:
  CpuEngine inner_;
  std::function<void(const UnitSpec&, UnitResult*)> fault_;
};

TEST(SelfTestTest, CpuEnginePasses) {
  CpuEngine engine(Tables(), {});
  std::string summary;
  Status st = RunSelfTest(engine, *Tables(), &summary);
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_NE(summary.find("1980976057694848447"), std::string::npos) << summary;
}

TEST(SelfTestTest, RefusesAnEngineThatDropsTheWideRecord) {
  FaultyEngine engine([](const UnitSpec& spec, UnitResult* r) {
    if (spec.begin > Pow2(60)) r->ladder.clear();  // the 128-bit trajectory went wrong
  });
  std::string summary;
  Status st = RunSelfTest(engine, *Tables(), &summary);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("1980976057694848447"), std::string::npos) << st.ToString();
}

TEST(SelfTestTest, RefusesAnEngineThatMiscountsTheFirstBlock) {
  FaultyEngine engine([](const UnitSpec& spec, UnitResult* r) {
    if (spec.begin == 1) r->tally_sum += 1;
  });
  std::string summary;
  EXPECT_FALSE(RunSelfTest(engine, *Tables(), &summary).ok());
}

TEST(SelfTestTest, RefusesAnEngineThatFails) {
  FaultyEngine engine([](const UnitSpec&, UnitResult*) {});
  class Failing : public SearchEngine {
    Status Search(const UnitSpec&, UnitResult*, const ProgressFn&, const std::atomic<bool>*) override {
      return Status::Internal("device lost");
    }
    std::string Describe() const override { return "failing"; }
  } failing;
  std::string summary;
  Status st = RunSelfTest(failing, *Tables(), &summary);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("device lost"), std::string::npos);
}

// The production-kind case: an engine that stops walks early in a frontier unit (its ladder
// near the published record comes back empty, as a lost stop-table carry would make it) is
// refused, and so is one that reports a ladder entry with a wrong delay.
TEST(SelfTestTest, RefusesAnEngineThatLosesTheRecordOfTheProductionWindow) {
  FaultyEngine drops([](const UnitSpec& spec, UnitResult* r) {
    if (spec.kinds == Kinds::kDelay && spec.begin > Pow2(60)) r->ladder.clear();
  });
  std::string summary;
  Status st = RunSelfTest(drops, *Tables(), &summary, Pow2(24));
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("misses the published record"), std::string::npos) << st.ToString();
  FaultyEngine wrong_delay([](const UnitSpec& spec, UnitResult* r) {
    if (spec.kinds == Kinds::kDelay && spec.begin > Pow2(60)) r->ladder.push_back({spec.end - 1, 5000});
  });
  st = RunSelfTest(wrong_delay, *Tables(), &summary, Pow2(24));
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("does not check"), std::string::npos) << st.ToString();
  CpuEngine engine(Tables(), {});
  st = RunSelfTest(engine, *Tables(), &summary, Pow2(24));
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_NE(summary.find("on its ladder"), std::string::npos) << summary;
}

}  // namespace
}  // namespace collatz::worker
