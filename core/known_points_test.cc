// Known points (core/known_points.h): exact points pass, beside complete imports too; an
// empty list, n = 0, a wrong delay, too many rows and a point that proves a stored import
// incomplete are refused with a message naming the fault.
#include "core/known_points.h"

#include <gtest/gtest.h>

#include "core/delay.h"
#include "core/records_csv.h"
#include "core/test_support.h"

namespace collatz {
namespace {

using testing_support::SharedData;

TrustedImport ReferenceBelow(u128 bound) {
  TrustedImport imp;
  imp.complete_below = bound;
  EXPECT_TRUE(ReadRecordsCsv(SharedData("delay_records_below_2p28.csv"), RecordCsvKind::kDelay, &imp.delay_records).ok());
  EXPECT_TRUE(ReadRecordsCsv(SharedData("class_records_below_2p28.csv"), RecordCsvKind::kClass, &imp.class_records).ok());
  std::erase_if(imp.delay_records, [bound](const Record& r) { return r.n >= bound; });
  std::erase_if(imp.class_records, [bound](const Record& r) { return r.n >= bound; });
  return imp;
}

void ExpectRefused(const std::vector<Record>& points, const std::vector<TrustedImport>& imports,
                   const std::string& message_part) {
  const Status st = CheckKnownPoints(points, imports);
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find(message_part), std::string::npos) << st.message();
}

TEST(KnownPoints, ExactPointsPass) {
  const u128 big = Pow2(100) + 7;
  const std::vector<Record> points = {{27, 111}, {big, SlowDelay(big)}, {97, 118}, {27, 111}};
  EXPECT_TRUE(CheckKnownPoints(points, {}).ok());
  // Points at any height beside a complete import below 2^20, its class records among them.
  EXPECT_TRUE(CheckKnownPoints(points, {ReferenceBelow(Pow2(20))}).ok());
}

TEST(KnownPoints, BadRowsAreRefused) {
  ExpectRefused({}, {}, "empty");
  ExpectRefused({{0, 0}}, {}, "at least 1");
  ExpectRefused({{27, 111}, {28, 111}}, {}, "row 28,111 is wrong: the exact delay of 28 is 18");
  std::vector<Record> many(kMaxKnownPointsPerImport + 1, Record{1, 0});
  ExpectRefused(many, {}, "more than the");
}

TEST(KnownPoints, APointThatRefutesAStoredImportIsRefused) {
  // A delay list cut short: complete below 2^20 by its claim, but it stops at 2^16.
  TrustedImport cut = ReferenceBelow(Pow2(20));
  std::erase_if(cut.delay_records, [](const Record& r) { return r.n >= Pow2(16); });
  cut.class_records.clear();
  const TrustedImport good = ReferenceBelow(Pow2(20));
  Record beyond{0, 0};  // the first delay record in [2^16, 2^20)
  for (const Record& r : good.delay_records) {
    if (r.n >= Pow2(16)) {
      beyond = r;
      break;
    }
  }
  ASSERT_NE(beyond.n, 0u);
  EXPECT_TRUE(CheckKnownPoints({beyond}, {good}).ok());
  ExpectRefused({beyond}, {good, cut}, "contradict the trusted import complete below 1048576");
  // A member smaller than a listed class record: the import claims 97 is the smallest of 118.
  TrustedImport wrong_class = ReferenceBelow(Pow2(10));
  for (Record& r : wrong_class.class_records) {
    if (r.delay == 118) r.n = 2 * 97 + 1;  // not even a member: only the refutation matters here
  }
  ExpectRefused({{97, 118}}, {wrong_class}, "no class record");
}

}  // namespace
}  // namespace collatz
