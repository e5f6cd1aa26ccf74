// Schema v4 (work hash versions): a database of version 3 (made with the v1 to v3
// migrations, as an older binary made it) holding a finished unit and a worker opens,
// migrates to v4, reads the old rows as work hash version 1, and stores new results and
// workers with their version.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>

#include "core/work_hash.h"
#include "storage/coordinator_store.h"
#include "storage/old_schema_test_fixture.h"
#include "storage/record_db.h"
#include "storage/schema.h"

namespace collatz {
namespace {

class WorkHashStoreTest : public OldSchemaTest {
 protected:
  // A database exactly as a binary of schema version 3 left it: one finished unit
  // [1, 100) with its result (work hash 0123456789abcdef) and ladder, and one worker.
  void MakeVersion3Database() {
    const std::string n1 = std::string(38, '0') + "1", n2 = std::string(36, '0') + "100",
                      n27 = std::string(37, '0') + "27";
    MakeDatabaseAtVersion(
        3, "INSERT INTO units (begin_n, end_n, kinds, state, finished_at) VALUES ('" + n1 + "', '" + n2 +
               "', 'delay', 'finished', '2024-01-01T00:00:00.000Z');"
               "INSERT INTO unit_results (unit_id, floor, open_holes, candidates, tally_count, tally_sum, work_hash, "
               "engine, seconds) VALUES (1, 0, 0, 50, 20, '1234', '0123456789abcdef', 'cpu', 1.5);"
               "INSERT INTO unit_ladder (unit_id, n, delay) VALUES (1, '" + n27 + "', 111);"
               "INSERT INTO workers (host, gpus, driver, binary_version, backend, sieve_bits) "
               "VALUES ('h', '', '', 'old', 'cpu', 19);");
  }
};

TEST_F(WorkHashStoreTest, Version3ResultsReadAsVersion1AndNewResultsKeepTheirVersion) {
  ASSERT_GE(LatestSchemaVersion(), 4);
  ASSERT_EQ(kWorkHashVersion, 2u);
  MakeVersion3Database();
  std::unique_ptr<RecordDb> db;
  Status st = RecordDb::Open(path_, RecordDb::OpenMode::kExistingOnly, &db);
  ASSERT_TRUE(st.ok()) << st.ToString();
  int version = 0;
  ASSERT_TRUE(db->SchemaVersion(&version).ok());
  EXPECT_EQ(version, LatestSchemaVersion());

  std::vector<FinishedUnit> units;
  ASSERT_TRUE(db->LoadFinishedUnits(&units).ok());
  ASSERT_EQ(units.size(), 1u);
  EXPECT_EQ(units[0].result.work_hash, 0x0123456789abcdefULL);
  EXPECT_EQ(units[0].result.work_hash_version, 1u);
  EXPECT_EQ(units[0].result.candidates, 50u);
  ASSERT_EQ(units[0].result.ladder.size(), 1u);
  EXPECT_EQ(units[0].result.ladder[0], (Record{27, 111}));

  // A result of this binary is stored with its version and reads back as it was.
  FinishedUnit fresh;
  fresh.begin = 100;
  fresh.end = 200;
  fresh.kinds = Kinds::kDelay;
  fresh.result.candidates = 7;
  fresh.result.work_hash = 0xfedcba9876543210ULL;
  ASSERT_EQ(fresh.result.work_hash_version, kWorkHashVersion);
  ASSERT_TRUE(db->StoreFinishedUnit(fresh, {}).ok());
  // Version 0 does not exist: refused by the column's check.
  FinishedUnit bad = fresh;
  bad.begin = 200;
  bad.end = 300;
  bad.result.work_hash_version = 0;
  EXPECT_FALSE(db->StoreFinishedUnit(bad, {}).ok());
  db.reset();

  ASSERT_TRUE(RecordDb::Open(path_, RecordDb::OpenMode::kExistingOnly, &db).ok());
  ASSERT_TRUE(db->LoadFinishedUnits(&units).ok());
  ASSERT_EQ(units.size(), 2u);
  EXPECT_EQ(units[0].result.work_hash_version, 1u);
  EXPECT_EQ(units[1].result.work_hash_version, kWorkHashVersion);
  EXPECT_EQ(units[1].result, fresh.result);
  db.reset();

  // The decimal view shows the column.
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path_.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw, "SELECT begin_n, work_hash, work_hash_version FROM v_units ORDER BY id", -1, &stmt,
                               nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(raw);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)), "1");
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1)), "0123456789abcdef");
  EXPECT_EQ(sqlite3_column_int64(stmt, 2), 1);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)), "100");
  EXPECT_EQ(sqlite3_column_int64(stmt, 2), static_cast<int64_t>(kWorkHashVersion));
  EXPECT_EQ(sqlite3_step(stmt), SQLITE_DONE);
  sqlite3_finalize(stmt);
  sqlite3_close(raw);
}

TEST_F(WorkHashStoreTest, CoordinatorStoreKeepsResultAndWorkerVersions) {
  MakeVersion3Database();
  std::unique_ptr<CoordinatorStore> store;
  Status st = CoordinatorStore::Open(path_, &store);
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::vector<StoredWorker> workers;
  ASSERT_TRUE(store->LoadWorkers(&workers).ok());
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_EQ(workers[0].work_hash_version, 1u);  // registered by a binary before v4

  {
    auto txn = store->Begin();
    ASSERT_TRUE(txn->status().ok());
    StoredWorker w;
    w.host = "new";
    w.backend = "gpu";
    w.sieve_bits = 19;
    w.work_hash_version = kWorkHashVersion;
    ASSERT_TRUE(store->InsertWorker(w, &w.id).ok());
    StoredSubmission sub;
    sub.begin = 100;
    sub.end = 200;
    sub.kinds = Kinds::kDelay;
    sub.unit_size = 100;
    ASSERT_TRUE(store->InsertSubmission(sub, &sub.id).ok());
    StoredUnit u;
    u.submission_id = sub.id;
    u.begin = 100;
    u.end = 200;
    u.kinds = Kinds::kDelay;
    u.state = StoredUnitState::kFinished;
    ASSERT_TRUE(store->InsertUnit(u, &u.id).ok());
    UnitResult r;
    r.candidates = 9;
    r.work_hash = 0x1111222233334444ULL;
    ASSERT_TRUE(store->StoreUnitResult(u.id, r, {}).ok());
    ASSERT_TRUE(txn->Commit().ok());
  }
  ASSERT_TRUE(store->FlushBatch().ok());
  store.reset();

  ASSERT_TRUE(CoordinatorStore::Open(path_, &store).ok());
  ASSERT_TRUE(store->LoadWorkers(&workers).ok());
  ASSERT_EQ(workers.size(), 2u);
  EXPECT_EQ(workers[0].work_hash_version, 1u);
  EXPECT_EQ(workers[1].work_hash_version, kWorkHashVersion);
  std::vector<std::pair<int64_t, FinishedUnit>> finished;
  ASSERT_TRUE(store->LoadFinishedUnits(&finished).ok());
  ASSERT_EQ(finished.size(), 2u);
  EXPECT_EQ(finished[0].second.result.work_hash_version, 1u);
  EXPECT_EQ(finished[1].second.result.work_hash_version, kWorkHashVersion);
  EXPECT_EQ(finished[1].second.result.work_hash, 0x1111222233334444ULL);
  std::string ic;
  ASSERT_TRUE(store->IntegrityCheck(&ic).ok());
  EXPECT_EQ(ic, "ok");
}

}  // namespace
}  // namespace collatz
