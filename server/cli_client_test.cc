// collatzctl's client commands against the real collatz-server binary on 127.0.0.1:
// exit codes and messages for refused input, a missing token and an unreachable server;
// import, status, server-records, export, backup, requeue, unflag and cancel.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/child_process.h"
#include "tests/support/temp_dir.h"

namespace {

struct CtlRun {
  int code = -1;
  std::string out;  // stdout and stderr
};

CtlRun Ctl(const std::string& args) {
  CtlRun r;
  const std::string cmd = std::string(COLLATZCTL_BINARY) + " " + args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(CollatzctlClient, CommandsAgainstTheRealServer) {
  collatz::test_support::TempDir dir;
  const std::string token_file = dir.File("token");
  std::ofstream(token_file) << "ctl-token\n";
  const int port = collatz::test_support::FreeTcpPort();
  ASSERT_GT(port, 0);
  const std::string address = "127.0.0.1:" + std::to_string(port);
  collatz::test_support::ChildProcess server(COLLATZ_SERVER_BINARY,
                                             {"--listen", address, "--db", dir.File("c.db"), "--token-file", token_file,
                                              "--unit-size", "2^20", "--sieve-bits", "16", "--double-check", "none"},
                                             dir.File("server.log"));
  const std::string s = " --server " + address;
  const std::string t = s + " --token-file " + token_file;
  CtlRun r;
  for (int i = 0; i < 300 && (r = Ctl("status" + s)).code != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("covered prefix   [1, 1)"), std::string::npos) << r.out;

  r = Ctl("submit --to 2^24" + s);  // no token
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("refused the token"), std::string::npos) << r.out;
  r = Ctl("submit --from 9 --to 5" + t);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("empty or reversed range"), std::string::npos) << r.out;
  r = Ctl("submit --to 2^128" + t);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("2^128"), std::string::npos) << r.out;
  r = Ctl("status --server 127.0.0.1:1 --timeout 5");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("cannot reach the server"), std::string::npos) << r.out;

  r = Ctl("submit --to 2^24" + t);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("submission 1: 16 units"), std::string::npos) << r.out;
  r = Ctl("submit --to 2^24" + t);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("already covered"), std::string::npos) << r.out;
  r = Ctl("cancel --id 77" + t);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("unknown submission 77"), std::string::npos) << r.out;

  const std::string data = COLLATZ_SHARED_DATA;
  r = Ctl("import --delay-csv " + data + "/delay_records_below_2p28.csv --class-csv " + data +
          "/class_records_below_2p28.csv --complete-below 2^28" + t);
  EXPECT_EQ(r.code, 0) << r.out;
  r = Ctl("server-records --kind delay --format csv" + s);
  EXPECT_EQ(r.code, 0);
  std::ifstream ref(data + "/delay_records_below_2p28.csv");
  std::stringstream ref_text;
  ref_text << ref.rdbuf();
  EXPECT_EQ(r.out, ref_text.str());
  r = Ctl("export --class-csv " + dir.File("class.csv") + s);
  EXPECT_EQ(r.code, 0);
  std::ifstream cls(dir.File("class.csv")), cref(data + "/class_records_below_2p28.csv");
  std::stringstream a, b;
  a << cls.rdbuf();
  b << cref.rdbuf();
  EXPECT_EQ(a.str(), b.str());
  r = Ctl("status --format json" + s);
  EXPECT_NE(r.out.find("\"covered_prefix\": \"268435456\""), std::string::npos) << r.out;
  r = Ctl("backup --out " + dir.File("backup.db") + t);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(std::filesystem::exists(dir.File("backup.db")));
  r = Ctl("backup --out " + dir.File("backup.db") + t);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("already exists"), std::string::npos) << r.out;
  // Nothing is quarantined here: the requeue of everything finds nothing, of one unit refuses.
  r = Ctl("requeue --all-quarantined" + t);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("0 quarantined unit(s) queued again"), std::string::npos) << r.out;
  r = Ctl("requeue --unit 1" + t);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("is not quarantined"), std::string::npos) << r.out;
  r = Ctl("requeue --unit 1 --all-quarantined" + t);
  EXPECT_EQ(r.code, 2) << r.out;
  // No worker here: unflag names the missing one, and needs the admin token.
  r = Ctl("unflag --worker 7" + t);
  EXPECT_EQ(r.code, 2) << r.out;  // an id that names nothing: a usage mistake
  EXPECT_NE(r.out.find("no worker 7"), std::string::npos) << r.out;
  r = Ctl("unflag --worker 7" + s);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("refused the token"), std::string::npos) << r.out;
  r = Ctl("unflag --all" + t);  // nothing flagged: nothing to do (fleet_faults unflags a real fleet)
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("0 workers unflagged"), std::string::npos) << r.out;
  r = Ctl("unflag" + t);
  EXPECT_EQ(r.code, 2) << r.out;
  r = Ctl("cancel --id 1" + t);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("16 unfinished units removed"), std::string::npos) << r.out;
  r = Ctl("workers" + s);
  EXPECT_EQ(r.code, 0);

  server.Signal(SIGTERM);
  EXPECT_EQ(server.Wait(), 0);
}

}  // namespace
