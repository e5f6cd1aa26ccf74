// Schema v11: the events table rebuilt to take worker_unflagged. A database of version 10
// with events opens, migrates, keeps them (ids, times, order, view) and takes the new kind;
// unknown kinds stay refused.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <string>

#include "storage/coordinator_store.h"
#include "storage/old_schema_test_fixture.h"
#include "storage/schema.h"

namespace collatz {
namespace {

class EventsSchemaTest : public OldSchemaTest {};

TEST_F(EventsSchemaTest, Version10EventsSurviveAndTheUnflagKindIsTaken) {
  ASSERT_GE(LatestSchemaVersion(), 11);
  MakeDatabaseAtVersion(10,
                        "INSERT INTO events (id, at_ms, kind, detail) VALUES "
                        "(4, 60000, 'worker_flagged', 'worker 3 (h): audit mismatch'), "
                        "(9, 120000, 'unit_quarantined', 'unit 9 [5, 6): expired');");
  std::unique_ptr<CoordinatorStore> store;
  ASSERT_TRUE(CoordinatorStore::Open(path_, &store).ok());
  {
    auto w = store->Begin();
    ASSERT_TRUE(store->InsertEvent(180000, "worker_unflagged", "worker 3 (h) unflagged by an operator").ok());
    ASSERT_TRUE(w->Commit().ok());
  }
  ASSERT_TRUE(store->FlushBatch().ok());
  {
    auto w = store->Begin();
    EXPECT_FALSE(store->InsertEvent(180000, "gossip", "x").ok());  // the CHECK still holds
  }
  store.reset();
  EXPECT_EQ(Rows("PRAGMA user_version"), std::to_string(LatestSchemaVersion()) + "\n");
  EXPECT_EQ(Rows("SELECT id, at, kind FROM v_events"),
            "4|1970-01-01T00:01:00Z|worker_flagged\n9|1970-01-01T00:02:00Z|unit_quarantined\n"
            "10|1970-01-01T00:03:00Z|worker_unflagged\n");
  EXPECT_EQ(Rows("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'events_by_time'"), "1\n");
  EXPECT_EQ(Rows("PRAGMA integrity_check"), "ok\n");
}

}  // namespace
}  // namespace collatz
