// End to end: the flow a script drives with collatzctl alone (as worker/gpu_run.sh does): a
// real collatz-server, trusted records imported, a range submitted,
// `status --wait` until a real collatz-worker has finished it, the records as CSV against
// shared/data.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "tests/collatzctl_runner.h"

namespace collatz::e2e {
namespace {

const std::string kData = COLLATZ_SHARED_DATA;

// The rows of a CSV (header kept) whose n (column n_col) is below `limit`.
std::string CsvBelow(const std::string& csv, unsigned long long limit, int n_col) {
  std::istringstream in(csv);
  std::string line, out;
  std::getline(in, line);
  out = line + "\n";
  while (std::getline(in, line)) {
    const size_t comma = line.find(',');
    const std::string n = n_col == 0 ? line.substr(0, comma) : line.substr(comma + 1);
    if (n.size() < 20 && std::stoull(n) < limit) out += line + "\n";
  }
  return out;
}

TEST(CollatzctlScriptFlow, ImportSubmitWaitRecords) {
  TempDir dir;
  ChildProcess server(COLLATZ_SERVER_BINARY, {"--db", dir.File("coordinator.db"), "--listen", "127.0.0.1:0", "--double-check", "none"},
                      dir.File("server.log"));
  const std::string address = WaitForServerAddress(server);
  ASSERT_FALSE(address.empty()) << server.output();

  // Every row must lie below the bound: a longer list is refused, nothing imported.
  Completed too_long = RunCollatzctl({"import", "--server", address, "--delay-csv", kData + "/delay_records.csv",
                                      "--complete-below", "2^20"});
  EXPECT_EQ(too_long.exit_code, 2) << Describe(too_long);
  EXPECT_NE(too_long.err.find("is not below the bound 1048576"), std::string::npos) << too_long.err;
  const std::string below = dir.File("delay_below_2p20.csv");
  std::ofstream(below) << CsvBelow(ReadFileOrEmpty(kData + "/delay_records.csv"), 1ull << 20, 0);
  Completed import = RunCollatzctl({"import", "--server", address, "--delay-csv", below, "--complete-below", "2^20"});
  ASSERT_EQ(import.exit_code, 0) << Describe(import);
  Completed submit = RunCollatzctl(
      {"submit", "--server", address, "--from", "2^20", "--to", "2^24", "--unit-size", "2^22", "--kinds", "delay"});
  ASSERT_EQ(submit.exit_code, 0) << Describe(submit);

  // No worker yet: the wait ends with exit 1 and says what is left.
  Completed early = RunCollatzctl({"status", "--server", address, "--wait", "1"});
  EXPECT_EQ(early.exit_code, 1) << Describe(early);
  EXPECT_NE(early.err.find("not finished after 1 s: 4 units pending, 0 leased, 0 finished"), std::string::npos)
      << early.err;
  Completed bad = RunCollatzctl({"status", "--server", address, "--wait", "-1"});
  EXPECT_EQ(bad.exit_code, 2) << Describe(bad);

  ChildProcess worker(COLLATZ_WORKER_BINARY,
                      {"--server", address, "--backend", "cpu", "--threads", "1", "--spool", dir.File("spool"),
                       "--max-idle-seconds", "2"},
                      dir.File("worker.log"));
  Completed done = RunCollatzctl({"status", "--server", address, "--wait", "240"});
  ASSERT_EQ(done.exit_code, 0) << Describe(done) << worker.output();
  EXPECT_NE(done.out.find("0 pending, 0 leased, 4 finished"), std::string::npos) << done.out;

  Completed records =
      RunCollatzctl({"server-records", "--server", address, "--kind", "delay", "--format", "csv"});
  ASSERT_EQ(records.exit_code, 0) << Describe(records);
  EXPECT_EQ(records.out, CsvBelow(ReadFileOrEmpty(kData + "/delay_records_below_2p28.csv"), 1ull << 24, 0));
  EXPECT_EQ(worker.Wait(60000), 0) << worker.output();
}

}  // namespace
}  // namespace collatz::e2e
