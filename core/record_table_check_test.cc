// The free check of a record table (core/record_table_check.h): the records of [1, 2^20)
// computed here by brute force equal the published ones; a dropped, an added or a changed
// record, or an unsorted table, is refused with a message naming it; records at or above
// the smaller of the two bounds are not compared.
#include "core/record_table_check.h"

#include <gtest/gtest.h>

#include "core/published_points.h"

namespace collatz {
namespace {

// The delay records of [1, bound) by the definition (64-bit trajectories suffice there).
std::vector<Record> ComputeRecords(uint64_t bound) {
  std::vector<Record> out;
  int64_t best = -1;
  for (uint64_t n = 1; n < bound; ++n) {
    uint32_t d = 0;
    for (uint64_t x = n; x != 1; ++d) x = (x & 1) ? 3 * x + 1 : x / 2;
    if (static_cast<int64_t>(d) > best) {
      best = d;
      out.push_back({n, d});
    }
  }
  return out;
}

// Computed once up to 2^20, the smaller bounds cut from it.
std::vector<Record> BruteForceRecords(uint64_t bound) {
  static const std::vector<Record> all = ComputeRecords(uint64_t{1} << 20);
  std::vector<Record> out;
  for (const Record& r : all) {
    if (r.n < bound) out.push_back(r);
  }
  return out;
}

void ExpectRefused(const std::vector<Record>& table, u128 below, const std::string& part) {
  const Status st = CheckRecordsAgainstPublished(table, below, "test table");
  EXPECT_EQ(st.code(), Status::Code::kFailedPrecondition) << st.ToString();
  EXPECT_NE(st.message().find("test table: its delay records below "), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(part), std::string::npos) << st.message();
}

TEST(RecordTableCheck, TheRecordsOfTheDefinitionPass) {
  const std::vector<Record> table = BruteForceRecords(uint64_t{1} << 20);
  ASSERT_GT(table.size(), 40u);
  EXPECT_EQ(table[5], (Record{9, 19}));
  const Status st = CheckRecordsAgainstPublished(table, Pow2(20), "brute force");
  EXPECT_TRUE(st.ok()) << st.ToString();
  // A smaller bound compares less; an empty table is complete below 1.
  EXPECT_TRUE(CheckRecordsAgainstPublished(BruteForceRecords(1000), 1000, "t").ok());
  EXPECT_TRUE(CheckRecordsAgainstPublished({}, 1, "t").ok());
}

TEST(RecordTableCheck, ADroppedRecordIsNamed) {
  std::vector<Record> table = BruteForceRecords(uint64_t{1} << 20);
  const Record dropped = table[20];
  table.erase(table.begin() + 20);
  ExpectRefused(table, Pow2(20), "misses the published record " + ToDecimal(dropped.n) + " (delay " +
                                     std::to_string(dropped.delay) + ")");
  // The last one below the bound as well.
  std::vector<Record> last = BruteForceRecords(uint64_t{1} << 20);
  const Record top = last.back();
  last.pop_back();
  ExpectRefused(last, Pow2(20), "misses the published record " + ToDecimal(top.n));
}

TEST(RecordTableCheck, AnAddedOrChangedRecordIsNamed) {
  const std::vector<Record> good = BruteForceRecords(uint64_t{1} << 20);
  std::vector<Record> added = good;
  // 28 lies between the records 27 and 54 (delay 112 is not its delay, nor a record).
  auto at = std::find_if(added.begin(), added.end(), [](const Record& r) { return r.n > 27; });
  added.insert(at, Record{28, 112});
  ExpectRefused(added, Pow2(20), "it holds 28 (delay 112), which is not a published record");
  // An extra record above the last published one below the bound.
  std::vector<Record> extra = good;
  extra.push_back({(uint64_t{1} << 20) - 1, 1000});
  ExpectRefused(extra, Pow2(20), "which is not a published record");
  std::vector<Record> changed = good;
  changed[10].delay += 1;
  ExpectRefused(changed, Pow2(20), "the published record " + ToDecimal(good[10].n) + " (delay " +
                                       std::to_string(good[10].delay) + ")");
  std::vector<Record> unsorted = good;
  std::swap(unsorted[3], unsorted[4]);
  ExpectRefused(unsorted, Pow2(20), "not ascending");
}

// Only below min(table bound, published bound): a table complete below 2^10 may hold
// anything above; a list complete below 2^10 says nothing about a table's records above.
TEST(RecordTableCheck, ComparesBelowTheSmallerBound) {
  std::vector<Record> table = BruteForceRecords(uint64_t{1} << 10);
  std::vector<Record> beyond = table;
  beyond.push_back({5000, 7});  // at or above the table's bound: not compared
  EXPECT_TRUE(CheckRecordsAgainstPublished(beyond, Pow2(10), "t").ok());
  const std::vector<Record> all = BruteForceRecords(uint64_t{1} << 16);
  const std::vector<Record> published_small = table;  // a list complete below 2^10 only
  EXPECT_TRUE(CheckRecordsAgainstPublished(all, Pow2(16), published_small, Pow2(10), "t").ok());
  std::vector<Record> missing = all;
  missing.erase(missing.begin() + 5);
  EXPECT_FALSE(CheckRecordsAgainstPublished(missing, Pow2(16), published_small, Pow2(10), "t").ok());
  // The compiled-in list's bound (about 2^64.6) caps a table that claims more.
  std::vector<Record> huge = PublishedDelayPoints();
  const u128 published_bound = huge.back().n + 1;
  EXPECT_TRUE(CheckRecordsAgainstPublished(huge, Pow2(70), "t").ok());
  huge.push_back({published_bound + 5, 3000});
  EXPECT_TRUE(CheckRecordsAgainstPublished(huge, Pow2(70), "t").ok());
  huge.erase(huge.end() - 3);
  ExpectRefused(huge, Pow2(70), "misses the published record");
}

}  // namespace
}  // namespace collatz
