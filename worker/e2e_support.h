// For the end-to-end tests: child processes (collatz-server, collatz-worker) with their
// output in a log file, a temporary directory, and an Admin client for the server.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "core/unit.h"
#include "proto/collatz.grpc.pb.h"

namespace collatz::worker::e2e {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string ReadFileOrEmpty(const std::string& path);
size_t CountOccurrences(const std::string& text, const std::string& what);

// A child process with stdout and stderr appended to `log_path`.
class Child {
 public:
  Child(const std::string& binary, const std::vector<std::string>& args, const std::string& log_path);
  ~Child();  // SIGKILLs a child still running
  pid_t pid() const { return pid_; }
  void Signal(int sig);
  // Exit status, 128 + signal when killed, or -1 if still running after timeout_ms.
  int Wait(int timeout_ms);
  bool running();
  std::string log() const { return ReadFileOrEmpty(log_path_); }
  // Waits until the log holds `text` `times` times; false on timeout or exit.
  bool WaitForLog(const std::string& text, int timeout_ms, size_t times = 1);

 private:
  pid_t pid_ = -1;
  int status_ = -1;
  std::string log_path_;
};

// collatz-server on 127.0.0.1 with a database in `dir`; port 0 picks a free one.
class Server {
 public:
  Server(const std::string& dir, int port, const std::string& log_name, const std::vector<std::string>& extra = {});
  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  Child& child() { return *child_; }
  bool ok() const { return port_ > 0; }

  v1::SubmitResponse Submit(u128 begin, u128 end, u128 unit_size);
  v1::StatusResponse Status();
  // The final records of a kind (delay: ascending n; class: ascending delay).
  std::vector<Record> FinalRecords(v1::RecordKind kind, u128* covered_prefix);
  // Polls Status until every unit is finished; false on timeout.
  bool WaitAllFinished(int timeout_ms);

 private:
  std::unique_ptr<Child> child_;
  int port_ = 0;
  std::unique_ptr<v1::Admin::Stub> admin_;
};

}  // namespace collatz::worker::e2e
