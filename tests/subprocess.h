// Runs the collatzctl binary as a child process and captures what it printed, for the
// end-to-end tests.
#pragma once

#include <string>
#include <vector>

namespace collatz::e2e {

struct Completed {
  int exit_code = -1;  // 128 + signal if killed
  std::string out;
  std::string err;
};

// Runs COLLATZCTL_PATH with `args` in directory `cwd` (empty: the current one).
Completed RunCollatzctl(const std::vector<std::string>& args, const std::string& cwd = "");

// Starts COLLATZCTL_PATH with `args`, stdout and stderr to the given files; returns the pid.
int StartCollatzctl(const std::vector<std::string>& args, const std::string& out_path, const std::string& err_path,
                    const std::string& cwd = "");
// Waits for a started child; returns its exit code, or 128 + signal.
int WaitForExit(int pid);

// A fresh, empty temporary directory removed by the destructor.
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
bool FileExists(const std::string& path);
std::string Describe(const Completed& c);

}  // namespace collatz::e2e
