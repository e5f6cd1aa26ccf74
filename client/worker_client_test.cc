// The worker's side of registration against a fake server: a server of another work hash
// version (or one from before versions) is refused, so a new worker never feeds an old server.
#include "client/worker_client.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>

#include "core/work_hash.h"
#include "proto/collatz.grpc.pb.h"

namespace collatz::client {
namespace {

class FakeWorkerService final : public v1::Worker::Service {
 public:
  explicit FakeWorkerService(uint32_t version) : version_(version) {}
  grpc::Status Register(grpc::ServerContext*, const v1::RegisterRequest* req, v1::RegisterResponse* resp) override {
    seen_version_ = req->work_hash_version();
    resp->set_worker_id(7);
    resp->set_sieve_bits(req->sieve_bits());
    resp->set_lease_duration_ms(1000);
    if (version_ != 0) resp->set_work_hash_version(version_);  // 0: a server that predates the field
    return grpc::Status::OK;
  }
  uint32_t seen_version_ = 0;

 private:
  uint32_t version_;
};

grpc::Status RegisterWith(FakeWorkerService* service, Registration* reg) {
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  EXPECT_NE(server, nullptr);
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials());
  WorkerIdentity identity;
  identity.host = "test";
  identity.backend = "cpu";
  identity.sieve_bits = 12;
  WorkerClient client(channel, "token", identity);
  grpc::Status st = client.Register(reg);
  server->Shutdown();
  return st;
}

TEST(WorkerClient, RefusesAServerOfAnotherWorkHashVersion) {
  for (uint32_t version : {0u, kWorkHashVersion + 1}) {
    FakeWorkerService service(version);
    Registration reg;
    const grpc::Status st = RegisterWith(&service, &reg);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << version;
    EXPECT_NE(st.error_message().find("upgrade the server first"), std::string::npos) << st.error_message();
    EXPECT_FALSE(IsTransient(st));  // the daemon exits and keeps its spool
    EXPECT_EQ(service.seen_version_, kWorkHashVersion);
  }
  FakeWorkerService same(kWorkHashVersion);
  Registration reg;
  ASSERT_TRUE(RegisterWith(&same, &reg).ok());
  EXPECT_EQ(reg.worker_id, 7u);
}

}  // namespace
}  // namespace collatz::client
