#include "cli/admin_rpc.h"

#include <chrono>
#include <cstdio>

#include "cli/cli_util.h"
#include "cli/exit_codes.h"

namespace collatz::cli {

void AddConnectionFlags(CLI::App* cmd, Connection* c) {
  cmd->add_option("--server", c->server, "Server address host:port (default: $COLLATZ_SERVER or 127.0.0.1:50051)");
  cmd->add_option("--token-file", c->token_file, "File with the access token (default: $COLLATZ_TOKEN)");
  cmd->add_option("--tls-ca", c->tls_ca, "PEM root certificate: connect with TLS");
  cmd->add_option("--timeout", c->timeout_s, "Seconds to wait for the server")->capture_default_str();
}

int Connect(const std::string& cmd, const Connection& c, Client* out) {
  Status st = Client::Connect(c.server, c.token_file, c.tls_ca, std::chrono::seconds(c.timeout_s), out);
  return st.ok() ? 0 : Failure(cmd, st);
}

int RpcError(const std::string& cmd, const Client& client, const grpc::Status& st) {
  std::string what;
  switch (st.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      what = "cannot reach the server at " + client.server + " (" + st.error_message() + ")";
      break;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      what = "the server at " + client.server + " did not answer in time";
      break;
    case grpc::StatusCode::UNAUTHENTICATED:
      what = "the server refused the token (" + st.error_message() +
             "); give --token-file or set COLLATZ_TOKEN";
      break;
    case grpc::StatusCode::PERMISSION_DENIED: what = "permission denied: " + st.error_message(); break;
    case grpc::StatusCode::INVALID_ARGUMENT: what = "invalid request: " + st.error_message(); break;
    case grpc::StatusCode::ALREADY_EXISTS: what = "nothing to do: " + st.error_message(); break;
    case grpc::StatusCode::NOT_FOUND: what = "not found: " + st.error_message(); break;
    case grpc::StatusCode::FAILED_PRECONDITION: what = "refused: " + st.error_message(); break;
    case grpc::StatusCode::RESOURCE_EXHAUSTED: what = "request too large: " + st.error_message(); break;
    default: what = "server error (code " + std::to_string(st.error_code()) + "): " + st.error_message(); break;
  }
  std::fprintf(stderr, "collatzctl %s: %s\n", cmd.c_str(), what.c_str());
  const bool usage = st.error_code() == grpc::StatusCode::INVALID_ARGUMENT ||
                     st.error_code() == grpc::StatusCode::ALREADY_EXISTS ||
                     st.error_code() == grpc::StatusCode::NOT_FOUND;
  return usage ? kExitUsage : kExitFailure;
}

}  // namespace collatz::cli
