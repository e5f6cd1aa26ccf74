// Token authentication: workers and admin clients send "authorization: Bearer TOKEN".
// The token comes from a file or an environment variable, is never logged, and is
// compared in constant time. Read-only admin queries are allowed without it.
#pragma once

#include <grpcpp/grpcpp.h>

#include <string>

#include "core/status.h"

namespace collatz::server {

constexpr const char* kTokenEnvVar = "COLLATZ_TOKEN";

// Equal length and bytes, in time that depends only on the lengths.
bool ConstantTimeEquals(const std::string& a, const std::string& b);

// Reads the token from `file` (first line, whitespace trimmed) or, when file is empty,
// from $COLLATZ_TOKEN; *token is empty when neither is given. An empty file is an error.
Status LoadToken(const std::string& file, std::string* token);

class TokenAuth {
 public:
  // An empty token turns authentication off.
  explicit TokenAuth(std::string token) : token_(std::move(token)) {}
  bool enabled() const { return !token_.empty(); }
  // OK, or UNAUTHENTICATED (missing or wrong token; the message never echoes it).
  grpc::Status Check(const grpc::ServerContext* context) const;

 private:
  std::string token_;
};

// Client side: adds the bearer token to a call (nothing if the token is empty).
void AddToken(grpc::ClientContext* context, const std::string& token);

// Client side: an insecure channel, or TLS when ca_file names a PEM root certificate.
Status MakeChannel(const std::string& address, const std::string& ca_file, std::shared_ptr<grpc::Channel>* out);

}  // namespace collatz::server
