#include "tests/collatzctl_runner.h"

namespace collatz::e2e {

Completed RunCollatzctl(const std::vector<std::string>& args, const std::string& cwd) {
  TempDir io;
  ChildProcess child = StartCollatzctl(args, io.File("stdout"), io.File("stderr"), cwd);
  Completed c;
  c.exit_code = child.Wait();
  c.out = child.output();
  c.err = child.errors();
  return c;
}

std::string Describe(const Completed& c) {
  return "exit " + std::to_string(c.exit_code) + "\n--- stdout (first 2000) ---\n" + c.out.substr(0, 2000) +
         "\n--- stderr ---\n" + c.err;
}

}  // namespace collatz::e2e
