// End-to-end: the frontier out of the box (issue 23). `collatzctl run` on an empty
// database high up finds the published records in windows around them, as candidates,
// with a floor above 0 from the published records (recomputed, not trusted);
// `collatzctl import --db` stores trusted lists locally and refuses bad ones, changing
// nothing; without a terminal `run` logs progress lines; it ends with a short summary.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "core/delay.h"
#include "core/records_csv.h"
#include "core/u128.h"
#include "storage/record_db.h"
#include "tests/collatzctl_runner.h"

namespace collatz::e2e {
namespace {

const std::string kData = COLLATZ_SHARED_DATA;

std::vector<Record> Published() {
  std::vector<Record> rows;
  EXPECT_TRUE(ReadRecordsCsv(kData + "/delay_records.csv", RecordCsvKind::kDelay, &rows).ok());
  return rows;
}

// The floors a unit at `begin` is stored with ("unit [a, b) stored: floor F," at debug level).
std::vector<unsigned> StoredFloors(const std::string& err) {
  std::vector<unsigned> floors;
  const std::regex re(R"(stored: floor (\d+),)");
  for (auto it = std::sregex_iterator(err.begin(), err.end(), re); it != std::sregex_iterator(); ++it) {
    floors.push_back(static_cast<unsigned>(std::stoul((*it)[1].str())));
  }
  return floors;
}

// A window of 2^23 numbers around a published record, on an empty database: the record is
// found as a candidate with its delay, and the unit's floor is the largest published delay
// below it (with doublings), above 0.
void ExpectRecordFoundFromScratch(const Record& record, const Record& previous, const std::string& kinds) {
  SCOPED_TRACE(ToDecimal(record.n));
  TempDir dir;
  const std::string db = dir.File("frontier.db");
  const u128 from = record.n - Pow2(22), to = record.n + Pow2(22);
  Completed run = RunCollatzctl({"--log-level", "debug", "run", "--from", ToDecimal(from), "--to", ToDecimal(to),
                                 "--kinds", kinds, "--threads", "2", "--db", db, "--print-records"});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  EXPECT_NE(run.out.find("\n" + ToDecimal(record.n) + " " + std::to_string(record.delay) + " candidate\n"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("# the last delay record: " + ToDecimal(record.n) + " (delay " + std::to_string(record.delay) +
                         "), a candidate"),
            std::string::npos)
      << run.out;
  unsigned want = 0;
  for (const Record& r : Published()) {
    unsigned d = r.delay;
    for (u128 x = r.n; x < from; x *= 2, ++d) want = std::max(want, d);
  }
  EXPECT_GE(want, previous.delay);
  EXPECT_NE(run.err.find("record table complete below 0"), std::string::npos) << run.err;  // nothing trusted
  const std::vector<unsigned> floors = StoredFloors(run.err);
  ASSERT_EQ(floors.size(), 1u) << run.err;
  EXPECT_GT(floors[0], 0u);
  EXPECT_EQ(floors[0], want);
  // Nothing is final: nothing below the window was searched or imported.
  Completed final_records = RunCollatzctl({"records", "--db", db, "--kind", "delay", "--format", "csv"});
  EXPECT_EQ(final_records.out, "n,delay\n");
}

TEST(CollatzctlFrontier, EmptyDatabaseAt2p60FindsThePublishedRecordAsACandidate) {
  const std::vector<Record> p = Published();
  // 1278775404785934855 (about 2^60.15, delay 2286).
  auto it = std::find_if(p.begin(), p.end(), [](const Record& r) { return r.n > Pow2(60); });
  ASSERT_NE(it, p.end());
  ExpectRecordFoundFromScratch(*it, *std::prev(it), "delay");
}

TEST(CollatzctlFrontier, EmptyDatabaseAbove2p64FindsThePublishedRecordAsACandidate) {
  const std::vector<Record> p = Published();
  // The last published record, 28019077177231758495 (about 2^64.6): a class search as well.
  ASSERT_TRUE(p.back().n > Pow2(64));
  ExpectRecordFoundFromScratch(p.back(), p[p.size() - 2], "delay,class");
}

size_t ImportCount(const std::string& db) {
  std::unique_ptr<RecordDb> rdb;
  EXPECT_TRUE(RecordDb::Open(db, RecordDb::OpenMode::kExistingOnly, &rdb).ok());
  std::vector<TrustedImport> imports;
  EXPECT_TRUE(rdb->LoadImports(&imports).ok());
  return imports.size();
}

TEST(CollatzctlFrontier, ImportPublishedIntoALocalDatabaseCoversDelaySearches) {
  TempDir dir;
  const std::string db = dir.File("records.db");
  Completed imp = RunCollatzctl({"import", "--db", db, "--published"});
  ASSERT_EQ(imp.exit_code, 0) << Describe(imp);
  EXPECT_NE(imp.out.find("imported 149 delay and 0 class records complete below 28019077177231758496"),
            std::string::npos)
      << imp.out;
  EXPECT_EQ(ImportCount(db), 1u);
  // Delay searches below the last record are covered: nothing to do, the records are final.
  Completed covered = RunCollatzctl({"run", "--from", "2^60", "--to", "2^60+2^30", "--kinds", "delay", "--db", db});
  ASSERT_EQ(covered.exit_code, 0) << Describe(covered);
  EXPECT_NE(covered.out.find("; 0 new units"), std::string::npos) << covered.out;
  Completed records = RunCollatzctl({"records", "--db", db, "--kind", "delay", "--format", "csv"});
  EXPECT_EQ(records.out, ReadFileOrEmpty(kData + "/delay_records.csv"));
  // Right above the list a unit gets the floor of its last record and, the list being
  // trusted, the record table for early termination; it extends the covered prefix.
  const std::string last = "28019077177231758495";
  Completed above = RunCollatzctl({"--log-level", "debug", "run", "--from", last + "+1", "--to", last + "+2^22",
                                   "--kinds", "delay", "--threads", "2", "--db", db});
  ASSERT_EQ(above.exit_code, 0) << Describe(above);
  EXPECT_NE(above.err.find("stored: floor 2456, 0 open holes"), std::string::npos) << above.err;
  EXPECT_NE(above.err.find("record table complete below 28019077177231758496"), std::string::npos) << above.err;
  EXPECT_NE(above.out.find("(covered below 28019077177235952799;"), std::string::npos) << above.out;
  // Class searches are not covered: a delay list says nothing about the smallest members of classes.
  Completed classes = RunCollatzctl({"run", "--from", "2^40", "--to", "2^40+2^16", "--threads", "1", "--db", db});
  ASSERT_EQ(classes.exit_code, 0) << Describe(classes);
  EXPECT_NE(classes.out.find("; 1 new units"), std::string::npos) << classes.out;
}

TEST(CollatzctlFrontier, BadImportsAreRefusedAndChangeNothing) {
  TempDir dir;
  const std::string db = dir.File("records.db");
  const std::string reference = ReadFileOrEmpty(kData + "/delay_records_below_2p28.csv");
  std::vector<std::string> rows;
  {
    std::istringstream in(reference);
    for (std::string line; std::getline(in, line);) rows.push_back(line);
  }
  ASSERT_GT(rows.size(), 50u);
  auto write = [&](const std::string& name, const std::vector<std::string>& lines) {
    std::ofstream(dir.File(name)) << [&] {
      std::string s;
      for (const std::string& l : lines) s += l + "\n";
      return s;
    }();
    return dir.File(name);
  };
  const std::string last_n = rows.back().substr(0, rows.back().find(','));
  std::vector<std::string> unsorted = rows, wrong = rows, missing = rows, huge = rows, damaged = rows;
  std::swap(unsorted[5], unsorted[6]);
  wrong[30] = wrong[30].substr(0, wrong[30].find(',')) + ",1";
  missing.erase(missing.begin() + 40);
  huge.push_back("340282366920938463463374607431768211456,5000");
  damaged[20] = "12345,";
  damaged.push_back("77031");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--delay-csv", write("unsorted.csv", unsorted), "--complete-below", "2^28"}, "not sorted by n"},
      {{"--delay-csv", write("wrong.csv", wrong), "--complete-below", "2^28"}, "is wrong: the exact delay of"},
      {{"--delay-csv", write("ok.csv", rows), "--complete-below", last_n}, "is not below the bound"},
      {{"--delay-csv", write("missing.csv", missing), "--complete-below", "2^28"}, "not complete below 268435456"},
      {{"--delay-csv", write("cut.csv", rows), "--complete-below", "2^30"}, "not complete below 1073741824"},
      {{"--delay-csv", write("huge.csv", huge), "--complete-below", "2^28"}, "at or above 2^128"},
      {{"--delay-csv", write("damaged.csv", damaged), "--complete-below", "2^28"}, "damaged.csv: line 21"},
      {{"--published", "--complete-below", "2^20"}, "--published takes no"},
      {{"--complete-below", "2^20"}, "give --published, or --delay-csv"},
  };
  // Without a database file: refused, and none is created.
  for (const Case& c : cases) {
    std::vector<std::string> args = {"import", "--db", db};
    args.insert(args.end(), c.args.begin(), c.args.end());
    Completed r = RunCollatzctl(args);
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.message << "\n" << r.err;
    EXPECT_FALSE(FileExists(db)) << c.message;
  }
  // With one: refused, and the database keeps exactly its one import.
  ASSERT_EQ(RunCollatzctl({"import", "--db", db, "--delay-csv", write("ok.csv", rows), "--complete-below", "2^28",
                           "--class-csv", kData + "/class_records_below_2p28.csv"})
                .exit_code,
            0);
  const std::string before = RunCollatzctl({"records", "--db", db, "--kind", "class", "--format", "csv"}).out;
  EXPECT_EQ(before, ReadFileOrEmpty(kData + "/class_records_below_2p28.csv"));
  for (const Case& c : cases) {
    std::vector<std::string> args = {"import", "--db", db};
    args.insert(args.end(), c.args.begin(), c.args.end());
    Completed r = RunCollatzctl(args);
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_EQ(ImportCount(db), 1u) << c.message;
  }
}

TEST(CollatzctlFrontier, WithoutATerminalRunLogsProgressAndEndsWithASummary) {
  TempDir dir;
  const std::string db = dir.File("records.db");
  Completed run = RunCollatzctl({"run", "--from", "2^40", "--to", "2^40+2^24", "--unit-size", "2^22", "--threads",
                                 "1", "--db", db, "--progress-interval", "0.01"});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  // At least one line per unit (the first report of each comes after the interval).
  const std::regex line(R"(progress +[0-9.]+%  \S+ of 1.68e\+07 numbers  \S+ numbers/s  elapsed \S+  ETA \S+  unit \d/4 )");
  size_t lines = 0;
  for (auto it = std::sregex_iterator(run.err.begin(), run.err.end(), line); it != std::sregex_iterator(); ++it) ++lines;
  EXPECT_GE(lines, 4u) << run.err;
  EXPECT_EQ(run.err.find('\r'), std::string::npos);
  // The summary, not a listing.
  for (const char* part : {"# searched 16777216 numbers in ", "# found: 0 final delay records and ",
                           "# found: 0 final class records and ", "# database: " , "# next: collatzctl records --db "}) {
    EXPECT_NE(run.out.find(part), std::string::npos) << part << "\n" << run.out;
  }
  EXPECT_EQ(run.out.find("\n# delay records in ["), std::string::npos) << run.out;
  // Nothing imported and [1, 2^40) not covered: the summary points at the published list,
  // and no longer once it is imported.
  const std::string hint = "collatzctl import --db " + db + " --published";
  EXPECT_NE(run.out.find(hint), std::string::npos) << run.out;
  ASSERT_EQ(RunCollatzctl({"import", "--db", db, "--published"}).exit_code, 0);
  Completed next = RunCollatzctl({"run", "--from", "2^40+2^24", "--to", "2^40+2^25", "--threads", "1", "--db", db});
  ASSERT_EQ(next.exit_code, 0) << Describe(next);
  EXPECT_EQ(next.out.find(hint), std::string::npos) << next.out;
}

}  // namespace
}  // namespace collatz::e2e
