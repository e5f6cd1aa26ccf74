// End-to-end: bad input is a usage error (exit 2) with a message naming the problem, a
// damaged database is a failure (exit 1), and neither creates or changes a database file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/collatzctl_runner.h"

namespace collatz::e2e {
namespace {

namespace fs = std::filesystem;

struct BadCase {
  std::vector<std::string> args;  // "{db}" is replaced by a database path
  int exit_code;
  std::string message;            // must appear on stderr
};

const std::vector<BadCase>& BadCases() {
  static const std::vector<BadCase> cases = {
      {{"run", "--to", "2^12x", "--db", "{db}"}, 2, "--to"},
      {{"run", "--to", "12q", "--db", "{db}"}, 2, "invalid digit 'q'"},
      {{"run", "--to", "0x", "--db", "{db}"}, 2, "hex digit"},
      {{"run", "--to", "2^128", "--db", "{db}"}, 2, "2^128"},
      {{"run", "--to", "340282366920938463463374607431768211456", "--db", "{db}"}, 2, "2^128"},
      {{"run", "--from", "2^127+2^127", "--to", "2^127", "--db", "{db}"}, 2, "2^128"},
      {{"run", "--to", "2^64-2^65", "--db", "{db}"}, 2, "negative"},
      {{"run", "--from=-5", "--to", "10", "--db", "{db}"}, 2, "negative"},
      {{"run", "--from", "2^20", "--to", "2^10", "--db", "{db}"}, 2, "empty range"},
      {{"run", "--from", "77", "--to", "77", "--db", "{db}"}, 2, "empty range"},
      {{"run", "--from", "0", "--to", "10", "--db", "{db}"}, 2, "--from must be at least 1"},
      {{"run", "--to", "2^20", "--bogus", "--db", "{db}"}, 2, "--bogus"},
      {{"run", "--to", "100", "--kinds", "class", "--db", "{db}"}, 2, "--kinds"},
      {{"run", "--to", "100", "--backend", "tpu", "--db", "{db}"}, 2, "--backend"},
      {{"run", "--to", "100", "--threads", "abc", "--db", "{db}"}, 2, "--threads"},
      {{"run", "--to", "100", "--threads", "-1", "--db", "{db}"}, 2, "--threads"},
      {{"run", "--to", "100", "--unit-size", "0", "--db", "{db}"}, 2, "--unit-size"},
      {{"run", "--db", "{db}"}, 2, "--to"},
      {{"run", "--to", "100", "--progress-interval", "0", "--db", "{db}"}, 2, "--progress-interval"},
      // Imports into a local database: a bound at or below the last row, a list cut short of
      // its bound (the published records show it), flags that do not go together.
      {{"import", "--db", "{db}", "--delay-csv", COLLATZ_SHARED_DATA "/delay_records.csv", "--complete-below", "2^20"},
       2, "is not below the bound 1048576"},
      {{"import", "--db", "{db}", "--delay-csv", COLLATZ_SHARED_DATA "/delay_records_below_2p28.csv",
        "--complete-below", "2^30"},
       2, "not complete below 1073741824"},
      {{"import", "--db", "{db}", "--published", "--delay-csv", COLLATZ_SHARED_DATA "/delay_records.csv"},
       2, "--published takes no"},
      {{"import", "--db", "{db}", "--delay-csv", COLLATZ_SHARED_DATA "/delay_records.csv"}, 2, "--complete-below"},
      {{"records", "--kind", "foo", "--db", "{db}"}, 2, "--kind"},
      {{"records", "--kind", "delay", "--format", "xml", "--db", "{db}"}, 2, "--format"},
      {{"records", "--db", "{db}"}, 2, "--kind"},
      {{"bench", "--at", "2^128"}, 2, "2^128"},
      {{"bench", "--numbers", "0"}, 2, "--numbers"},
      {{"bench", "--context", "none", "--points", "points.csv"}, 2, "--points needs --context floor or trusted"},
      {{"frobnicate"}, 2, "frobnicate"},
      {{}, 2, "subcommand"},
  };
  return cases;
}

std::vector<std::string> WithDb(std::vector<std::string> args, const std::string& db) {
  for (std::string& a : args) {
    if (a == "{db}") a = db;
  }
  return args;
}

std::string Joined(const std::vector<std::string>& args) {
  std::string s;
  for (const std::string& a : args) s += " " + a;
  return s;
}

bool DirectoryIsEmpty(const std::string& dir) { return fs::is_empty(dir); }

// A real database with some content, made by the binary itself.
void MakeDatabase(const std::string& path, const std::string& to) {
  Completed c = RunCollatzctl({"run", "--to", to, "--db", path});
  ASSERT_EQ(c.exit_code, 0) << Describe(c);
  ASSERT_FALSE(FileExists(path + "-wal"));  // the last connection checkpointed on exit
}

TEST(CollatzctlBadInput, UsageErrorsNameTheProblemAndCreateNoDatabase) {
  for (const BadCase& bad : BadCases()) {
    TempDir cwd;  // the default --db is ./collatz.db: nothing may appear here
    const std::vector<std::string> args = WithDb(bad.args, cwd.File("fresh.db"));
    Completed c = RunCollatzctl(args, cwd.path());
    EXPECT_EQ(c.exit_code, bad.exit_code) << "collatzctl" << Joined(args) << "\n" << Describe(c);
    EXPECT_NE(c.err.find(bad.message), std::string::npos)
        << "collatzctl" << Joined(args) << ": stderr lacks \"" << bad.message << "\"\n" << Describe(c);
    EXPECT_TRUE(DirectoryIsEmpty(cwd.path())) << "collatzctl" << Joined(args) << " created a file";
  }
}

TEST(CollatzctlBadInput, UsageErrorsLeaveAnExistingDatabaseUnchanged) {
  TempDir dir;
  const std::string db = dir.File("records.db");
  MakeDatabase(db, "2^16");
  const std::string before = ReadFileOrEmpty(db);
  ASSERT_FALSE(before.empty());
  for (const BadCase& bad : BadCases()) {
    const std::vector<std::string> args = WithDb(bad.args, db);
    Completed c = RunCollatzctl(args, dir.path());
    EXPECT_EQ(c.exit_code, bad.exit_code) << "collatzctl" << Joined(args) << "\n" << Describe(c);
    EXPECT_TRUE(ReadFileOrEmpty(db) == before) << "collatzctl" << Joined(args) << " changed the database";
    EXPECT_FALSE(FileExists(db + "-wal")) << "collatzctl" << Joined(args) << " opened the database";
  }
}

void ExpectDamagedDatabaseRefused(const std::string& db) {
  const std::string before = ReadFileOrEmpty(db);
  const std::vector<std::vector<std::string>> commands = {
      {"run", "--to", "2^16", "--db", db},
      {"records", "--kind", "delay", "--db", db},
      {"records", "--kind", "class", "--format", "csv", "--db", db},
  };
  for (const auto& args : commands) {
    Completed c = RunCollatzctl(args);
    EXPECT_EQ(c.exit_code, 1) << "collatzctl" << Joined(args) << "\n" << Describe(c);
    EXPECT_NE(c.err.find("damaged"), std::string::npos) << Describe(c);
    EXPECT_NE(c.err.find(db), std::string::npos) << Describe(c);
    EXPECT_TRUE(c.out.empty()) << Describe(c);
    EXPECT_TRUE(ReadFileOrEmpty(db) == before) << "collatzctl" << Joined(args) << " changed the damaged file";
    // A read-only look at a WAL-mode file may leave an empty -wal beside it; never content.
    EXPECT_TRUE(ReadFileOrEmpty(db + "-wal").empty());
  }
}

TEST(CollatzctlBadInput, GarbageDatabaseIsRefused) {
  TempDir dir;
  const std::string db = dir.File("records.db");
  {
    std::ofstream out(db, std::ios::binary);
    for (int i = 0; i < 4096; ++i) out << "not a database ";
  }
  ExpectDamagedDatabaseRefused(db);
}

TEST(CollatzctlBadInput, TruncatedDatabaseIsRefused) {
  TempDir dir;
  const std::string db = dir.File("records.db");
  MakeDatabase(db, "2^22");
  const auto size = fs::file_size(db);
  ASSERT_GE(size, 16u * 4096) << "the database is too small to truncate meaningfully";
  fs::resize_file(db, size / 2);
  ExpectDamagedDatabaseRefused(db);
}

TEST(CollatzctlBadInput, RecordsNeedsAnExistingDatabase) {
  TempDir dir;
  const std::string db = dir.File("missing.db");
  Completed c = RunCollatzctl({"records", "--kind", "delay", "--db", db});
  EXPECT_EQ(c.exit_code, 1) << Describe(c);
  EXPECT_NE(c.err.find("no database at " + db), std::string::npos) << Describe(c);
  EXPECT_FALSE(FileExists(db));
}

TEST(CollatzctlBadInput, GpuBackendWithoutAGpuFailsCleanly) {
  TempDir dir;
  const std::string db = dir.File("records.db");
  Completed c = RunCollatzctl({"run", "--to", "2^16", "--backend", "gpu", "--db", db});
  if (c.exit_code == 0) GTEST_SKIP() << "this machine has a usable GPU";
  EXPECT_EQ(c.exit_code, 1) << Describe(c);
  const bool explained = c.err.find("this build has no CUDA engine") != std::string::npos ||
                         c.err.find("no CUDA device") != std::string::npos;
  EXPECT_TRUE(explained) << Describe(c);
  EXPECT_FALSE(FileExists(db));
  // auto falls back to the CPU.
  Completed fallback = RunCollatzctl({"run", "--to", "2^16", "--backend", "auto", "--db", db});
  EXPECT_EQ(fallback.exit_code, 0) << Describe(fallback);
}

TEST(CollatzctlBadInput, HelpEverywhere) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--help"}, {"run", "--help"}, {"records", "--help"}, {"bench", "--help"}, {"run", "-h"}}) {
    TempDir cwd;
    Completed c = RunCollatzctl(args, cwd.path());
    EXPECT_EQ(c.exit_code, 0) << Describe(c);
    EXPECT_NE(c.out.find("Usage:"), std::string::npos) << Describe(c);
    EXPECT_TRUE(DirectoryIsEmpty(cwd.path()));
  }
  Completed run_help = RunCollatzctl({"run", "--help"});
  EXPECT_NE(run_help.out.find("--unit-size"), std::string::npos);
  EXPECT_NE(run_help.out.find("--backend"), std::string::npos);
}

}  // namespace
}  // namespace collatz::e2e
