// Schema v3 (stats jobs): a database of version 2 (made with the v1 and v2 migrations,
// as an older binary made it) opens, migrates to v3 keeping its rows, and stores and
// loads stats jobs, units, leases and binary results.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>

#include "storage/coordinator_store.h"
#include "storage/old_schema_test_fixture.h"
#include "storage/schema.h"

namespace collatz {
namespace {

class StatsStoreTest : public OldSchemaTest {
 protected:
  // A database exactly as a binary of schema version 2 left it, with one submission,
  // one unit and one worker in it.
  void MakeVersion2Database() {
    const std::string n1 = std::string(38, '0') + "1", n2 = std::string(36, '0') + "100";
    MakeDatabaseAtVersion(
        2, "INSERT INTO submissions (begin_n, end_n, kinds, unit_size) VALUES ('" + n1 + "', '" + n2 +
               "', 'delay', '" + n2 + "');"
               "INSERT INTO units (begin_n, end_n, kinds, state) VALUES ('" + n1 + "', '" + n2 + "', 'delay', 'pending');"
               "INSERT INTO unit_work (unit_id, submission_id, priority) VALUES (1, 1, 0);"
               "INSERT INTO workers (host, gpus, driver, binary_version, backend, sieve_bits) "
               "VALUES ('h', '', '', 'old', 'cpu', 19);");
  }
};

TEST_F(StatsStoreTest, Version2DatabaseMigratesAndKeepsItsRows) {
  ASSERT_GE(LatestSchemaVersion(), 3);
  MakeVersion2Database();
  std::unique_ptr<CoordinatorStore> store;
  Status st = CoordinatorStore::Open(path_, &store);
  ASSERT_TRUE(st.ok()) << st.ToString();
  int version = 0;
  ASSERT_TRUE(store->records().SchemaVersion(&version).ok());
  EXPECT_EQ(version, LatestSchemaVersion());
  std::vector<StoredSubmission> subs;
  ASSERT_TRUE(store->LoadSubmissions(&subs).ok());
  ASSERT_EQ(subs.size(), 1u);
  EXPECT_EQ(subs[0].end, 100u);
  std::vector<StoredUnit> units;
  ASSERT_TRUE(store->LoadUnits(&units).ok());
  EXPECT_EQ(units.size(), 1u);
  std::vector<StoredWorker> workers;
  ASSERT_TRUE(store->LoadWorkers(&workers).ok());
  ASSERT_EQ(workers.size(), 1u);
  std::vector<StoredStatsJob> jobs;
  ASSERT_TRUE(store->LoadStatsJobs(&jobs).ok());
  EXPECT_TRUE(jobs.empty());
  std::string ic;
  ASSERT_TRUE(store->IntegrityCheck(&ic).ok());
  EXPECT_EQ(ic, "ok");
}

TEST_F(StatsStoreTest, JobsUnitsLeasesAndBinaryResultsRoundTrip) {
  MakeVersion2Database();
  std::unique_ptr<CoordinatorStore> store;
  ASSERT_TRUE(CoordinatorStore::Open(path_, &store).ok());
  const std::string result("\x00\x01\xff" "CLZ\x00stats", 12);  // NUL bytes survive
  {
    auto txn = store->Begin();
    ASSERT_TRUE(txn->status().ok());
    StoredStatsJob j;
    j.begin = 0;
    j.end = Pow2(70);
    j.batch = 1024;
    j.unit_size = Pow2(30);
    j.priority = 3;
    ASSERT_TRUE(store->InsertStatsJob(j, &j.id).ok());
    StoredStatsUnit u;
    u.job_id = j.id;
    u.begin = 0;
    u.end = Pow2(30);
    ASSERT_TRUE(store->InsertStatsUnit(u, &u.id).ok());
    StoredStatsUnit v = u;
    v.begin = Pow2(30);
    v.end = Pow2(31);
    ASSERT_TRUE(store->InsertStatsUnit(v, &v.id).ok());
    StoredStatsLease l;
    l.token = std::string(32, 'a');
    l.unit_id = u.id;
    l.worker_id = 1;
    l.issued_ms = 5;
    l.deadline_ms = 10;
    ASSERT_TRUE(store->InsertStatsLease(l).ok());
    l.state = LeaseState::kCompleted;
    ASSERT_TRUE(store->UpdateStatsLease(l).ok());
    u.state = StoredUnitState::kFinished;
    u.finished_by = 1;
    u.finished_token = l.token;
    ASSERT_TRUE(store->FinishStatsUnit(u, result, "cpu", 1.5).ok());
    // A finished unit is only written with its result.
    EXPECT_FALSE(store->UpdateStatsUnit(u).ok());
    v.failures = 2;
    v.last_error = "expired: x";
    ASSERT_TRUE(store->UpdateStatsUnit(v).ok());
    ASSERT_TRUE(store->InsertStatsAttempt(v.id, 1, l.token, "expired", "x", 7).ok());
    ASSERT_TRUE(txn->Commit().ok());
    ASSERT_TRUE(store->FlushBatch().ok());
  }
  store.reset();
  ASSERT_TRUE(CoordinatorStore::Open(path_, &store).ok());
  std::vector<StoredStatsJob> jobs;
  ASSERT_TRUE(store->LoadStatsJobs(&jobs).ok());
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].end, Pow2(70));
  EXPECT_EQ(jobs[0].batch, 1024u);
  EXPECT_EQ(jobs[0].priority, 3);
  std::vector<StoredStatsUnit> units;
  ASSERT_TRUE(store->LoadStatsUnits(&units).ok());
  ASSERT_EQ(units.size(), 2u);
  EXPECT_EQ(units[0].state, StoredUnitState::kFinished);
  EXPECT_EQ(units[0].finished_by, 1);
  EXPECT_EQ(units[1].state, StoredUnitState::kPending);
  EXPECT_EQ(units[1].failures, 2);
  EXPECT_EQ(units[1].last_error, "expired: x");
  std::vector<StoredStatsLease> leases;
  ASSERT_TRUE(store->LoadStatsLeases(&leases).ok());
  ASSERT_EQ(leases.size(), 1u);
  EXPECT_EQ(leases[0].state, LeaseState::kCompleted);
  std::vector<std::pair<u128, std::string>> results;
  ASSERT_TRUE(store->LoadStatsResults(jobs[0].id, 0, Pow2(31), &results).ok());
  ASSERT_EQ(results.size(), 1u);  // only finished units
  EXPECT_EQ(results[0].first, 0u);
  EXPECT_EQ(results[0].second, result);
  ASSERT_TRUE(store->LoadStatsResults(jobs[0].id, Pow2(30), Pow2(31), &results).ok());
  EXPECT_TRUE(results.empty());
}

}  // namespace
}  // namespace collatz
