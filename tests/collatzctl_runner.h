// Runs the collatzctl binary (COLLATZCTL_PATH) as a child process and captures what it
// printed, for the end-to-end tests. The process and file helpers come from
// tests/support (shared with the worker's end-to-end tests).
#pragma once

#include <string>
#include <vector>

#include "tests/support/child_process.h"
#include "tests/support/temp_dir.h"

namespace collatz::e2e {

using test_support::ChildProcess;
using test_support::FileExists;
using test_support::ReadFileOrEmpty;
using test_support::TempDir;

struct Completed {
  int exit_code = -1;  // 128 + signal if killed
  std::string out;
  std::string err;
};

// Runs collatzctl with `args` in directory `cwd` (empty: the current one) to the end.
Completed RunCollatzctl(const std::vector<std::string>& args, const std::string& cwd = "");

// Starts collatzctl with `args`, stdout and stderr to the given files.
inline ChildProcess StartCollatzctl(const std::vector<std::string>& args, const std::string& out_path,
                                    const std::string& err_path, const std::string& cwd = "") {
  return ChildProcess(COLLATZCTL_PATH, args, out_path, err_path, cwd);
}

std::string Describe(const Completed& c);

// "127.0.0.1:PORT" from a collatz-server's start line once it has printed "(port PORT)"
// (waits up to 60 s for it); empty if it never does.
std::string WaitForServerAddress(ChildProcess& server);

}  // namespace collatz::e2e
