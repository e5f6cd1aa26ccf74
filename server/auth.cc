#include "server/auth.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

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

namespace {
std::string Trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r\n");
  if (a == std::string::npos) return "";
  const size_t b = s.find_last_not_of(" \t\r\n");
  return s.substr(a, b - a + 1);
}
}  // namespace

Status LoadToken(const std::string& file, std::string* token) {
  token->clear();
  if (!file.empty()) {
    std::ifstream in(file);
    if (!in) return Status::IOError("cannot read token file " + file);
    std::string line;
    std::getline(in, line);
    *token = Trim(line);
    if (token->empty()) return Status::InvalidArgument("token file " + file + " is empty");
    return Status::Ok();
  }
  if (const char* env = std::getenv(kTokenEnvVar); env != nullptr) *token = Trim(env);
  return Status::Ok();
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

void AddToken(grpc::ClientContext* context, const std::string& token) {
  if (!token.empty()) context->AddMetadata("authorization", "Bearer " + token);
}

Status MakeChannel(const std::string& address, const std::string& ca_file, std::shared_ptr<grpc::Channel>* out) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  std::shared_ptr<grpc::ChannelCredentials> creds;
  if (ca_file.empty()) {
    creds = grpc::InsecureChannelCredentials();
  } else {
    std::ifstream in(ca_file);
    if (!in) return Status::IOError("cannot read CA certificate " + ca_file);
    std::stringstream ss;
    ss << in.rdbuf();
    grpc::SslCredentialsOptions opts;
    opts.pem_root_certs = ss.str();
    creds = grpc::SslCredentials(opts);
  }
  *out = grpc::CreateCustomChannel(address, creds, args);
  return Status::Ok();
}

}  // namespace collatz::server
