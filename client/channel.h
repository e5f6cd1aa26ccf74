// The client side of a connection to collatz-server, for the worker and collatzctl: the
// access token (from a file or $COLLATZ_TOKEN, never logged), the channel (plaintext or
// TLS) and the per-call setup (bearer token and deadline). The server checks the token
// (server/auth.h).
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>

#include "core/status.h"

namespace collatz::client {

constexpr const char* kTokenEnvVar = "COLLATZ_TOKEN";

// Reads the token from `file` (first line, whitespace trimmed) or, when file is empty,
// from $COLLATZ_TOKEN; *token is empty when neither is given. An empty file is an error.
Status LoadToken(const std::string& file, std::string* token);

// Adds "authorization: Bearer TOKEN" to a call (nothing if the token is empty).
void AddToken(grpc::ClientContext* context, const std::string& token);

// Every call of a client: the token and a deadline `timeout` from now.
void PrepareCall(grpc::ClientContext* context, const std::string& token, std::chrono::milliseconds timeout);

// An insecure channel, or TLS when ca_file names a PEM root certificate.
Status MakeChannel(const std::string& address, const std::string& ca_file, std::shared_ptr<grpc::Channel>* out);

}  // namespace collatz::client
