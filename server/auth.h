// Token authentication, the server side: workers and admin clients send
// "authorization: Bearer TOKEN" (client/channel.h); the token is compared in constant time
// and never logged or echoed. Read-only admin queries are allowed without it.
#pragma once

#include <grpcpp/grpcpp.h>

#include <string>

#include "core/status.h"

namespace collatz::server {

// Equal length and bytes, in time that depends only on the lengths.
bool ConstantTimeEquals(const std::string& a, const std::string& b);

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

}  // namespace collatz::server
