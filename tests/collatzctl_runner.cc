#include "tests/collatzctl_runner.h"

#include <regex>

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

std::string WaitForServerAddress(ChildProcess& server) {
  if (!server.WaitForOutput("(port ", 60000)) return "";
  std::smatch m;
  const std::string log = server.output();
  if (!std::regex_search(log, m, std::regex(R"(\(port (\d+)\))"))) return "";
  return "127.0.0.1:" + m[1].str();
}

std::string Describe(const Completed& c) {
  return "exit " + std::to_string(c.exit_code) + "\n--- stdout (first 2000) ---\n" + c.out.substr(0, 2000) +
         "\n--- stderr ---\n" + c.err;
}

}  // namespace collatz::e2e
