#include "client/channel.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace collatz::client {

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

void AddToken(grpc::ClientContext* context, const std::string& token) {
  if (!token.empty()) context->AddMetadata("authorization", "Bearer " + token);
}

void PrepareCall(grpc::ClientContext* context, const std::string& token, std::chrono::milliseconds timeout) {
  AddToken(context, token);
  context->set_deadline(std::chrono::system_clock::now() + timeout);
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

}  // namespace collatz::client
