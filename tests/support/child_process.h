// For end-to-end tests: a real binary run as a child process, its stdout and stderr in
// files, signalled, waited for with a timeout, and killed if a test leaves it running.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

namespace collatz::test_support {

class ChildProcess {
 public:
  // Starts `binary` with `args` in `cwd` (empty: this process's); stdout and stderr are
  // appended to the two files (created if missing; one file for both when the paths are
  // equal). The child starts with no signals blocked and the default signal dispositions.
  ChildProcess(const std::string& binary, const std::vector<std::string>& args, const std::string& stdout_path,
               const std::string& stderr_path, const std::string& cwd = "");
  // Both streams to one log file.
  ChildProcess(const std::string& binary, const std::vector<std::string>& args, const std::string& log_path)
      : ChildProcess(binary, args, log_path, log_path) {}
  ~ChildProcess();  // SIGKILLs and reaps a child still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Sends `sig` unless the child was already reaped.
  void Signal(int sig);
  // The exit status, or 128 + signal when a signal ended it; -1 if it is still running
  // after timeout_ms (a negative timeout waits as long as it takes).
  int Wait(int timeout_ms = -1);
  bool running();

  std::string output() const;  // what it wrote to stdout so far (the log, with one file)
  std::string errors() const;  // likewise stderr
  // Waits until stdout holds `text` at least `times` times; false on timeout, or when the
  // child exited without writing it.
  bool WaitForOutput(const std::string& text, int timeout_ms, size_t times = 1);

 private:
  pid_t pid_ = -1;
  int status_ = -1;  // set once reaped
  std::string stdout_path_, stderr_path_;
};

// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then closed), or
// -1. Another process may take it before the caller binds it; prefer letting a server
// bind port 0 itself and report it, where it can.
int FreeTcpPort();

}  // namespace collatz::test_support
