#include "worker/e2e_support.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <regex>
#include <thread>

#include "proto/wire.h"

namespace collatz::worker::e2e {

Server::Server(const std::string& dir, int port, const std::string& log_name, const std::vector<std::string>& extra) {
  const std::string log_path = dir + "/" + log_name;
  std::vector<std::string> args = {"--db", dir + "/coordinator.db", "--listen", "127.0.0.1:" + std::to_string(port),
                                   "--double-check", "none"};  // one host: nobody to check it
  args.insert(args.end(), extra.begin(), extra.end());
  child_ = std::make_unique<Child>(COLLATZ_SERVER_BINARY, args, log_path);
  const std::regex port_re(R"(\(port (\d+)\))");
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < until && child_->running()) {
    std::smatch m;
    const std::string text = child_->output();
    if (std::regex_search(text, m, port_re)) {
      port_ = std::stoi(m[1]);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (port_ > 0) admin_ = v1::Admin::NewStub(grpc::CreateChannel(address(), grpc::InsecureChannelCredentials()));
}

v1::SubmitResponse Server::Submit(u128 begin, u128 end, u128 unit_size) {
  grpc::ClientContext ctx;
  v1::SubmitRequest req;
  wire::ToWire(begin, req.mutable_begin());
  wire::ToWire(end, req.mutable_end());
  wire::ToWire(unit_size, req.mutable_unit_size());
  req.set_kinds(v1::KINDS_DELAY_AND_CLASS);
  v1::SubmitResponse resp;
  grpc::Status st = admin_->Submit(&ctx, req, &resp);
  if (!st.ok()) resp.set_units(0);
  return resp;
}

v1::StatusResponse Server::Status() {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::StatusRequest req;
  v1::StatusResponse resp;
  admin_->Status(&ctx, req, &resp);
  return resp;
}

std::vector<Record> Server::FinalRecords(v1::RecordKind kind, u128* covered_prefix) {
  grpc::ClientContext ctx;
  v1::QueryRecordsRequest req;
  req.set_kind(kind);
  v1::QueryRecordsResponse resp;
  grpc::Status st = admin_->QueryRecords(&ctx, req, &resp);
  if (!st.ok()) return {};
  *covered_prefix = wire::FromWire(resp.covered_prefix());
  return wire::RecordsFromWire(resp.final_records());
}

bool Server::WaitAllFinished(int timeout_ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < until) {
    v1::StatusResponse s = Status();
    if (s.units_finished() > 0 && s.units_pending() == 0 && s.units_leased() == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

}  // namespace collatz::worker::e2e
