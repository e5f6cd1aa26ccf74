#include "tests/support/child_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "tests/support/temp_dir.h"

namespace collatz::test_support {

ChildProcess::ChildProcess(const std::string& binary, const std::vector<std::string>& args,
                           const std::string& stdout_path, const std::string& stderr_path, const std::string& cwd)
    : stdout_path_(stdout_path), stderr_path_(stderr_path) {
  // Everything the child needs is prepared before fork: after it, only async-signal-safe
  // calls (the test process may have threads, e.g. gRPC's).
  std::vector<std::string> argv_store = {binary};
  argv_store.insert(argv_store.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_store) argv.push_back(a.data());
  argv.push_back(nullptr);
  const bool one_file = stdout_path == stderr_path;

  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ > 0) return;
  const int out = ::open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  const int err = one_file ? out : ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (out < 0 || err < 0) ::_exit(126);
  ::dup2(out, STDOUT_FILENO);
  ::dup2(err, STDERR_FILENO);
  if (out > STDERR_FILENO) ::close(out);
  if (!one_file && err > STDERR_FILENO) ::close(err);
  // Signals blocked or ignored in the test runner must not stay so in the child.
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT}) ::signal(sig, SIG_DFL);
  if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
  ::execv(argv[0], argv.data());
  ::_exit(127);
}

ChildProcess::~ChildProcess() {
  if (running()) {
    Signal(SIGKILL);
    Wait();
  }
}

void ChildProcess::Signal(int sig) {
  if (pid_ > 0 && status_ < 0) ::kill(pid_, sig);
}

bool ChildProcess::running() {
  if (pid_ <= 0 || status_ >= 0) return false;
  return Wait(0) < 0;
}

int ChildProcess::Wait(int timeout_ms) {
  if (status_ >= 0 || pid_ <= 0) return status_;
  auto reaped = [this](int st) {
    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return status_;
  };
  if (timeout_ms < 0) {
    int st = 0;
    while (::waitpid(pid_, &st, 0) < 0) {
      if (errno != EINTR) return -1;
    }
    return reaped(st);
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    int st = 0;
    if (::waitpid(pid_, &st, WNOHANG) == pid_) return reaped(st);
    if (std::chrono::steady_clock::now() >= until) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string ChildProcess::output() const { return ReadFileOrEmpty(stdout_path_); }
std::string ChildProcess::errors() const { return ReadFileOrEmpty(stderr_path_); }

bool ChildProcess::WaitForOutput(const std::string& text, int timeout_ms, size_t times) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    // Whether it still runs is asked before the output is read: what it wrote before it
    // exited is then always seen.
    const bool alive = running();
    if (CountOccurrences(output(), text) >= times) return true;
    if (!alive || std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

int FreeTcpPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

}  // namespace collatz::test_support
