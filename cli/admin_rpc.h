// Calls on the coordinator's Admin service, shared by collatzctl's client commands
// (admin_commands.cc, fleet_commands.cc): the connection flags every one of them takes,
// connecting, and gRPC errors turned into a sentence and an exit code.
#pragma once

#include <grpcpp/grpcpp.h>

#include <CLI/CLI.hpp>
#include <string>

#include "client/admin_client.h"
#include "proto/collatz.grpc.pb.h"

namespace collatz::cli {

struct Connection {
  std::string server;
  std::string token_file;
  std::string tls_ca;
  int timeout_s = 60;
};

// --server, --token-file, --tls-ca and --timeout on `cmd`, written into *c.
void AddConnectionFlags(CLI::App* cmd, Connection* c);

using Client = client::AdminClient;

// Connects, or prints why not and returns an exit code (> 0).
int Connect(const std::string& cmd, const Connection& c, Client* out);

// A gRPC error as a sentence; the exit code: usage for refused input, failure otherwise.
int RpcError(const std::string& cmd, const Client& client, const grpc::Status& st);

// One call on a connected client, with its token and deadline.
template <typename Request, typename Response>
grpc::Status Invoke(const Client& client,
                    grpc::Status (v1::Admin::Stub::*method)(grpc::ClientContext*, const Request&, Response*),
                    const Request& req, Response* resp) {
  grpc::ClientContext ctx;
  client.Prepare(&ctx);
  return (client.stub.get()->*method)(&ctx, req, resp);
}

// Connects and makes one call: 0, or the exit code after printing why it failed.
template <typename Request, typename Response>
int Call(const std::string& cmd, const Connection& c,
         grpc::Status (v1::Admin::Stub::*method)(grpc::ClientContext*, const Request&, Response*), const Request& req,
         Response* resp) {
  Client client;
  if (int rc = Connect(cmd, c, &client)) return rc;
  const grpc::Status gs = Invoke(client, method, req, resp);
  return gs.ok() ? 0 : RpcError(cmd, client, gs);
}

}  // namespace collatz::cli
