#include "client/admin_client.h"

#include <cstdlib>

#include "client/channel.h"

namespace collatz::client {

Status AdminClient::Connect(const std::string& server, const std::string& token_file, const std::string& tls_ca,
                            std::chrono::milliseconds timeout, AdminClient* out) {
  out->server = server;
  if (out->server.empty()) {
    const char* env = std::getenv(kServerEnvVar);
    out->server = env != nullptr && *env != '\0' ? env : kDefaultServerAddress;
  }
  Status st = LoadToken(token_file, &out->token);
  if (!st.ok()) return st;
  std::shared_ptr<grpc::Channel> channel;
  if (!(st = MakeChannel(out->server, tls_ca, &channel)).ok()) return st;
  out->stub = v1::Admin::NewStub(channel);
  out->timeout = timeout;
  return Status::Ok();
}

void AdminClient::Prepare(grpc::ClientContext* ctx) const { PrepareCall(ctx, token, timeout); }

}  // namespace collatz::client
