// The rules every trusted import must pass (core/import_check.h): good lists pass; an
// unsorted list, a wrong delay, a bound at or below the last row, a missing row, a row that
// is no record, and class lists with a gap or a member that is not the smallest are refused
// with a message naming the fault.
#include "core/import_check.h"

#include <gtest/gtest.h>

#include "core/published_points.h"
#include "core/test_support.h"

namespace collatz {
namespace {

using testing_support::SharedData;

std::vector<Record> Below(const std::string& file, RecordCsvKind kind, u128 bound) {
  std::vector<Record> rows;
  EXPECT_TRUE(ReadRecordsCsv(SharedData(file), kind, &rows).ok());
  std::erase_if(rows, [bound](const Record& r) { return r.n >= bound; });
  return rows;
}

TrustedImport Reference(u128 bound, bool with_classes) {
  TrustedImport imp;
  imp.complete_below = bound;
  imp.delay_records = Below("delay_records_below_2p28.csv", RecordCsvKind::kDelay, bound);
  if (with_classes) imp.class_records = Below("class_records_below_2p28.csv", RecordCsvKind::kClass, bound);
  return imp;
}

void ExpectRefused(const TrustedImport& imp, const std::string& message_part) {
  const Status st = CheckTrustedImport(imp, PublishedDelayPoints());
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find(message_part), std::string::npos) << st.message();
}

TEST(ImportCheck, CompleteListsPass) {
  for (u128 bound : {u128{2}, u128{28}, Pow2(20), Pow2(22)}) {
    EXPECT_TRUE(CheckTrustedImport(Reference(bound, false), PublishedDelayPoints()).ok()) << ToDecimal(bound);
    EXPECT_TRUE(CheckTrustedImport(Reference(bound, true), PublishedDelayPoints()).ok()) << ToDecimal(bound);
  }
  TrustedImport published;
  published.delay_records = Below("delay_records.csv", RecordCsvKind::kDelay, kU128Max);
  published.complete_below = published.delay_records.back().n + 1;
  EXPECT_TRUE(CheckTrustedImport(published, PublishedDelayPoints()).ok());
}

TEST(ImportCheck, UnsortedRowsAreRefused) {
  TrustedImport imp = Reference(Pow2(20), true);
  std::swap(imp.delay_records[10], imp.delay_records[11]);
  ExpectRefused(imp, "delay records: not sorted by n");
  imp = Reference(Pow2(20), true);
  std::swap(imp.class_records[10], imp.class_records[11]);
  ExpectRefused(imp, "class records: not sorted by delay");
}

TEST(ImportCheck, AWrongDelayIsRefused) {
  TrustedImport imp = Reference(Pow2(20), false);
  imp.delay_records.back().delay += 1;
  ExpectRefused(imp, "is wrong: the exact delay of");
  imp = Reference(Pow2(20), true);
  imp.class_records[100].n += 2;
  ExpectRefused(imp, "class records: row");
}

TEST(ImportCheck, ABoundAtOrBelowTheLastRowIsRefused) {
  TrustedImport imp = Reference(Pow2(20), false);
  imp.complete_below = imp.delay_records.back().n;
  ExpectRefused(imp, "is not below the bound");
  imp.complete_below = 1;
  ExpectRefused(imp, "bound must be at least 2");
}

TEST(ImportCheck, MissingRowsAreRefused) {
  // A record in the middle left out: the published records (recomputed) show it.
  TrustedImport imp = Reference(Pow2(20), false);
  imp.delay_records.erase(imp.delay_records.begin() + 20);
  ExpectRefused(imp, "not complete below");
  // Even without other known numbers: 2m is a record when no record lies in (m, 2m], so a
  // list without 54 = 2 * 27 refutes itself.
  imp = Reference(Pow2(20), false);
  std::erase_if(imp.delay_records, [](const Record& r) { return r.n == 54; });
  const Status st = CheckTrustedImport(imp, {});
  EXPECT_NE(st.message().find("54 has delay 112"), std::string::npos) << st.ToString();
  // A list cut short of its bound.
  imp = Reference(Pow2(20), false);
  imp.complete_below = Pow2(22);
  ExpectRefused(imp, "not complete below 4194304");
  // The first record, 1, is missing.
  imp = Reference(Pow2(20), false);
  imp.delay_records.erase(imp.delay_records.begin());
  ExpectRefused(imp, "must start with 1,0");
}

TEST(ImportCheck, ARowThatIsNoRecordIsRefused) {
  TrustedImport imp = Reference(Pow2(20), false);
  // 26 (delay 10) between 25 (23) and 27 (111) has a smaller delay than the row before.
  auto at = std::find_if(imp.delay_records.begin(), imp.delay_records.end(), [](const Record& r) { return r.n == 27; });
  ASSERT_NE(at, imp.delay_records.end());
  imp.delay_records.insert(at, Record{26, 10});
  ExpectRefused(imp, "is no delay record");
  // 31 (delay 106) is above 25's delay but 27 < 31 has 111: a known number refutes it.
  imp = Reference(Pow2(20), false);
  at = std::find_if(imp.delay_records.begin(), imp.delay_records.end(), [](const Record& r) { return r.n == 54; });
  ASSERT_NE(at, imp.delay_records.end());
  imp.delay_records.insert(at, Record{31, 106});
  ExpectRefused(imp, "is no delay record");
}

TEST(ImportCheck, ClassListsWithAGapOrANonMinimalMemberAreRefused) {
  TrustedImport imp = Reference(Pow2(20), true);
  imp.class_records.erase(imp.class_records.begin() + 50);
  ExpectRefused(imp, "class records:");
  imp = Reference(Pow2(20), true);
  // A larger member of class 9 in place of the smallest (class 9 is 12; 13... have other delays).
  const auto c9 = std::find_if(imp.class_records.begin(), imp.class_records.end(), [](const Record& r) { return r.delay == 9; });
  ASSERT_NE(c9, imp.class_records.end());
  ASSERT_EQ(c9->n, 12u);
  c9->n = 13;  // delay(13) = 9 as well
  ExpectRefused(imp, "is no class record");
}

}  // namespace
}  // namespace collatz
