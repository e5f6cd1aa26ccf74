#include "tests/subprocess.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace collatz::e2e {

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

TempDir::TempDir() {
  char tmpl[] = "/tmp/collatzctl_e2e.XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() { std::filesystem::remove_all(path_); }

int StartCollatzctl(const std::vector<std::string>& args, const std::string& out_path, const std::string& err_path,
                    const std::string& cwd) {
  std::vector<std::string> argv_s = {COLLATZCTL_PATH};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0) ::_exit(126);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

int WaitForExit(int pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

Completed RunCollatzctl(const std::vector<std::string>& args, const std::string& cwd) {
  TempDir io;
  const std::string out_path = io.File("stdout"), err_path = io.File("stderr");
  Completed c;
  c.exit_code = WaitForExit(StartCollatzctl(args, out_path, err_path, cwd));
  c.out = ReadFileOrEmpty(out_path);
  c.err = ReadFileOrEmpty(err_path);
  return c;
}

std::string Describe(const Completed& c) {
  return "exit " + std::to_string(c.exit_code) + "\n--- stdout (first 2000) ---\n" + c.out.substr(0, 2000) +
         "\n--- stderr ---\n" + c.err;
}

}  // namespace collatz::e2e
