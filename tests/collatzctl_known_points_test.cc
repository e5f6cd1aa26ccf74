// End to end: `collatzctl import --points` (core/known_points.h) into a local database and
// into a real collatz-server. Exact points close the classes a unit above them would leave
// open for lack of knowledge (fewer open holes, the same delay records); a wrong row, flags
// that do not go together and N beyond 2^128 are refused and create or change nothing; a
// point given twice is stored once; export hands the points on.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "tests/collatzctl_runner.h"

namespace collatz::e2e {
namespace {

const std::string kData = COLLATZ_SHARED_DATA;

// The class records below `limit` of class_records_below_2p28.csv ("delay,n") as points ("n,delay").
std::string ClassRecordsAsPoints(unsigned long long limit) {
  std::istringstream in(ReadFileOrEmpty(kData + "/class_records_below_2p28.csv"));
  std::string line, out = "n,delay\n";
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    const size_t comma = line.find(',');
    const std::string d = line.substr(0, comma), n = line.substr(comma + 1);
    if (std::stoull(n) < limit) out += n + "," + d + "\n";
  }
  return out;
}

// The delay records below `limit` (header kept).
std::string DelayRecordsBelow(unsigned long long limit) {
  std::istringstream in(ReadFileOrEmpty(kData + "/delay_records_below_2p28.csv"));
  std::string line, out;
  std::getline(in, line);
  out = line + "\n";
  while (std::getline(in, line)) {
    if (std::stoull(line.substr(0, line.find(','))) < limit) out += line + "\n";
  }
  return out;
}

// The open holes of the one unit `collatzctl run --log-level debug` stored.
int OpenHolesOfTheUnit(const Completed& run) {
  std::smatch m;
  if (!std::regex_search(run.err, m, std::regex(R"(stored: floor \d+, (\d+) open holes)"))) return -1;
  return std::stoi(m[1].str());
}

TEST(CollatzctlKnownPoints, LocalImportClosesClassesAndBadInputChangesNothing) {
  TempDir dir;
  const std::string points = dir.File("points.csv"), delay = dir.File("delay.csv");
  std::ofstream(points) << ClassRecordsAsPoints(1ull << 20);
  std::ofstream(delay) << DelayRecordsBelow(1ull << 20);
  const std::string wrong = dir.File("wrong.csv"), huge = dir.File("huge.csv");
  std::ofstream(wrong) << "n,delay\n27,111\n28,111\n";
  std::ofstream(huge) << "n,delay\n340282366920938463463374607431768211456,5\n";

  const std::string fresh = dir.File("fresh.db");
  struct Bad {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Bad> bad = {
      {{"import", "--db", fresh, "--points", wrong}, "row 28,111 is wrong: the exact delay of 28 is 18"},
      {{"import", "--db", fresh, "--points", huge}, "2^128"},
      {{"import", "--db", fresh, "--points", points, "--published"}, "--points takes no"},
      {{"import", "--db", fresh, "--points", points, "--complete-below", "2^20"}, "--points takes no"},
  };
  for (const Bad& b : bad) {
    Completed c = RunCollatzctl(b.args);
    EXPECT_EQ(c.exit_code, 2) << Describe(c);
    EXPECT_NE(c.err.find(b.message), std::string::npos) << Describe(c);
    EXPECT_FALSE(FileExists(fresh)) << Describe(c);
  }

  // Two databases with the delay records below 2^20; the second also with the class records
  // below 2^20 as known points. One delay+class unit above them in each.
  const std::string plain = dir.File("plain.db"), with_points = dir.File("points.db");
  for (const std::string& db : {plain, with_points}) {
    Completed imp = RunCollatzctl({"import", "--db", db, "--delay-csv", delay, "--complete-below", "2^20"});
    ASSERT_EQ(imp.exit_code, 0) << Describe(imp);
  }
  Completed imp = RunCollatzctl({"import", "--db", with_points, "--points", points, "--source", "class records"});
  ASSERT_EQ(imp.exit_code, 0) << Describe(imp);
  EXPECT_NE(imp.out.find("0 already known"), std::string::npos) << imp.out;
  Completed again = RunCollatzctl({"import", "--db", with_points, "--points", points});
  ASSERT_EQ(again.exit_code, 0) << Describe(again);
  EXPECT_NE(again.out.find(": 0 new"), std::string::npos) << again.out;
  const std::string before = ReadFileOrEmpty(with_points);
  Completed refused = RunCollatzctl({"import", "--db", with_points, "--points", wrong});
  EXPECT_EQ(refused.exit_code, 2) << Describe(refused);
  EXPECT_TRUE(ReadFileOrEmpty(with_points) == before) << "a refused import changed the database";

  int holes[2] = {-1, -1};
  std::string delay_records[2];
  for (int i = 0; i < 2; ++i) {
    const std::string db = i == 0 ? plain : with_points;
    Completed run = RunCollatzctl({"--log-level", "debug", "run", "--db", db, "--from", "2^20", "--to", "2^20+2^16",
                                   "--unit-size", "2^16", "--kinds", "delay,class", "--backend", "cpu", "--threads", "2"});
    ASSERT_EQ(run.exit_code, 0) << Describe(run);
    holes[i] = OpenHolesOfTheUnit(run);
    Completed rec = RunCollatzctl({"records", "--db", db, "--kind", "delay", "--format", "csv"});
    ASSERT_EQ(rec.exit_code, 0) << Describe(rec);
    delay_records[i] = rec.out;
  }
  ASSERT_GE(holes[0], 0);
  ASSERT_GE(holes[1], 0);
  EXPECT_LT(holes[1], holes[0]) << "the known points closed no class";
  EXPECT_EQ(delay_records[0], delay_records[1]);
  std::printf("unit [2^20, 2^20 + 2^16): %d open holes, %d with the class records below 2^20 as known points\n",
              holes[0], holes[1]);
}

TEST(CollatzctlKnownPoints, ServerImportStoresEachPointOnceAndRefusesWrongRows) {
  TempDir dir;
  ChildProcess server(COLLATZ_SERVER_BINARY, {"--db", dir.File("coordinator.db"), "--listen", "127.0.0.1:0"},
                      dir.File("server.log"));
  const std::string address = WaitForServerAddress(server);
  ASSERT_FALSE(address.empty()) << server.output();
  const std::string points = dir.File("points.csv"), wrong = dir.File("wrong.csv");
  std::ofstream(points) << "n,delay\n27,111\n97,118\n1161,181\n";
  std::ofstream(wrong) << "n,delay\n27,111\n28,111\n";

  Completed bad = RunCollatzctl({"import", "--server", address, "--points", wrong});
  EXPECT_EQ(bad.exit_code, 2) << Describe(bad);
  EXPECT_NE(bad.err.find("row 28,111 is wrong"), std::string::npos) << Describe(bad);
  Completed first = RunCollatzctl({"import", "--server", address, "--points", points});
  ASSERT_EQ(first.exit_code, 0) << Describe(first);
  EXPECT_NE(first.out.find("imported 3 known points: 3 new, 0 already known; the server holds 3"), std::string::npos)
      << first.out;
  std::ofstream(points) << "n,delay\n27,111\n31,106\n";
  Completed second = RunCollatzctl({"import", "--server", address, "--points", points});
  ASSERT_EQ(second.exit_code, 0) << Describe(second);
  EXPECT_NE(second.out.find("imported 2 known points: 1 new, 1 already known; the server holds 4"), std::string::npos)
      << second.out;
  // Export hands them on, for another server's import --points.
  const std::string exported = dir.File("exported.csv");
  Completed exp = RunCollatzctl({"export", "--server", address, "--delay-csv", dir.File("d.csv"), "--points-csv", exported});
  ASSERT_EQ(exp.exit_code, 0) << Describe(exp);
  EXPECT_EQ(ReadFileOrEmpty(exported), "n,delay\n27,111\n31,106\n97,118\n1161,181\n");
  EXPECT_NE(exp.err.find("; 4 known points"), std::string::npos) << exp.err;
}

}  // namespace
}  // namespace collatz::e2e
