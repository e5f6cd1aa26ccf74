#include "server/auth.h"

#include <algorithm>

namespace collatz::server {

bool ConstantTimeEquals(const std::string& a, const std::string& b) {
  volatile unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff = diff | (x ^ y);
  }
  return diff == 0;
}

grpc::Status TokenAuth::Check(const grpc::ServerContext* context) const {
  if (token_.empty()) return grpc::Status::OK;
  const auto& md = context->client_metadata();
  auto it = md.find("authorization");
  if (it == md.end()) return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "missing token (authorization: Bearer ...)");
  const std::string value(it->second.data(), it->second.size());
  const std::string prefix = "Bearer ";
  if (value.compare(0, prefix.size(), prefix) != 0 || !ConstantTimeEquals(value.substr(prefix.size()), token_)) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "wrong token");
  }
  return grpc::Status::OK;
}

}  // namespace collatz::server
