// The gRPC services (collatz.v1.Worker and collatz.v1.Admin): thin adapters that check
// the token and its role (server/auth.h), convert wire messages and call the Coordinator.
// A worker id is usable only with the token it registered with.
#pragma once

#include "proto/collatz.grpc.pb.h"
#include "server/auth.h"
#include "server/coordinator.h"

namespace collatz::server {

class WorkerService final : public v1::Worker::Service {
 public:
  WorkerService(Coordinator* c, const TokenAuth* auth) : c_(c), auth_(auth) {}
  grpc::Status Register(grpc::ServerContext*, const v1::RegisterRequest*, v1::RegisterResponse*) override;
  grpc::Status Lease(grpc::ServerContext*, const v1::LeaseRequest*, v1::LeaseResponse*) override;
  grpc::Status Heartbeat(grpc::ServerContext*, const v1::HeartbeatRequest*, v1::HeartbeatResponse*) override;
  grpc::Status Complete(grpc::ServerContext*, const v1::CompleteRequest*, v1::CompleteResponse*) override;
  grpc::Status Release(grpc::ServerContext*, const v1::ReleaseRequest*, v1::ReleaseResponse*) override;

 private:
  Coordinator* c_;
  const TokenAuth* auth_;
};

class AdminService final : public v1::Admin::Service {
 public:
  AdminService(Coordinator* c, TokenAuth* auth) : c_(c), auth_(auth) {}
  grpc::Status Submit(grpc::ServerContext*, const v1::SubmitRequest*, v1::SubmitResponse*) override;
  grpc::Status Cancel(grpc::ServerContext*, const v1::CancelRequest*, v1::CancelResponse*) override;
  grpc::Status Requeue(grpc::ServerContext*, const v1::RequeueRequest*, v1::RequeueResponse*) override;
  grpc::Status Status(grpc::ServerContext*, const v1::StatusRequest*, v1::StatusResponse*) override;
  grpc::Status ListWorkers(grpc::ServerContext*, const v1::ListWorkersRequest*, v1::ListWorkersResponse*) override;
  grpc::Status QueryRecords(grpc::ServerContext*, const v1::QueryRecordsRequest*, v1::QueryRecordsResponse*) override;
  grpc::Status Import(grpc::ServerContext*, const v1::ImportRequest*, v1::ImportResponse*) override;
  grpc::Status AddKnownPoints(grpc::ServerContext*, const v1::AddKnownPointsRequest*,
                              v1::AddKnownPointsResponse*) override;
  grpc::Status Export(grpc::ServerContext*, const v1::ExportRequest*, v1::ExportResponse*) override;
  grpc::Status Backup(grpc::ServerContext*, const v1::BackupRequest*, v1::BackupResponse*) override;
  grpc::Status SubmitStats(grpc::ServerContext*, const v1::SubmitStatsRequest*, v1::SubmitStatsResponse*) override;
  grpc::Status FetchStats(grpc::ServerContext*, const v1::FetchStatsRequest*, v1::FetchStatsResponse*) override;
  grpc::Status AddToken(grpc::ServerContext*, const v1::AddTokenRequest*, v1::AddTokenResponse*) override;
  grpc::Status ListTokens(grpc::ServerContext*, const v1::ListTokensRequest*, v1::ListTokensResponse*) override;
  grpc::Status RevokeToken(grpc::ServerContext*, const v1::RevokeTokenRequest*, v1::RevokeTokenResponse*) override;
  grpc::Status Unflag(grpc::ServerContext*, const v1::UnflagRequest*, v1::UnflagResponse*) override;

 private:
  Coordinator* c_;
  TokenAuth* auth_;
};

}  // namespace collatz::server
