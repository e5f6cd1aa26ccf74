// Whole-output agreement with ../shared/data: [1, 2^28) searched in units, as collatzctl
// run does, merged, equals the exhaustive reference records exactly.
#include <gtest/gtest.h>

#include "core/cpu_engine.h"
#include "core/test_support.h"

namespace collatz {
namespace {

using testing_support::SharedData;
using testing_support::SpecFromKnowledge;

MergedRecords SearchPrefix(u128 end, Kinds kinds, u128 unit) {
  std::shared_ptr<const SearchTables> tables;
  EXPECT_TRUE(SearchTables::Build(19, 19, 20, &tables).ok());
  CpuEngine engine(tables, CpuEngineOptions{});
  std::vector<FinishedUnit> done;
  for (u128 a = 1; a < end; a = std::min(end, (a / unit + 1) * unit)) {
    const u128 b = std::min(end, (a / unit + 1) * unit);
    UnitSpec spec = SpecFromKnowledge(MergeRecords({}, done), a, b, kinds);
    FinishedUnit u{a, b, kinds, {}};
    EXPECT_TRUE(engine.Search(spec, &u.result).ok());
    done.push_back(u);
  }
  return MergeRecords({}, done);
}

TEST(ReferenceDataTest, DelayAndClassRecordsBelow2p28) {
  std::vector<Record> delay_ref, class_ref;
  ASSERT_TRUE(ReadRecordsCsv(SharedData("delay_records_below_2p28.csv"), RecordCsvKind::kDelay, &delay_ref).ok());
  ASSERT_TRUE(ReadRecordsCsv(SharedData("class_records_below_2p28.csv"), RecordCsvKind::kClass, &class_ref).ok());
  const MergedRecords m = SearchPrefix(Pow2(28), Kinds::kDelayAndClass, Pow2(24));
  EXPECT_EQ(m.delay_final, delay_ref);
  EXPECT_EQ(m.class_final, class_ref);
  EXPECT_EQ(FormatRecordsCsv(m.delay_final, RecordCsvKind::kDelay).size(), FormatRecordsCsv(delay_ref, RecordCsvKind::kDelay).size());
}

TEST(ReferenceDataTest, DelayOnlySearchFindsTheSameDelayRecords) {
  std::vector<Record> delay_ref;
  ASSERT_TRUE(ReadRecordsCsv(SharedData("delay_records_below_2p28.csv"), RecordCsvKind::kDelay, &delay_ref).ok());
  const MergedRecords m = SearchPrefix(Pow2(28), Kinds::kDelay, Pow2(25));
  EXPECT_EQ(m.delay_final, delay_ref);
  EXPECT_TRUE(m.class_final.empty());
}

}  // namespace
}  // namespace collatz
