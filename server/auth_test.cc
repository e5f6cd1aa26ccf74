// Tokens per host and role (server/auth.h): the shared token, stored tokens and their
// roles, revocation from the next call, tokens stored only as their SHA-256, the guards
// that keep an admin able to manage the server; and the services: a worker token may
// call only the Worker service and act only for the workers it registered.
#include "server/auth.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "client/channel.h"
#include "core/work_hash.h"
#include "proto/wire.h"
#include "server/listen_address.h"
#include "server/services.h"

namespace collatz::server {
namespace {

using grpc::StatusCode;

constexpr const char* kShared = "shared-token-for-auth-tests";

class AuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("auth_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    db_ = (dir_ / "a.db").string();
    ASSERT_TRUE(CoordinatorStore::Open(db_, &store_).ok());
    ASSERT_TRUE(TokenStore::Open(db_, &tokens_).ok());
  }
  void TearDown() override {
    tokens_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  grpc::Status As(const TokenAuth& auth, const std::string& token, Caller* caller) {
    return auth.Authenticate(&token, caller);
  }
  // Every byte of the database's files (the main file, its WAL and shared memory).
  std::string DatabaseBytes() {
    std::string all;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      std::ifstream in(e.path(), std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      all += ss.str();
    }
    return all;
  }

  std::filesystem::path dir_;
  std::string db_;
  std::unique_ptr<CoordinatorStore> store_;
  std::unique_ptr<TokenStore> tokens_;
  FakeClock clock_;
};

TEST(AuthHelpersTest, Sha256NewTokensNamesAndLoopback) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::string a, b;
  ASSERT_TRUE(NewTokenText(&a).ok());
  ASSERT_TRUE(NewTokenText(&b).ok());
  EXPECT_EQ(a.size(), 64u);
  EXPECT_NE(a, b);
  EXPECT_TRUE(ValidTokenName("gpu-node-17.example.org"));
  EXPECT_TRUE(ValidTokenName("ops_1"));
  EXPECT_FALSE(ValidTokenName(""));
  EXPECT_FALSE(ValidTokenName("a b"));
  EXPECT_FALSE(ValidTokenName("x:y"));
  EXPECT_FALSE(ValidTokenName(std::string(65, 'a')));

  for (const char* a : {"127.0.0.1:50051", "127.1.2.3:0", "localhost:8080", "[::1]:50051", "unix:/run/c.sock",
                        "unix-abstract:collatz"}) {
    EXPECT_TRUE(IsLoopbackAddress(a)) << a;
  }
  for (const char* a : {"0.0.0.0:50051", "[::]:50051", ":50051", "10.0.0.5:50051", "coord.example.org:50051",
                        "128.0.0.1:1", "[::ffff:10.0.0.1]:1", "[::1:50051"}) {
    EXPECT_FALSE(IsLoopbackAddress(a)) << a;
  }
}

TEST_F(AuthTest, RolesRevocationAndTheSharedToken) {
  TokenAuth auth(kShared, tokens_.get(), &clock_);
  EXPECT_TRUE(auth.enabled());
  std::string worker, admin;
  ASSERT_TRUE(auth.AddToken("host-a", TokenRole::kWorker, &worker).ok());
  ASSERT_TRUE(auth.AddToken("ops", TokenRole::kAdmin, &admin).ok());
  EXPECT_NE(worker, admin);

  Caller c;
  ASSERT_TRUE(As(auth, kShared, &c).ok());
  EXPECT_EQ(c.role, TokenRole::kAdmin);
  EXPECT_EQ(c.token_name, "");  // no identity
  ASSERT_TRUE(As(auth, worker, &c).ok());
  EXPECT_EQ(c.role, TokenRole::kWorker);
  EXPECT_EQ(c.token_name, "host-a");
  ASSERT_TRUE(As(auth, admin, &c).ok());
  EXPECT_EQ(c.role, TokenRole::kAdmin);
  EXPECT_EQ(c.token_name, "ops");
  EXPECT_EQ(As(auth, worker + "x", &c).error_code(), StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(As(auth, Sha256Hex(worker), &c).error_code(), StatusCode::UNAUTHENTICATED);  // the digest is no token
  EXPECT_EQ(auth.Authenticate(nullptr, &c).error_code(), StatusCode::UNAUTHENTICATED);

  EXPECT_EQ(auth.AddToken("host-a", TokenRole::kWorker, &worker).error_code(), StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(auth.AddToken("bad name", TokenRole::kWorker, &worker).error_code(), StatusCode::INVALID_ARGUMENT);
  ASSERT_TRUE(auth.RevokeToken("host-a").ok());
  grpc::Status st = As(auth, worker, &c);
  EXPECT_EQ(st.error_code(), StatusCode::UNAUTHENTICATED);  // from the next call on
  EXPECT_NE(st.error_message().find("revoked"), std::string::npos);
  EXPECT_EQ(auth.RevokeToken("host-a").error_code(), StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(auth.RevokeToken("nobody").error_code(), StatusCode::NOT_FOUND);
  EXPECT_EQ(auth.AddToken("host-a", TokenRole::kWorker, &worker).error_code(), StatusCode::ALREADY_EXISTS);
  // With the shared token there, the last admin token may go.
  EXPECT_TRUE(auth.RevokeToken("ops").ok());
  EXPECT_TRUE(As(auth, kShared, &c).ok());

  // A revocation made by another connection (another server process, sqlite3) counts too:
  // nothing is cached.
  std::string third;
  ASSERT_TRUE(auth.AddToken("host-b", TokenRole::kWorker, &third).ok());
  ASSERT_TRUE(As(auth, third, &c).ok());
  std::unique_ptr<TokenStore> other;
  ASSERT_TRUE(TokenStore::Open(db_, &other).ok());
  ASSERT_TRUE(other->Revoke("host-b", 1).ok());
  EXPECT_EQ(As(auth, third, &c).error_code(), StatusCode::UNAUTHENTICATED);
}

TEST_F(AuthTest, NoTokenIsOpenUntilTheFirstAndAdminsCannotLockThemselvesOut) {
  TokenAuth auth("", tokens_.get(), &clock_);
  EXPECT_FALSE(auth.enabled());
  Caller c;
  EXPECT_TRUE(auth.Authenticate(nullptr, &c).ok());
  EXPECT_EQ(c.role, TokenRole::kAdmin);
  std::string worker, admin, admin2;
  EXPECT_EQ(auth.AddToken("host-a", TokenRole::kWorker, &worker).error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_FALSE(auth.enabled());
  ASSERT_TRUE(auth.AddToken("ops", TokenRole::kAdmin, &admin).ok());
  EXPECT_TRUE(auth.enabled());
  EXPECT_EQ(auth.Authenticate(nullptr, &c).error_code(), StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(As(auth, "anything", &c).error_code(), StatusCode::UNAUTHENTICATED);
  ASSERT_TRUE(auth.AddToken("host-a", TokenRole::kWorker, &worker).ok());
  EXPECT_EQ(auth.RevokeToken("ops").error_code(), StatusCode::FAILED_PRECONDITION);  // the last admin
  ASSERT_TRUE(auth.AddToken("ops2", TokenRole::kAdmin, &admin2).ok());
  ASSERT_TRUE(auth.RevokeToken("ops").ok());
  ASSERT_TRUE(auth.RevokeToken("host-a").ok());
  // Revoking tokens never opens the server; a fresh process sees the same.
  TokenAuth restarted("", tokens_.get(), &clock_);
  EXPECT_TRUE(restarted.enabled());
  EXPECT_EQ(restarted.Authenticate(nullptr, &c).error_code(), StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(As(restarted, admin, &c).error_code(), StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(As(restarted, admin2, &c).ok());
}

TEST_F(AuthTest, TokensAreStoredOnlyAsDigestsAndLastUseIsKept) {
  std::string worker, admin;
  {
    TokenAuth auth(kShared, tokens_.get(), &clock_);
    ASSERT_TRUE(auth.AddToken("host-a", TokenRole::kWorker, &worker).ok());
    ASSERT_TRUE(auth.AddToken("ops", TokenRole::kAdmin, &admin).ok());
    clock_.Advance(60'000);
    Caller c;
    ASSERT_TRUE(As(auth, worker, &c).ok());
    std::vector<StoredToken> list;
    ASSERT_TRUE(auth.ListTokens(&list).ok());
    ASSERT_EQ(list.size(), 2u);
    EXPECT_EQ(list[0].name, "host-a");
    EXPECT_EQ(list[0].last_used_ms, clock_.NowMs());  // noticed before it is written
    EXPECT_EQ(list[1].last_used_ms, 0);
    ASSERT_TRUE(auth.FlushLastUsed().ok());
  }
  TokenAuth restarted(kShared, tokens_.get(), &clock_);
  std::vector<StoredToken> list;
  ASSERT_TRUE(restarted.ListTokens(&list).ok());
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].last_used_ms, clock_.NowMs());
  EXPECT_EQ(list[0].sha256, Sha256Hex(worker));

  const std::string bytes = DatabaseBytes();
  EXPECT_NE(bytes.find(Sha256Hex(worker)), std::string::npos) << "the digest should be in the files searched";
  EXPECT_EQ(bytes.find(worker), std::string::npos) << "a worker token is in the database";
  EXPECT_EQ(bytes.find(admin), std::string::npos) << "an admin token is in the database";
  EXPECT_EQ(bytes.find(worker.substr(0, 16)), std::string::npos);
}

// The services in-process on 127.0.0.1, with the shared token and stored tokens.
class AuthServicesTest : public AuthTest {
 protected:
  void SetUp() override {
    AuthTest::SetUp();
    ASSERT_TRUE(SearchTables::Build(12, 12, 16, &tables_).ok());
    std::unique_ptr<CoordinatorStore> store;
    store_.reset();
    ASSERT_TRUE(CoordinatorStore::Open(db_, &store).ok());
    ASSERT_TRUE(Coordinator::Open(std::move(store), tables_, &clock_, CoordinatorOptions(), &c_).ok());
    auth_ = std::make_unique<TokenAuth>(kShared, tokens_.get(), &clock_);
    ASSERT_TRUE(auth_->AddToken("box-a", TokenRole::kWorker, &worker_a_).ok());
    ASSERT_TRUE(auth_->AddToken("box-b", TokenRole::kWorker, &worker_b_).ok());
    ASSERT_TRUE(auth_->AddToken("ops", TokenRole::kAdmin, &admin_).ok());
    worker_svc_ = std::make_unique<WorkerService>(c_.get(), auth_.get());
    admin_svc_ = std::make_unique<AdminService>(c_.get(), auth_.get());
    grpc::ServerBuilder b;
    int port = 0;
    b.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    b.RegisterService(worker_svc_.get());
    b.RegisterService(admin_svc_.get());
    server_ = b.BuildAndStart();
    ASSERT_NE(port, 0);
    auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials());
    admin_stub_ = v1::Admin::NewStub(channel);
    worker_stub_ = v1::Worker::NewStub(channel);
  }
  void TearDown() override {
    server_->Shutdown();
    std::string ic;
    ASSERT_TRUE(c_->IntegrityCheck(&ic).ok());
    EXPECT_EQ(ic, "ok");
    c_.reset();
    AuthTest::TearDown();
  }

  template <typename Req, typename Resp>
  grpc::Status Admin(grpc::Status (v1::Admin::Stub::*method)(grpc::ClientContext*, const Req&, Resp*),
                     const std::string& token, const Req& req = Req()) {
    grpc::ClientContext ctx;
    client::AddToken(&ctx, token);
    Resp resp;
    return (admin_stub_.get()->*method)(&ctx, req, &resp);
  }
  grpc::Status Register(const std::string& token, const std::string& host, uint64_t* id) {
    grpc::ClientContext ctx;
    client::AddToken(&ctx, token);
    v1::RegisterRequest req;
    req.set_host(host);
    req.set_backend("cpu");
    req.set_sieve_bits(12);
    req.set_work_hash_version(kWorkHashVersion);
    req.set_unit_sieve_bits(true);
    v1::RegisterResponse resp;
    grpc::Status st = worker_stub_->Register(&ctx, req, &resp);
    *id = resp.worker_id();
    return st;
  }
  grpc::Status Lease(const std::string& token, uint64_t id, v1::LeaseResponse* resp) {
    grpc::ClientContext ctx;
    client::AddToken(&ctx, token);
    v1::LeaseRequest req;
    req.set_worker_id(id);
    return worker_stub_->Lease(&ctx, req, resp);
  }
  grpc::Status Heartbeat(const std::string& token, uint64_t id, const v1::LeaseResponse& lease) {
    grpc::ClientContext ctx;
    client::AddToken(&ctx, token);
    v1::HeartbeatRequest req;
    req.set_worker_id(id);
    req.set_unit_id(lease.unit().unit_id());
    req.set_lease_token(lease.lease_token());
    v1::HeartbeatResponse resp;
    return worker_stub_->Heartbeat(&ctx, req, &resp);
  }
  grpc::Status Release(const std::string& token, uint64_t id, const v1::LeaseResponse& lease) {
    grpc::ClientContext ctx;
    client::AddToken(&ctx, token);
    v1::ReleaseRequest req;
    req.set_worker_id(id);
    req.set_unit_id(lease.unit().unit_id());
    req.set_lease_token(lease.lease_token());
    v1::ReleaseResponse resp;
    return worker_stub_->Release(&ctx, req, &resp);
  }
  v1::SubmitRequest SubmitReq() {
    v1::SubmitRequest req;
    wire::ToWire(1, req.mutable_begin());
    wire::ToWire(1 << 14, req.mutable_end());
    wire::ToWire(1 << 12, req.mutable_unit_size());
    req.set_kinds(v1::KINDS_DELAY);
    return req;
  }

  std::shared_ptr<const SearchTables> tables_;
  std::unique_ptr<Coordinator> c_;
  std::unique_ptr<TokenAuth> auth_;
  std::string worker_a_, worker_b_, admin_;
  std::unique_ptr<WorkerService> worker_svc_;
  std::unique_ptr<AdminService> admin_svc_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::Admin::Stub> admin_stub_;
  std::unique_ptr<v1::Worker::Stub> worker_stub_;
};

TEST_F(AuthServicesTest, AWorkerTokenCannotAdministerAndAnAdminTokenCan) {
  using S = v1::Admin::Stub;
  const grpc::Status denied = Admin(&S::Submit, worker_a_, SubmitReq());
  EXPECT_EQ(denied.error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_NE(denied.error_message().find("worker role"), std::string::npos) << denied.error_message();
  v1::CancelRequest cancel;
  cancel.set_submission_id(1);
  EXPECT_EQ(Admin(&S::Cancel, worker_a_, cancel).error_code(), StatusCode::PERMISSION_DENIED);
  v1::ImportRequest import;  // [1, 2): the record 1 (delay 0), complete
  wire::ToWire(2, import.mutable_complete_below());
  wire::ToWire(1, import.add_delay_records()->mutable_n());
  EXPECT_EQ(Admin(&S::Import, worker_a_, import).error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Admin(&S::Requeue, worker_a_, v1::RequeueRequest()).error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Admin(&S::Backup, worker_a_, v1::BackupRequest()).error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Admin(&S::SubmitStats, worker_a_, v1::SubmitStatsRequest()).error_code(), StatusCode::PERMISSION_DENIED);
  v1::AddTokenRequest add;
  add.set_name("sneaky");
  add.set_role(v1::TOKEN_ROLE_ADMIN);
  EXPECT_EQ(Admin(&S::AddToken, worker_a_, add).error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Admin(&S::ListTokens, worker_a_, v1::ListTokensRequest()).error_code(), StatusCode::PERMISSION_DENIED);
  v1::RevokeTokenRequest revoke;
  revoke.set_name("ops");
  EXPECT_EQ(Admin(&S::RevokeToken, worker_a_, revoke).error_code(), StatusCode::PERMISSION_DENIED);
  // Read-only queries stay open, with any token or none.
  EXPECT_TRUE(Admin(&S::Status, worker_a_, v1::StatusRequest()).ok());
  EXPECT_TRUE(Admin(&S::Status, "", v1::StatusRequest()).ok());
  EXPECT_TRUE(Admin(&S::ListWorkers, "", v1::ListWorkersRequest()).ok());
  EXPECT_EQ(c_->GetStatus().pending, 0u);

  // The admin token and the shared token can.
  EXPECT_TRUE(Admin(&S::Submit, admin_, SubmitReq()).ok());
  EXPECT_EQ(c_->GetStatus().pending, 4u);
  EXPECT_TRUE(Admin(&S::Cancel, admin_, cancel).ok());
  EXPECT_EQ(c_->GetStatus().pending, 0u);
  const grpc::Status imported = Admin(&S::Import, admin_, import);
  EXPECT_TRUE(imported.ok()) << imported.error_message();
  EXPECT_TRUE(Admin(&S::Submit, std::string(kShared), SubmitReq()).ok());
  add.set_name("ops2");
  EXPECT_TRUE(Admin(&S::AddToken, admin_, add).ok());
  grpc::ClientContext ctx;
  client::AddToken(&ctx, kShared);
  v1::ListTokensResponse list;
  ASSERT_TRUE(admin_stub_->ListTokens(&ctx, v1::ListTokensRequest(), &list).ok());
  ASSERT_EQ(list.tokens_size(), 4);
  EXPECT_EQ(list.tokens(0).name(), "box-a");
  EXPECT_EQ(list.tokens(0).role(), v1::TOKEN_ROLE_WORKER);
  EXPECT_EQ(list.tokens(2).name(), "ops");
  EXPECT_EQ(list.tokens(2).role(), v1::TOKEN_ROLE_ADMIN);
  EXPECT_TRUE(Admin(&S::RevokeToken, admin_, revoke).ok());  // an admin may revoke itself
  EXPECT_EQ(Admin(&S::Submit, admin_, SubmitReq()).error_code(), StatusCode::UNAUTHENTICATED);
}

TEST_F(AuthServicesTest, AWorkerIdIsUsableOnlyWithTheTokenItRegisteredWith) {
  ASSERT_TRUE(Admin(&v1::Admin::Stub::Submit, admin_, SubmitReq()).ok());
  uint64_t a = 0, b = 0, shared = 0;
  ASSERT_TRUE(Register(worker_a_, "node-a", &a).ok());
  ASSERT_TRUE(Register(worker_b_, "node-b", &b).ok());
  ASSERT_TRUE(Register(kShared, "node-s", &shared).ok());
  bool seen = false;
  for (const WorkerReport& r : c_->ListWorkers()) {
    if (r.w.id == static_cast<int64_t>(a)) {
      EXPECT_EQ(r.w.token_name, "box-a");
      seen = true;
    }
    if (r.w.id == static_cast<int64_t>(shared)) EXPECT_EQ(r.w.token_name, "");
  }
  EXPECT_TRUE(seen);

  v1::LeaseResponse lease;
  EXPECT_EQ(Lease(worker_b_, a, &lease).error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Lease(kShared, a, &lease).error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Lease(worker_a_, shared, &lease).error_code(), StatusCode::PERMISSION_DENIED);
  ASSERT_TRUE(Lease(worker_a_, a, &lease).ok());
  ASSERT_TRUE(lease.has_unit());
  EXPECT_EQ(Heartbeat(worker_b_, a, lease).error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(Heartbeat(worker_a_, a, lease).ok());
  EXPECT_EQ(Release(worker_b_, a, lease).error_code(), StatusCode::PERMISSION_DENIED);
  {
    grpc::ClientContext ctx;
    client::AddToken(&ctx, worker_b_);
    v1::CompleteRequest req;
    req.set_worker_id(a);
    req.set_unit_id(lease.unit().unit_id());
    req.set_lease_token(lease.lease_token());
    v1::CompleteResponse resp;
    EXPECT_EQ(worker_stub_->Complete(&ctx, req, &resp).error_code(), StatusCode::PERMISSION_DENIED);
  }
  EXPECT_TRUE(Release(worker_a_, a, lease).ok());
  v1::LeaseResponse shared_lease;
  EXPECT_TRUE(Lease(kShared, shared, &shared_lease).ok());  // the one-machine set-up as before

  // Revoked: refused from the next call on, the worker's own calls too.
  ASSERT_TRUE(auth_->RevokeToken("box-a").ok());
  EXPECT_EQ(Lease(worker_a_, a, &lease).error_code(), StatusCode::UNAUTHENTICATED);
  uint64_t again = 0;
  EXPECT_EQ(Register(worker_a_, "node-a", &again).error_code(), StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(Lease(worker_b_, b, &lease).ok());
}

}  // namespace
}  // namespace collatz::server
