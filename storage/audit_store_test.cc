// Schema v5 (audits that settle a mismatch): a database of version 4 holding an audit row
// opens and migrates; flagged identities and open audits round-trip; the first flag of an
// identity is kept.
#include <gtest/gtest.h>

#include "storage/coordinator_store.h"
#include "storage/old_schema_test_fixture.h"
#include "storage/schema.h"

namespace collatz {
namespace {

class AuditStoreTest : public OldSchemaTest {};

TEST_F(AuditStoreTest, Version4AuditsMigrateAndIdentitiesAndOpenAuditsRoundTrip) {
  ASSERT_GE(LatestSchemaVersion(), 5);
  const std::string n1 = std::string(38, '0') + "1", n2 = std::string(36, '0') + "100";
  MakeDatabaseAtVersion(
      4, "INSERT INTO units (begin_n, end_n, kinds, state) VALUES ('" + n1 + "', '" + n2 + "', 'delay', 'finished');"
         "INSERT INTO audits (unit_id, original_worker, auditor_worker, token, outcome, detail, at_ms) "
         "VALUES (1, 1, 2, 'aa', 'mismatch', 'old', 5);");
  std::unique_ptr<CoordinatorStore> store;
  Status st = CoordinatorStore::Open(path_, &store);
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::vector<StoredAudit> open;
  ASSERT_TRUE(store->LoadOpenAudits(&open).ok());
  EXPECT_TRUE(open.empty());  // a row from before v5 has no verdict and is never reloaded

  {
    auto txn = store->Begin();
    ASSERT_TRUE(txn->status().ok());
    StoredAudit a;
    a.unit_id = 1;
    a.original_worker = 1;
    a.auditor = 3;
    a.token = "bb";
    a.audited_token = "t1";
    a.auditor_result = "candidates=7";
    a.verdict = kVerdictOpen;
    a.at_ms = 9;
    ASSERT_TRUE(store->InsertAudit(a).ok());
    a.token = "cc";
    a.verdict = "auditor wrong (verified entries)";
    ASSERT_TRUE(store->InsertAudit(a).ok());
    ASSERT_TRUE(store->InsertFlaggedIdentity({"host:h", 3, "first", 10}).ok());
    ASSERT_TRUE(store->InsertFlaggedIdentity({"host:h", 4, "second", 11}).ok());
    ASSERT_TRUE(store->InsertFlaggedIdentity({"gpu:GPU-1", 4, "card", 12}).ok());
    ASSERT_TRUE(txn->Commit().ok());
  }
  ASSERT_TRUE(store->FlushBatch().ok());
  store.reset();

  ASSERT_TRUE(CoordinatorStore::Open(path_, &store).ok());
  ASSERT_TRUE(store->LoadOpenAudits(&open).ok());
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].token, "bb");
  EXPECT_EQ(open[0].auditor, 3);
  EXPECT_EQ(open[0].audited_token, "t1");
  EXPECT_EQ(open[0].auditor_result, "candidates=7");
  std::vector<FlaggedIdentity> ids;
  ASSERT_TRUE(store->LoadFlaggedIdentities(&ids).ok());
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[0].identity, "gpu:GPU-1");
  EXPECT_EQ(ids[1].identity, "host:h");
  EXPECT_EQ(ids[1].worker_id, 3);
  EXPECT_EQ(ids[1].reason, "first");
  std::string ic;
  ASSERT_TRUE(store->IntegrityCheck(&ic).ok());
  EXPECT_EQ(ic, "ok");
}

}  // namespace
}  // namespace collatz
