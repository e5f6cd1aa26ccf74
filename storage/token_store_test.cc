// Schema v9 (tokens per host and role): a database of version 8 holding a worker opens
// and migrates, the worker reads back with no token name, and the token store keeps
// tokens by digest, refuses a name twice (revoked or not) and keeps the first revocation.
#include "storage/token_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "storage/coordinator_store.h"
#include "storage/old_schema_test_fixture.h"
#include "storage/schema.h"

namespace collatz {
namespace {

class TokenStoreTest : public OldSchemaTest {
 protected:
  static StoredToken Token(const std::string& name, TokenRole role, char digit) {
    StoredToken t;
    t.name = name;
    t.role = role;
    t.sha256 = std::string(64, digit);
    t.created_ms = 1000;
    return t;
  }
};

TEST_F(TokenStoreTest, Version8WorkersReadWithoutATokenAndNewOnesKeepTheirs) {
  ASSERT_GE(LatestSchemaVersion(), 9);
  MakeDatabaseAtVersion(8,
                        "INSERT INTO workers (host, gpus, driver, binary_version, backend, sieve_bits, unit_sieve_bits) "
                        "VALUES ('old-host', '', '', 'old', 'cpu', 19, 1);");
  // Before the migration there is no tokens table: the token store refuses the file.
  std::unique_ptr<TokenStore> tokens;
  EXPECT_EQ(TokenStore::Open(path_, &tokens).code(), Status::Code::kFailedPrecondition);

  std::unique_ptr<CoordinatorStore> store;
  Status st = CoordinatorStore::Open(path_, &store);
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::vector<StoredWorker> workers;
  ASSERT_TRUE(store->LoadWorkers(&workers).ok());
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_EQ(workers[0].token_name, "");
  EXPECT_TRUE(workers[0].unit_sieve_bits);
  {
    auto txn = store->Begin();
    ASSERT_TRUE(txn->status().ok());
    StoredWorker w;
    w.host = "new-host";
    w.sieve_bits = 19;
    w.token_name = "gpu-box-7";
    int64_t id = 0;
    ASSERT_TRUE(store->InsertWorker(w, &id).ok());
    ASSERT_TRUE(txn->Commit().ok());
  }
  ASSERT_TRUE(store->FlushBatch().ok());
  store.reset();
  ASSERT_TRUE(CoordinatorStore::Open(path_, &store).ok());
  ASSERT_TRUE(store->LoadWorkers(&workers).ok());
  ASSERT_EQ(workers.size(), 2u);
  EXPECT_EQ(workers[0].token_name, "");
  EXPECT_EQ(workers[1].token_name, "gpu-box-7");
  EXPECT_EQ(Value("SELECT token_name FROM v_workers WHERE host = 'new-host'"), "gpu-box-7");
  std::string integrity;
  ASSERT_TRUE(store->IntegrityCheck(&integrity).ok());
  EXPECT_EQ(integrity, "ok");

  st = TokenStore::Open(path_, &tokens);
  ASSERT_TRUE(st.ok()) << st.ToString();
  bool any = true;
  ASSERT_TRUE(tokens->Any(&any).ok());
  EXPECT_FALSE(any);
}

TEST_F(TokenStoreTest, KeepsTokensByDigestNamesOnceAndTheFirstRevocation) {
  std::unique_ptr<CoordinatorStore> store;
  ASSERT_TRUE(CoordinatorStore::Open(path_, &store).ok());
  std::unique_ptr<TokenStore> tokens;
  ASSERT_TRUE(TokenStore::Open(path_, &tokens).ok());

  ASSERT_TRUE(tokens->Insert(Token("host-a", TokenRole::kWorker, 'a')).ok());
  ASSERT_TRUE(tokens->Insert(Token("ops", TokenRole::kAdmin, 'b')).ok());
  EXPECT_EQ(tokens->Insert(Token("host-a", TokenRole::kAdmin, 'c')).code(), Status::Code::kFailedPrecondition);
  EXPECT_FALSE(tokens->Insert(Token("other", TokenRole::kWorker, 'a')).ok());  // the digest is unique
  StoredToken bad = Token("short-digest", TokenRole::kWorker, 'd');
  bad.sha256 = "abc";
  EXPECT_FALSE(tokens->Insert(bad).ok());  // the column's check
  bool any = false;
  ASSERT_TRUE(tokens->Any(&any).ok());
  EXPECT_TRUE(any);

  StoredToken t;
  bool found = false;
  ASSERT_TRUE(tokens->FindBySha256(std::string(64, 'a'), &t, &found).ok());
  ASSERT_TRUE(found);
  EXPECT_EQ(t.name, "host-a");
  EXPECT_EQ(t.role, TokenRole::kWorker);
  EXPECT_EQ(t.created_ms, 1000);
  EXPECT_EQ(t.revoked_ms, 0);
  ASSERT_TRUE(tokens->FindBySha256(std::string(64, 'e'), &t, &found).ok());
  EXPECT_FALSE(found);

  ASSERT_TRUE(tokens->Revoke("host-a", 5000).ok());
  ASSERT_TRUE(tokens->Revoke("host-a", 9000).ok());  // keeps the first time
  EXPECT_EQ(tokens->Revoke("nobody", 5000).code(), Status::Code::kNotFound);
  ASSERT_TRUE(tokens->FindByName("host-a", &t, &found).ok());
  ASSERT_TRUE(found);
  EXPECT_EQ(t.revoked_ms, 5000);
  // A revoked name stays taken: flags and workers refer to it.
  EXPECT_EQ(tokens->Insert(Token("host-a", TokenRole::kWorker, 'f')).code(), Status::Code::kFailedPrecondition);

  ASSERT_TRUE(tokens->RecordLastUsed({{"ops", 7000}, {"host-a", 6000}}).ok());
  ASSERT_TRUE(tokens->RecordLastUsed({{"ops", 6500}}).ok());  // never goes back
  std::vector<StoredToken> list;
  ASSERT_TRUE(tokens->List(&list).ok());
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].name, "host-a");
  EXPECT_EQ(list[0].last_used_ms, 6000);
  EXPECT_EQ(list[1].name, "ops");
  EXPECT_EQ(list[1].role, TokenRole::kAdmin);
  EXPECT_EQ(list[1].last_used_ms, 7000);
  EXPECT_EQ(Value("SELECT revoked FROM v_tokens WHERE name = 'host-a'"), "1970-01-01T00:00:05Z");
  EXPECT_EQ(Value("SELECT count(*) FROM v_tokens WHERE revoked IS NULL"), "1");
}

}  // namespace
}  // namespace collatz
