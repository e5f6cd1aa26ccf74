// Schema v8 (a sieve width per unit): a database of version 7 holding a submission, its
// units (one pending, one finished) and a worker opens and migrates; the old units read
// back with width 0 (the coordinator's base width) and the worker as one that does not
// honour Unit.sieve_bits; new units and workers keep what they were stored with.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "storage/coordinator_store.h"
#include "storage/old_schema_test_fixture.h"
#include "storage/schema.h"

namespace collatz {
namespace {

class UnitSieveStoreTest : public OldSchemaTest {};

TEST_F(UnitSieveStoreTest, Version7UnitsReadAsTheBaseWidthAndNewUnitsKeepTheirs) {
  ASSERT_GE(LatestSchemaVersion(), 8);
  const std::string n1 = std::string(38, '0') + "1", n2 = std::string(36, '0') + "100",
                    n3 = std::string(36, '0') + "200";
  MakeDatabaseAtVersion(
      7, "INSERT INTO submissions (begin_n, end_n, kinds, unit_size) VALUES ('" + n1 + "', '" + n3 +
             "', 'delay,class', '" + n2 + "');"
             "INSERT INTO units (begin_n, end_n, kinds, state) VALUES ('" + n1 + "', '" + n2 +
             "', 'delay,class', 'finished');"
             "INSERT INTO units (begin_n, end_n, kinds, state) VALUES ('" + n2 + "', '" + n3 +
             "', 'delay,class', 'pending');"
             "INSERT INTO unit_work (unit_id, submission_id, priority) VALUES (1, 1, 0), (2, 1, 0);"
             "INSERT INTO workers (host, gpus, driver, binary_version, backend, sieve_bits) "
             "VALUES ('h', '', '', 'old', 'cpu', 19);");
  std::unique_ptr<CoordinatorStore> store;
  Status st = CoordinatorStore::Open(path_, &store);
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::vector<StoredUnit> units;
  ASSERT_TRUE(store->LoadUnits(&units).ok());
  ASSERT_EQ(units.size(), 2u);
  EXPECT_EQ(units[0].sieve_bits, 0);
  EXPECT_EQ(units[1].sieve_bits, 0);
  EXPECT_EQ(units[1].state, StoredUnitState::kPending);
  std::vector<StoredWorker> workers;
  ASSERT_TRUE(store->LoadWorkers(&workers).ok());
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_FALSE(workers[0].unit_sieve_bits);
  EXPECT_EQ(workers[0].sieve_bits, 19);

  {
    auto txn = store->Begin();
    ASSERT_TRUE(txn->status().ok());
    StoredUnit u;
    u.begin = 200;
    u.end = 300;
    u.submission_id = 1;
    u.sieve_bits = 25;
    int64_t id = 0;
    ASSERT_TRUE(store->InsertUnit(u, &id).ok());
    EXPECT_EQ(id, 3);
    u.id = id;
    u.state = StoredUnitState::kLeased;
    ASSERT_TRUE(store->UpdateUnit(u).ok());  // bookkeeping changes, the width stays
    StoredWorker w;
    w.host = "new";
    w.sieve_bits = 19;
    w.unit_sieve_bits = true;
    ASSERT_TRUE(store->InsertWorker(w, &id).ok());
    ASSERT_TRUE(txn->Commit().ok());
  }
  {
    auto txn = store->Begin();
    StoredUnit bad;
    bad.begin = 300;
    bad.end = 400;
    bad.submission_id = 1;
    bad.sieve_bits = -1;
    int64_t id = 0;
    EXPECT_FALSE(store->InsertUnit(bad, &id).ok());  // the column's check
  }
  ASSERT_TRUE(store->FlushBatch().ok());
  store.reset();

  ASSERT_TRUE(CoordinatorStore::Open(path_, &store).ok());
  ASSERT_TRUE(store->LoadUnits(&units).ok());
  ASSERT_EQ(units.size(), 3u);
  EXPECT_EQ(units[2].sieve_bits, 25);
  EXPECT_EQ(units[2].state, StoredUnitState::kLeased);
  ASSERT_TRUE(store->LoadWorkers(&workers).ok());
  ASSERT_EQ(workers.size(), 2u);
  EXPECT_FALSE(workers[0].unit_sieve_bits);
  EXPECT_TRUE(workers[1].unit_sieve_bits);
  store.reset();

  // The decimal views show the columns.
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path_.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw, "SELECT group_concat(sieve_bits) FROM (SELECT sieve_bits FROM v_units ORDER BY id)",
                               -1, &stmt, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(raw);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0))), "0,0,25");
  sqlite3_finalize(stmt);
  ASSERT_EQ(sqlite3_prepare_v2(raw, "SELECT group_concat(unit_sieve_bits) FROM v_workers", -1, &stmt, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(raw);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0))), "0,1");
  sqlite3_finalize(stmt);
  sqlite3_close(raw);
}

}  // namespace
}  // namespace collatz
