#include "worker/e2e_support.h"

#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "proto/wire.h"

namespace collatz::worker::e2e {

TempDir::TempDir() {
  char tmpl[] = "/tmp/collatz-worker-e2e-XXXXXX";
  if (mkdtemp(tmpl) != nullptr) path_ = tmpl;
}
TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty() && getenv("COLLATZ_KEEP_TEST_DIRS") == nullptr) std::filesystem::remove_all(path_, ec);
}

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

size_t CountOccurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + what.size())) ++n;
  return n;
}

Child::Child(const std::string& binary, const std::vector<std::string>& args, const std::string& log_path)
    : log_path_(log_path) {
  std::vector<std::string> argv_store = {binary};
  argv_store.insert(argv_store.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_store) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_ = fork();
  if (pid_ == 0) {
    int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    // Signals blocked in the test runner must not stay blocked in the child.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
}

Child::~Child() {
  if (running()) {
    Signal(SIGKILL);
    Wait(10000);
  }
}

void Child::Signal(int sig) {
  if (pid_ > 0 && status_ < 0) kill(pid_, sig);
}

bool Child::running() {
  if (pid_ <= 0 || status_ >= 0) return false;
  return Wait(0) < 0;
}

int Child::Wait(int timeout_ms) {
  if (status_ >= 0) return status_;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    int st = 0;
    const pid_t r = waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      return status_;
    }
    if (std::chrono::steady_clock::now() >= until) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

bool Child::WaitForLog(const std::string& text, int timeout_ms, size_t times) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < until) {
    if (CountOccurrences(log(), text) >= times) return true;
    if (!running()) return CountOccurrences(log(), text) >= times;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

Server::Server(const std::string& dir, int port, const std::string& log_name, const std::vector<std::string>& extra) {
  const std::string log_path = dir + "/" + log_name;
  std::vector<std::string> args = {"--db", dir + "/coordinator.db", "--listen", "127.0.0.1:" + std::to_string(port)};
  args.insert(args.end(), extra.begin(), extra.end());
  child_ = std::make_unique<Child>(COLLATZ_SERVER_BINARY, args, log_path);
  const std::regex port_re(R"(\(port (\d+)\))");
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < until && child_->running()) {
    std::smatch m;
    const std::string text = child_->log();
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
