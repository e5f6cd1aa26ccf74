// The client of the collatz.v1.Admin service for collatzctl's coordinator commands: the
// server address, the token and the channel resolved once, and each call prepared with
// the token and the deadline.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>

#include "core/status.h"
#include "proto/collatz.grpc.pb.h"

namespace collatz::client {

constexpr const char* kServerEnvVar = "COLLATZ_SERVER";
constexpr const char* kDefaultServerAddress = "127.0.0.1:50051";

struct AdminClient {
  std::unique_ptr<v1::Admin::Stub> stub;
  std::string token;
  std::string server;  // the address connected to, for messages
  std::chrono::milliseconds timeout{60000};

  // server: "" for $COLLATZ_SERVER, else 127.0.0.1:50051; token_file: "" for $COLLATZ_TOKEN;
  // tls_ca: "" for plaintext.
  static Status Connect(const std::string& server, const std::string& token_file, const std::string& tls_ca,
                        std::chrono::milliseconds timeout, AdminClient* out);
  void Prepare(grpc::ClientContext* ctx) const;
};

}  // namespace collatz::client
