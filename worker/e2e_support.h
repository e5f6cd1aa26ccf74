// For the worker's end-to-end tests: collatz-server as a child process with an Admin
// client for it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/unit.h"
#include "proto/collatz.grpc.pb.h"
#include "tests/support/child_process.h"
#include "tests/support/temp_dir.h"

namespace collatz::worker::e2e {

// Child processes, temporary directories and file helpers: tests/support, shared with
// collatzctl's end-to-end tests. A Child's stdout and stderr go to one log file.
using Child = test_support::ChildProcess;
using test_support::CountOccurrences;
using test_support::ReadFileOrEmpty;
using test_support::TempDir;

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
