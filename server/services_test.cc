// The gRPC services in-process on 127.0.0.1: token checks, precise status codes, oversized
// messages, garbage bytes on the port, health.
#include "server/services.h"

#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/client_unary_call.h>
#include <grpcpp/health_check_service_interface.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/work_hash.h"
#include "proto/wire.h"
#include "client/channel.h"
#include "client/worker_client.h"

namespace collatz::server {
namespace {

using grpc::StatusCode;

const client::WorkerIdentity kIdentity{"h", {}, "", "", "cpu", 12};

constexpr const char* kToken = "s3cret-token-for-tests";

class ServicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(SearchTables::Build(12, 12, 16, &tables_).ok());
    dir_ = std::filesystem::temp_directory_path() / ("svc_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::unique_ptr<CoordinatorStore> store;
    ASSERT_TRUE(CoordinatorStore::Open((dir_ / "s.db").string(), &store).ok());
    ASSERT_TRUE(Coordinator::Open(std::move(store), tables_, &clock_, CoordinatorOptions(), &c_).ok());
    auth_ = std::make_unique<TokenAuth>(kToken);
    worker_ = std::make_unique<WorkerService>(c_.get(), auth_.get());
    admin_ = std::make_unique<AdminService>(c_.get(), auth_.get());
    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder b;
    b.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    b.SetMaxReceiveMessageSize(1 << 20);
    b.RegisterService(worker_.get());
    b.RegisterService(admin_.get());
    server_ = b.BuildAndStart();
    ASSERT_NE(port_, 0);
    address_ = "127.0.0.1:" + std::to_string(port_);
    channel_ = grpc::CreateChannel(address_, grpc::InsecureChannelCredentials());
    admin_stub_ = v1::Admin::NewStub(channel_);
  }
  void TearDown() override {
    server_->Shutdown();
    std::string ic;
    ASSERT_TRUE(c_->IntegrityCheck(&ic).ok());
    EXPECT_EQ(ic, "ok");
    c_.reset();
    std::filesystem::remove_all(dir_);
  }

  grpc::Status Submit(const std::string& token, u128 begin, u128 end, v1::Kinds kinds = v1::KINDS_DELAY) {
    grpc::ClientContext ctx;
    client::AddToken(&ctx, token);
    v1::SubmitRequest req;
    wire::ToWire(begin, req.mutable_begin());
    wire::ToWire(end, req.mutable_end());
    req.set_kinds(kinds);
    v1::SubmitResponse resp;
    return admin_stub_->Submit(&ctx, req, &resp);
  }
  v1::StatusResponse GetStatus() {
    grpc::ClientContext ctx;  // no token: read-only queries are open
    v1::StatusResponse resp;
    EXPECT_TRUE(admin_stub_->Status(&ctx, v1::StatusRequest(), &resp).ok());
    return resp;
  }

  std::shared_ptr<const SearchTables> tables_;
  std::filesystem::path dir_;
  FakeClock clock_;
  std::unique_ptr<Coordinator> c_;
  std::unique_ptr<TokenAuth> auth_;
  std::unique_ptr<WorkerService> worker_;
  std::unique_ptr<AdminService> admin_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::string address_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Admin::Stub> admin_stub_;
};

TEST_F(ServicesTest, TokenIsRequiredForChangesButNotForQueries) {
  EXPECT_EQ(Submit("", 1, 1000).error_code(), StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Submit("wrong", 1, 1000).error_code(), StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Submit(std::string(kToken) + "x", 1, 1000).error_code(), StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(GetStatus().units_pending(), 0u);
  client::WorkerClient anonymous(channel_, "", kIdentity);
  EXPECT_EQ(anonymous.Register().error_code(), StatusCode::UNAUTHENTICATED);
  client::WorkerClient wrong(channel_, "nope", kIdentity);
  EXPECT_EQ(wrong.Register().error_code(), StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(c_->ListWorkers().empty());
  // The error message never echoes a token.
  grpc::Status st = Submit("wrong-token-text", 1, 1000);
  EXPECT_EQ(st.error_message().find("wrong-token-text"), std::string::npos);

  ASSERT_TRUE(Submit(kToken, 1, 1000).ok());
  EXPECT_EQ(GetStatus().units_pending(), 1u);
  grpc::ClientContext ctx;
  v1::QueryRecordsRequest q;
  q.set_kind(v1::RECORD_KIND_DELAY);
  v1::QueryRecordsResponse qr;
  EXPECT_TRUE(admin_stub_->QueryRecords(&ctx, q, &qr).ok());
}

// A worker binary from before the work hash version sends none (0): refused at Register.
TEST_F(ServicesTest, RegisterRefusesAnotherWorkHashVersion) {
  auto stub = v1::Worker::NewStub(channel_);
  v1::RegisterRequest req;
  req.set_host("old");
  req.set_backend("cpu");
  req.set_sieve_bits(12);
  v1::RegisterResponse resp;
  {
    grpc::ClientContext ctx;
    client::AddToken(&ctx, kToken);
    grpc::Status st = stub->Register(&ctx, req, &resp);
    EXPECT_EQ(st.error_code(), StatusCode::FAILED_PRECONDITION);
    EXPECT_NE(st.error_message().find("work hash version 0"), std::string::npos) << st.error_message();
  }
  EXPECT_TRUE(c_->ListWorkers().empty());
  req.set_work_hash_version(kWorkHashVersion);
  grpc::ClientContext ctx;
  client::AddToken(&ctx, kToken);
  ASSERT_TRUE(stub->Register(&ctx, req, &resp).ok());
  ASSERT_EQ(c_->ListWorkers().size(), 1u);
  EXPECT_EQ(c_->ListWorkers()[0].w.work_hash_version, kWorkHashVersion);
}

// The build flavour crosses the wire: a test build is refused (no --allow-test-builds here).
TEST_F(ServicesTest, RegisterRefusesATestBuild) {
  auto stub = v1::Worker::NewStub(channel_);
  v1::RegisterRequest req;
  req.set_host("tester");
  req.set_backend("cpu");
  req.set_sieve_bits(12);
  req.set_work_hash_version(kWorkHashVersion);
  req.set_unit_sieve_bits(true);
  req.set_build_flavour("test");
  v1::RegisterResponse resp;
  grpc::ClientContext ctx;
  client::AddToken(&ctx, kToken);
  grpc::Status st = stub->Register(&ctx, req, &resp);
  EXPECT_EQ(st.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(st.error_message().find("is a test build"), std::string::npos) << st.error_message();
  EXPECT_TRUE(c_->ListWorkers().empty());
}

TEST_F(ServicesTest, BadRequestsGetPreciseCodes) {
  EXPECT_EQ(Submit(kToken, 5, 5).error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Submit(kToken, 9, 5).error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Submit(kToken, 1, 9, v1::KINDS_UNSPECIFIED).error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Submit(kToken, 1, 9, static_cast<v1::Kinds>(77)).error_code(), StatusCode::INVALID_ARGUMENT);
  ASSERT_TRUE(Submit(kToken, 1, 4096).ok());
  EXPECT_EQ(Submit(kToken, 1, 4096).error_code(), StatusCode::ALREADY_EXISTS);
  client::WorkerClient w(channel_, kToken, kIdentity);
  ASSERT_TRUE(w.Register().ok());
  client::Lease lease;
  bool has_unit = false;
  uint64_t retry_after_ms = 0;
  // LeaseRequest.max_unit_numbers: a unit of 4095 numbers is too large for a limit of 4094.
  w.set_max_unit_numbers(4094);
  ASSERT_TRUE(w.LeaseUnit(&lease, &has_unit, &retry_after_ms).ok());
  EXPECT_FALSE(has_unit);
  w.set_max_unit_numbers(4095);
  ASSERT_TRUE(w.LeaseUnit(&lease, &has_unit, &retry_after_ms).ok());
  ASSERT_TRUE(has_unit);
  EXPECT_TRUE(lease.spec.begin == 1 && lease.spec.end == 4096);
  {
    // ListWorkers reports the limit of the worker's last lease request.
    grpc::ClientContext ctx;
    client::AddToken(&ctx, kToken);
    v1::ListWorkersResponse resp;
    ASSERT_TRUE(admin_stub_->ListWorkers(&ctx, v1::ListWorkersRequest(), &resp).ok());
    ASSERT_EQ(resp.workers_size(), 1);
    ASSERT_TRUE(resp.workers(0).has_max_unit_numbers());
    EXPECT_TRUE(wire::FromWire(resp.workers(0).max_unit_numbers()) == 4095);
  }
  client::Lease unknown = lease;
  unknown.unit_id = 777;
  EXPECT_EQ(w.Complete(unknown, UnitResult(), 1, "cpu", nullptr).error_code(), StatusCode::NOT_FOUND);
  client::Lease stale = lease;
  stale.token = std::string(32, '0');
  EXPECT_EQ(w.Complete(stale, UnitResult(), 1, "cpu", nullptr).error_code(), StatusCode::FAILED_PRECONDITION);
  stale.token = "";
  EXPECT_EQ(w.Complete(stale, UnitResult(), 1, "cpu", nullptr).error_code(), StatusCode::INVALID_ARGUMENT);
  {
    grpc::ClientContext ctx;
    client::AddToken(&ctx, kToken);
    v1::CancelRequest req;
    req.set_submission_id(4242);
    v1::CancelResponse resp;
    EXPECT_EQ(admin_stub_->Cancel(&ctx, req, &resp).error_code(), StatusCode::NOT_FOUND);
  }
  {
    grpc::ClientContext ctx;
    v1::QueryRecordsRequest q;  // kind unspecified
    v1::QueryRecordsResponse qr;
    EXPECT_EQ(admin_stub_->QueryRecords(&ctx, q, &qr).error_code(), StatusCode::INVALID_ARGUMENT);
  }
  // Oversized message: refused by gRPC before it reaches the coordinator.
  {
    grpc::ClientContext ctx;
    client::AddToken(&ctx, kToken);
    v1::ImportRequest req;
    req.set_source(std::string(2 << 20, 'x'));
    v1::ImportResponse resp;
    EXPECT_EQ(admin_stub_->Import(&ctx, req, &resp).error_code(), StatusCode::RESOURCE_EXHAUSTED);
  }
  const v1::StatusResponse s = GetStatus();
  EXPECT_EQ(s.units_leased(), 1u);
  EXPECT_EQ(s.units_finished(), 0u);
  EXPECT_EQ(wire::FromWire(s.covered_prefix()), static_cast<u128>(1));
}

TEST_F(ServicesTest, GarbageBytesOnThePortLeaveTheServerServing) {
  for (const std::string& junk : {std::string("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), std::string(4096, '\xff'),
                                  std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + std::string(100, '\x07')}) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port_));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_GT(::write(fd, junk.data(), junk.size()), 0);
    char buf[256];
    timeval tv{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    (void)!::read(fd, buf, sizeof buf);
    ::close(fd);
  }
  EXPECT_TRUE(Submit(kToken, 1, 100).ok());
  EXPECT_EQ(GetStatus().units_pending(), 1u);
  // The health service answers SERVING (HealthCheckResponse{status: 1} is bytes 08 01).
  grpc::ClientContext ctx;
  grpc::ByteBuffer request, response;
  grpc::Slice empty("", 0);
  request = grpc::ByteBuffer(&empty, 1);
  grpc::Status st = grpc::internal::BlockingUnaryCall<grpc::ByteBuffer, grpc::ByteBuffer>(
      channel_.get(), grpc::internal::RpcMethod("/grpc.health.v1.Health/Check", nullptr, grpc::internal::RpcMethod::NORMAL_RPC),
      &ctx, request, &response);
  ASSERT_TRUE(st.ok()) << st.error_message();
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(response.Dump(&slices).ok());
  std::string bytes;
  for (const auto& sl : slices) bytes.append(reinterpret_cast<const char*>(sl.begin()), sl.size());
  EXPECT_EQ(bytes, std::string("\x08\x01", 2));
}


// Optional TLS: a self-signed certificate for localhost made with openssl at test time.
TEST(TlsTest, TokenAndQueriesWorkOverTlsAndPlaintextClientsAreRefused) {
  const auto dir = std::filesystem::temp_directory_path() / ("tls_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string cert = (dir / "cert.pem").string(), key = (dir / "key.pem").string();
  const std::string cmd = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost "
                          "-addext subjectAltName=DNS:localhost -keyout " + key + " -out " + cert + " 2>/dev/null";
  if (std::system(cmd.c_str()) != 0) GTEST_SKIP() << "openssl not available";
  auto read = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  std::shared_ptr<const SearchTables> tables;
  ASSERT_TRUE(SearchTables::Build(12, 12, 16, &tables).ok());
  std::unique_ptr<CoordinatorStore> store;
  ASSERT_TRUE(CoordinatorStore::Open((dir / "t.db").string(), &store).ok());
  FakeClock clock;
  std::unique_ptr<Coordinator> c;
  ASSERT_TRUE(Coordinator::Open(std::move(store), tables, &clock, CoordinatorOptions(), &c).ok());
  TokenAuth auth(kToken);
  WorkerService ws(c.get(), &auth);
  AdminService as(c.get(), &auth);
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({read(key), read(cert)});
  grpc::ServerBuilder b;
  int port = 0;
  b.AddListeningPort("127.0.0.1:0", grpc::SslServerCredentials(ssl), &port);
  b.RegisterService(&ws);
  b.RegisterService(&as);
  auto server = b.BuildAndStart();
  ASSERT_NE(port, 0);
  const std::string address = "localhost:" + std::to_string(port);

  std::shared_ptr<grpc::Channel> tls;
  ASSERT_TRUE(client::MakeChannel(address, cert, &tls).ok());
  client::WorkerClient w(tls, kToken, kIdentity);
  ASSERT_TRUE(w.Register().ok());
  EXPECT_EQ(client::WorkerClient(tls, "wrong", kIdentity).Register().error_code(), StatusCode::UNAUTHENTICATED);
  std::shared_ptr<grpc::Channel> plain;
  ASSERT_TRUE(client::MakeChannel(address, "", &plain).ok());
  client::WorkerClient p(plain, kToken, kIdentity, 3000);
  EXPECT_EQ(p.Register().error_code(), StatusCode::UNAVAILABLE);
  EXPECT_EQ(c->ListWorkers().size(), 1u);
  server->Shutdown();
  c.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace collatz::server
