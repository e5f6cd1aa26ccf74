// Stored tokens as worker identities (server/auth.h): a flag sticks to the token, so a
// worker registering again with a flagged token is flagged from the start, whatever its
// host; the shared token is no identity (one shared-token liar does not flag the fleet);
// and a worker id is usable only with the token it registered with.
#include <gtest/gtest.h>

#include "server/coordinator_test_fixture.h"

namespace collatz::server {
namespace {

using grpc::StatusCode;

class TokenIdentityTest : public CoordinatorFixture {
 protected:
  TokenIdentityTest() : CoordinatorFixture("token_identity_test_") {}

  int64_t Register(const std::string& host, const std::string& token_name) {
    WorkerDescription d;
    d.host = host;
    d.sieve_bits = 12;
    d.work_hash_version = kWorkHashVersion;
    d.unit_sieve_bits = true;
    d.token_name = token_name;
    int64_t id = 0;
    EXPECT_TRUE(c_->Register(d, &id).ok());
    return id;
  }
  const StoredWorker* Find(int64_t id) {
    static StoredWorker found;
    for (const WorkerReport& r : c_->ListWorkers()) {
      if (r.w.id == id) return &(found = r.w);
    }
    return nullptr;
  }
  bool Flagged(int64_t id) { return Find(id) != nullptr && Find(id)->flagged; }
  // `worker` leases a unit and hands in a wrong ladder: flagged at once.
  void Lie(int64_t worker) {
    LeaseGrant g;
    ASSERT_TRUE(c_->Lease(worker, &g).ok());
    ASSERT_TRUE(g.has_unit);
    UnitResult r = Search(g.spec);
    ASSERT_FALSE(r.ladder.empty());
    r.ladder.back().delay += 1;
    Disposition d;
    EXPECT_EQ(c_->Complete(worker, g.unit_id, g.token, r, 1, "cpu", &d).error_code(), StatusCode::PERMISSION_DENIED);
    ASSERT_TRUE(Flagged(worker));
  }
};

TEST_F(TokenIdentityTest, FlagSticksToTheTokenAndNotToTheSharedOne) {
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, 1 << 14, Kinds::kDelay, 1 << 12, 0, &out).ok());
  const int64_t shared_liar = Register("s1", ""), shared_honest = Register("s2", "");
  const int64_t liar = Register("node1", "box-a"), other = Register("node2", "box-b");
  EXPECT_EQ(Find(liar)->token_name, "box-a");
  Lie(shared_liar);
  EXPECT_FALSE(Flagged(shared_honest)) << "the shared token became an identity";
  EXPECT_FALSE(Flagged(liar));
  Lie(liar);
  EXPECT_FALSE(Flagged(other));
  EXPECT_FALSE(Flagged(shared_honest));

  Reopen();  // the flag and the token name are durable
  EXPECT_EQ(Find(liar)->token_name, "box-a");
  const int64_t again = Register("fresh-host", "box-a");
  EXPECT_TRUE(Flagged(again));
  EXPECT_NE(Find(again)->flag_reason.find("token:box-a"), std::string::npos) << Find(again)->flag_reason;
  EXPECT_FALSE(Flagged(Register("node3", "box-c")));
  EXPECT_FALSE(Flagged(Register("s3", "")));
}

TEST_F(TokenIdentityTest, AWorkerIdIsUsableOnlyWithItsToken) {
  const int64_t a = Register("node1", "box-a"), shared = Register("node2", "");
  EXPECT_TRUE(c_->CheckWorkerToken(a, "box-a").ok());
  EXPECT_EQ(c_->CheckWorkerToken(a, "box-b").error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(c_->CheckWorkerToken(a, "").error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(c_->CheckWorkerToken(shared, "").ok());
  EXPECT_EQ(c_->CheckWorkerToken(shared, "box-a").error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(c_->CheckWorkerToken(999, "box-a").ok());  // unknown: the call itself says NOT_FOUND
  Reopen();
  EXPECT_EQ(c_->CheckWorkerToken(a, "box-b").error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(c_->CheckWorkerToken(a, "box-a").ok());
}

}  // namespace
}  // namespace collatz::server
