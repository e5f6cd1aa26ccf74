// Schema v6 (the dashboard): finished work per minute read back in buckets, events, and
// the records found by units (imports are not "found", doublings are found by the unit
// holding them); a v4 database migrates through v5 to v6.
#include <gtest/gtest.h>

#include <set>

#include "core/unit_search.h"
#include "storage/coordinator_store.h"
#include "storage/dashboard_reader.h"
#include "storage/old_schema_test_fixture.h"

namespace collatz {
namespace {

class DashboardStoreTest : public OldSchemaTest {
 protected:
  void Write(const std::function<Status(CoordinatorStore*)>& f) {
    auto w = store_->Begin();
    ASSERT_TRUE(w->status().ok()) << w->status().ToString();
    Status st = f(store_.get());
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_TRUE(w->Commit().ok());
    w.reset();
    ASSERT_TRUE(store_->FlushBatch().ok());
  }
  void OpenStore() {
    Status st = CoordinatorStore::Open(path_, &store_);
    ASSERT_TRUE(st.ok()) << st.ToString();
    st = DashboardReader::Open(path_, &reader_);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  std::unique_ptr<CoordinatorStore> store_;
  std::unique_ptr<DashboardReader> reader_;
};

constexpr int64_t kHour = 1'700'000'000'000 / 3'600'000 * 3'600'000;  // a whole hour, ms

TEST_F(DashboardStoreTest, ThroughputAddsUpPerMinuteAndPerBucket) {
  OpenStore();
  // Two units in minute 3 (one of them over 2^64 numbers), one in minute 20.
  Write([](CoordinatorStore* s) { return s->AddThroughput(kHour + 3 * 60'000 + 5, Pow2(64) + 7); });
  Write([](CoordinatorStore* s) { return s->AddThroughput(kHour + 3 * 60'000 + 59'999, 10); });
  Write([](CoordinatorStore* s) { return s->AddThroughput(kHour + 20 * 60'000, 1000); });

  std::vector<ThroughputBucket> minutes;
  ASSERT_TRUE(reader_->Throughput(kHour, kHour + 3'600'000, 60'000, &minutes).ok());
  ASSERT_EQ(minutes.size(), 60u);
  EXPECT_EQ(minutes[3].start_ms, kHour + 3 * 60'000);
  EXPECT_EQ(minutes[3].units, 2u);
  EXPECT_TRUE(minutes[3].numbers == Pow2(64) + 17);
  EXPECT_EQ(minutes[20].units, 1u);
  EXPECT_EQ(minutes[4].units, 0u);
  EXPECT_TRUE(minutes[4].numbers == 0);

  std::vector<ThroughputBucket> quarters;
  ASSERT_TRUE(reader_->Throughput(kHour, kHour + 3'600'000, 900'000, &quarters).ok());
  ASSERT_EQ(quarters.size(), 4u);
  EXPECT_EQ(quarters[0].units, 2u);
  EXPECT_EQ(quarters[1].units, 1u);
  EXPECT_TRUE(quarters[1].numbers == 1000);

  // Stats units count apart, in the same buckets.
  Write([](CoordinatorStore* s) { return s->AddStatsThroughput(kHour + 3 * 60'000 + 1, Pow2(30)); });
  Write([](CoordinatorStore* s) { return s->AddStatsThroughput(kHour + 3 * 60'000 + 2, Pow2(30)); });
  ASSERT_TRUE(reader_->Throughput(kHour, kHour + 3'600'000, 60'000, &minutes).ok());
  EXPECT_EQ(minutes[3].units, 2u);
  EXPECT_TRUE(minutes[3].numbers == Pow2(64) + 17);
  EXPECT_EQ(minutes[3].stats_units, 2u);
  EXPECT_TRUE(minutes[3].stats_numbers == Pow2(31));
  EXPECT_EQ(minutes[20].stats_units, 0u);

  // Buckets that are not whole, aligned minutes are refused.
  EXPECT_FALSE(reader_->Throughput(kHour, kHour + 60'000, 30'000, &quarters).ok());
  EXPECT_FALSE(reader_->Throughput(kHour + 60'000, kHour + 3'600'000, 900'000, &quarters).ok());
}

TEST_F(DashboardStoreTest, EventsNewestFirstWithRecordsFoundByUnits) {
  OpenStore();
  Write(
      [](CoordinatorStore* s) { return s->InsertEvent(kHour + 1, "worker_flagged", "worker 3 (h): audit mismatch"); });
  Write([](CoordinatorStore* s) { return s->InsertEvent(kHour + 2, "unit_quarantined", "unit 9 [5, 6): expired"); });
  // A kind the table does not know is refused.
  {
    auto w = store_->Begin();
    EXPECT_FALSE(store_->InsertEvent(kHour, "gossip", "x").ok());
  }
  ASSERT_TRUE(store_->FlushBatch().ok());
  // An import below 10 (records 1, 2, 3, 6, 7, 9), a unit [10, 30) that finds 18, 25, 27,
  // and a unit [30, 60) that holds 54 = 2 * 27, which the merge derives (no odd N of the
  // unit beats delay 111, so its ladder is empty).
  TrustedImport imp;
  imp.complete_below = 10;
  imp.delay_records = {{1, 0}, {2, 1}, {3, 7}, {6, 8}, {7, 16}, {9, 19}};
  FinishedUnit unit;
  unit.begin = 10;
  unit.end = 30;
  unit.kinds = Kinds::kDelay;
  unit.result.ladder = {{18, 20}, {25, 23}, {27, 111}};
  FinishedUnit next;
  next.begin = 30;
  next.end = 60;
  next.kinds = Kinds::kDelay;
  const MergedRecords merged = MergeRecords({imp}, {unit, next});
  ASSERT_EQ(merged.delay_final.size(), 10u);
  ASSERT_EQ(merged.delay_final.back(), (Record{54, 112}));
  ASSERT_TRUE(store_->records().StoreImport(imp, "test", nullptr).ok());
  ASSERT_TRUE(store_->records().StoreFinishedUnit(unit, {}).ok());
  ASSERT_TRUE(store_->records().StoreFinishedUnit(next, {}, &merged).ok());

  std::vector<DashboardEvent> events;
  Status st = reader_->RecentEvents(10, &events);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(events.size(), 6u);  // 4 records found by the units (now), then the two events
  std::set<std::string> details;
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(events[i].kind, "record");
    EXPECT_GT(events[i].at_ms, kHour);
    details.insert(events[i].detail);
  }
  EXPECT_EQ(details, (std::set<std::string>{"delay record n = 18, delay 20 (unit [10, 30))",
                                             "delay record n = 25, delay 23 (unit [10, 30))",
                                             "delay record n = 27, delay 111 (unit [10, 30))",
                                             "delay record n = 54, delay 112 (unit [30, 60))"}));
  EXPECT_EQ(events[4].kind, "unit_quarantined");
  EXPECT_EQ(events[4].at_ms, kHour + 2);
  EXPECT_EQ(events[5].detail, "worker 3 (h): audit mismatch");

  ASSERT_TRUE(reader_->RecentEvents(2, &events).ok());
  EXPECT_EQ(events.size(), 2u);
}

TEST_F(DashboardStoreTest, Version4DatabaseMigratesToTheLatest) {
  MakeDatabaseAtVersion(4, "");
  OpenStore();
  int version = 0;
  ASSERT_TRUE(store_->records().SchemaVersion(&version).ok());
  EXPECT_GE(version, 7);  // v5 (audits), v6 (the dashboard's tables), v7 (stats throughput)
  Write([](CoordinatorStore* s) { return s->AddThroughput(kHour, 5); });
  Write([](CoordinatorStore* s) { return s->AddStatsThroughput(kHour, 6); });
  std::vector<ThroughputBucket> b;
  ASSERT_TRUE(reader_->Throughput(kHour, kHour + 60'000, 60'000, &b).ok());
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].units, 1u);
  EXPECT_EQ(b[0].stats_units, 1u);
}

}  // namespace
}  // namespace collatz
