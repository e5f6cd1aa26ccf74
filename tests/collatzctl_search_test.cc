// End-to-end: `collatzctl run` then `collatzctl records` against the exhaustive
// reference data in shared/data, resuming, kinds, candidates, and `bench`.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/records_csv.h"
#include "core/sieve.h"
#include "core/u128.h"
#include "core/sieve_file.h"
#include "tests/collatzctl_runner.h"

namespace collatz::e2e {
namespace {

const std::string kData = COLLATZ_SHARED_DATA;

// The reference CSV's data rows with n < limit (column `n_col` holds n), with its header.
std::string ReferenceBelow(const std::string& file, u128 limit, int n_col) {
  std::istringstream in(ReadFileOrEmpty(kData + "/" + file));
  std::string line, out;
  std::getline(in, line);
  out = line + "\n";
  while (std::getline(in, line)) {
    const size_t comma = line.find(',');
    u128 n = 0;
    EXPECT_TRUE(ParseDecimalU128(n_col == 0 ? line.substr(0, comma) : line.substr(comma + 1), &n).ok()) << line;
    if (n < limit) out += line + "\n";
  }
  return out;
}

// The lines of a section of `run`'s output ("# delay records ..." up to the next "#").
std::string Section(const std::string& out, const std::string& title) {
  const size_t start = out.find("# " + title);
  if (start == std::string::npos) return "<no section " + title + ">";
  const size_t body = out.find('\n', start) + 1;
  const size_t end = out.find("\n#", body - 1);
  return out.substr(body, end == std::string::npos ? std::string::npos : end + 1 - body);
}

// CSV rows (header dropped) written as run prints them: "a b".
std::string AsRunLines(const std::string& csv) {
  std::string s = csv.substr(csv.find('\n') + 1);
  for (char& ch : s) {
    if (ch == ',') ch = ' ';
  }
  return s;
}

std::string RecordsCsv(const std::string& db, const std::string& kind) {
  Completed c = RunCollatzctl({"records", "--db", db, "--kind", kind, "--format", "csv"});
  EXPECT_EQ(c.exit_code, 0) << Describe(c);
  return c.out;
}

TEST(CollatzctlSearch, Search2p28MatchesReferenceByteForByte) {
  TempDir dir;
  const std::string db = dir.File("records.db");
  Completed run = RunCollatzctl({"run", "--from", "1", "--to", "2^28", "--db", db, "--print-records"});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  EXPECT_NE(run.out.find("# searched 268435455 numbers in "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("numbers/s"), std::string::npos);

  const std::string delay_ref = ReadFileOrEmpty(kData + "/delay_records_below_2p28.csv");
  const std::string class_ref = ReadFileOrEmpty(kData + "/class_records_below_2p28.csv");
  ASSERT_FALSE(delay_ref.empty());
  ASSERT_FALSE(class_ref.empty());
  EXPECT_EQ(RecordsCsv(db, "delay"), delay_ref);
  EXPECT_EQ(RecordsCsv(db, "class"), class_ref);

  // What run printed: the same records, none a candidate (the whole range is covered).
  EXPECT_EQ(Section(run.out, "delay records"), AsRunLines(delay_ref));
  EXPECT_EQ(Section(run.out, "class records"), AsRunLines(class_ref));

  // JSON: n as decimal strings, the same rows.
  Completed json = RunCollatzctl({"records", "--db", db, "--kind", "delay", "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << Describe(json);
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["covered_prefix"], "268435456");
  std::string rebuilt = "n,delay\n";
  for (const auto& r : j["records"]) {
    rebuilt += r["n"].get<std::string>() + "," + std::to_string(r["delay"].get<unsigned>()) + "\n";
  }
  EXPECT_EQ(rebuilt, delay_ref);

  // Table (the default format).
  Completed table = RunCollatzctl({"records", "--db", db, "--kind", "class"});
  ASSERT_EQ(table.exit_code, 0) << Describe(table);
  EXPECT_NE(table.out.find("# 793 final class records below 268435456"), std::string::npos) << table.out;
}

TEST(CollatzctlSearch, ResumeReusesFinishedUnits) {
  TempDir dir;
  const std::string db = dir.File("records.db");
  Completed first = RunCollatzctl({"run", "--to", "2^24", "--db", db});
  ASSERT_EQ(first.exit_code, 0) << Describe(first);
  Completed second = RunCollatzctl({"run", "--from", "1", "--to", "2^26", "--db", db, "--print-records"});
  ASSERT_EQ(second.exit_code, 0) << Describe(second);
  EXPECT_NE(second.out.find("# searched 50331648 numbers"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("16777215 numbers were already covered"), std::string::npos) << second.out;
  // The records printed cover the whole requested range, old units included.
  EXPECT_EQ(Section(second.out, "delay records"),
            AsRunLines(ReferenceBelow("delay_records_below_2p28.csv", Pow2(26), 0)));

  Completed again = RunCollatzctl({"run", "--to", "2^26", "--db", db});
  ASSERT_EQ(again.exit_code, 0) << Describe(again);
  EXPECT_NE(again.out.find("# searched 0 numbers"), std::string::npos) << again.out;

  EXPECT_EQ(RecordsCsv(db, "delay"), ReferenceBelow("delay_records_below_2p28.csv", Pow2(26), 0));
  EXPECT_EQ(RecordsCsv(db, "class"), ReferenceBelow("class_records_below_2p28.csv", Pow2(26), 1));
}

// Kills a run mid-way (SIGKILL: no cleanup at all, or SIGINT: the orderly stop), then
// reruns it: whatever units were stored are kept, and the result is still exact.
void KillAndResume(int signal_number) {
  TempDir dir;
  const std::string db = dir.File("records.db");
  const std::vector<std::string> args = {"run", "--to", "2^26", "--unit-size", "2^21", "--db", db};
  ChildProcess first = StartCollatzctl(args, dir.File("out1"), dir.File("err1"));
  ::usleep(1500 * 1000);
  first.Signal(signal_number);
  const int code = first.Wait();
  // It may have finished before the signal on a fast machine; then there is nothing to resume.
  if (code != 0) {
    EXPECT_EQ(code, signal_number == SIGKILL ? 128 + SIGKILL : 130) << ReadFileOrEmpty(dir.File("err1"));
  }
  if (signal_number == SIGINT && code == 130) {
    EXPECT_NE(ReadFileOrEmpty(dir.File("err1")).find("rerun the same command to resume"), std::string::npos);
  }
  Completed rerun = RunCollatzctl(args);
  ASSERT_EQ(rerun.exit_code, 0) << Describe(rerun);
  EXPECT_NE(rerun.out.find("numbers were already covered"), std::string::npos);
  EXPECT_EQ(RecordsCsv(db, "delay"), ReferenceBelow("delay_records_below_2p28.csv", Pow2(26), 0));
  EXPECT_EQ(RecordsCsv(db, "class"), ReferenceBelow("class_records_below_2p28.csv", Pow2(26), 1));
  Completed again = RunCollatzctl(args);
  EXPECT_NE(again.out.find("# searched 0 numbers"), std::string::npos) << again.out;
}

TEST(CollatzctlSearch, SigkillLosesNothingStored) { KillAndResume(SIGKILL); }
TEST(CollatzctlSearch, SigintStopsAndResumes) { KillAndResume(SIGINT); }

TEST(CollatzctlSearch, ManySmallUnitsGiveTheSameRecords) {
  TempDir dir;
  const std::string db = dir.File("records.db");
  // 1000003 is no power of two: units of every shape, each searched with the floor and
  // open classes left by the units before it.
  Completed run = RunCollatzctl({"run", "--to", "2^24", "--unit-size", "1000003", "--threads", "2", "--db", db});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  EXPECT_NE(run.out.find("17 new units"), std::string::npos) << run.out;
  EXPECT_EQ(RecordsCsv(db, "delay"), ReferenceBelow("delay_records_below_2p28.csv", Pow2(24), 0));
  EXPECT_EQ(RecordsCsv(db, "class"), ReferenceBelow("class_records_below_2p28.csv", Pow2(24), 1));
}

// The first block is cut at 2^20, 2^24, ...: only [1, 2^20) is searched with floor 0, each
// later unit with the largest delay below it; the records stay exactly the reference.
TEST(CollatzctlSearch, FirstUnitsAreCutSoThatLaterUnitsHaveFloors) {
  TempDir dir;
  const std::string db = dir.File("records.db");
  Completed run = RunCollatzctl(
      {"--log-level", "debug", "run", "--to", "2^26", "--unit-size", "2^26", "--threads", "2", "--db", db});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  EXPECT_NE(run.out.find("; 3 new units"), std::string::npos) << run.out;
  std::vector<Record> reference;
  ASSERT_TRUE(ReadRecordsCsv(kData + "/delay_records_below_2p28.csv", RecordCsvKind::kDelay, &reference).ok());
  for (const auto& [begin, end] : std::vector<std::pair<u128, u128>>{{1, Pow2(20)}, {Pow2(20), Pow2(24)},
                                                                      {Pow2(24), Pow2(26)}}) {
    unsigned floor = 0;
    for (const Record& r : reference) {
      if (r.n < begin) floor = std::max(floor, r.delay);
    }
    if (begin > 1) EXPECT_GT(floor, 500u);
    const std::string stored = "unit [" + ToDecimal(begin) + ", " + ToDecimal(end) + ") stored: floor " +
                               std::to_string(floor) + ",";
    EXPECT_NE(run.err.find(stored), std::string::npos) << stored << "\n" << run.err;
  }
  EXPECT_EQ(RecordsCsv(db, "delay"), ReferenceBelow("delay_records_below_2p28.csv", Pow2(26), 0));
  EXPECT_EQ(RecordsCsv(db, "class"), ReferenceBelow("class_records_below_2p28.csv", Pow2(26), 1));
}

TEST(CollatzctlSearch, ClassRecordsNeedClassSearches) {
  TempDir dir;
  const std::string db = dir.File("records.db");
  Completed delay_only = RunCollatzctl({"run", "--to", "2^22", "--kinds", "delay", "--db", db});
  ASSERT_EQ(delay_only.exit_code, 0) << Describe(delay_only);
  EXPECT_EQ(delay_only.out.find("# class records"), std::string::npos);
  EXPECT_EQ(RecordsCsv(db, "delay"), ReferenceBelow("delay_records_below_2p28.csv", Pow2(22), 0));
  EXPECT_EQ(RecordsCsv(db, "class"), "delay,n\n");  // nothing class-searched yet

  Completed both = RunCollatzctl({"run", "--to", "2^22", "--kinds", "delay,class", "--db", db});
  ASSERT_EQ(both.exit_code, 0) << Describe(both);
  EXPECT_NE(both.out.find("# searched 4194303 numbers"), std::string::npos) << both.out;
  EXPECT_EQ(RecordsCsv(db, "class"), ReferenceBelow("class_records_below_2p28.csv", Pow2(22), 1));

  // A delay-only search of a range that a class search covered has nothing to do.
  Completed again = RunCollatzctl({"run", "--to", "2^22", "--kinds", "delay", "--db", db});
  ASSERT_EQ(again.exit_code, 0) << Describe(again);
  EXPECT_NE(again.out.find("# searched 0 numbers"), std::string::npos) << again.out;
}

TEST(CollatzctlSearch, RecordsAboveTheCoveredPrefixAreCandidates) {
  TempDir dir;
  const std::string db = dir.File("records.db");
  // [2^20, 2^21) alone: nothing below 2^20 is covered, so whatever is found is a candidate.
  Completed run = RunCollatzctl({"run", "--from", "2^20", "--to", "2^21", "--db", db, "--print-records"});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  EXPECT_NE(run.out.find(" candidate\n"), std::string::npos) << run.out;
  EXPECT_EQ(RecordsCsv(db, "delay"), "n,delay\n");
  EXPECT_EQ(RecordsCsv(db, "class"), "delay,n\n");

  // Filling the gap below makes the true records of [2^20, 2^21) final.
  Completed fill = RunCollatzctl({"run", "--from", "1", "--to", "2^20", "--db", db});
  ASSERT_EQ(fill.exit_code, 0) << Describe(fill);
  EXPECT_EQ(RecordsCsv(db, "delay"), ReferenceBelow("delay_records_below_2p28.csv", Pow2(21), 0));
  EXPECT_EQ(RecordsCsv(db, "class"), ReferenceBelow("class_records_below_2p28.csv", Pow2(21), 1));
}

TEST(CollatzctlSearch, ProgressLineStaysOffWhenStderrIsNotATerminal) {
  TempDir dir;
  Completed run = RunCollatzctl({"run", "--to", "2^20", "--db", dir.File("records.db")});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  EXPECT_EQ(run.err.find('\r'), std::string::npos) << run.err;
  EXPECT_EQ(run.out.find('\r'), std::string::npos);
}

// `run --sieve FILE`: a sieve file of another width gives the same records; a damaged one is
// refused before the database is touched.
TEST(CollatzctlSearch, SieveFileFromCollatzSieveGivesTheSameRecords) {
  TempDir dir;
  std::vector<uint64_t> odd;
  for (uint64_t r : DirectSieveSurvivors(16)) {
    if (r & 1) odd.push_back(r);
  }
  const std::string sieve = dir.File("k16.sieve");
  ASSERT_TRUE(WriteSieveFile(sieve, 16, odd).ok());
  const std::string db = dir.File("records.db");
  Completed run = RunCollatzctl({"run", "--from", "1", "--to", "2^24", "--db", db, "--sieve", sieve});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  EXPECT_NE(run.err.find("16-bit sieve"), std::string::npos) << run.err;
  EXPECT_EQ(RecordsCsv(db, "delay"), ReferenceBelow("delay_records_below_2p28.csv", Pow2(24), 0));
  EXPECT_EQ(RecordsCsv(db, "class"), ReferenceBelow("class_records_below_2p28.csv", Pow2(24), 1));

  // Truncated: exit 1 naming the problem, and no database created.
  const std::string content = ReadFileOrEmpty(sieve);
  const std::string damaged = dir.File("damaged.sieve");
  {
    FILE* f = std::fopen(damaged.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(content.data(), 1, content.size() - 5, f);
    std::fclose(f);
  }
  const std::string db2 = dir.File("untouched.db");
  Completed bad = RunCollatzctl({"run", "--from", "1", "--to", "2^20", "--db", db2, "--sieve", damaged});
  EXPECT_EQ(bad.exit_code, 1) << Describe(bad);
  EXPECT_NE(bad.err.find("damaged.sieve"), std::string::npos) << bad.err;
  EXPECT_FALSE(FileExists(db2));
  // --sieve and --sieve-bits together are a usage error.
  Completed both = RunCollatzctl({"run", "--to", "2^20", "--db", db2, "--sieve", sieve, "--sieve-bits", "19"});
  EXPECT_EQ(both.exit_code, 2) << Describe(both);
}

TEST(CollatzctlBench, MeasuresNearTheGivenHeight) {
  Completed bench = RunCollatzctl({"bench", "--at", "2^40", "--numbers", "2^22", "--threads", "1"});
  ASSERT_EQ(bench.exit_code, 0) << Describe(bench);
  EXPECT_NE(bench.out.find("numbers/s"), std::string::npos) << bench.out;
  EXPECT_NE(bench.out.find("sieve 19 bits"), std::string::npos) << bench.out;
  // The published records below 2^40 were imported: the floor is the largest delay among them.
  std::istringstream in(ReadFileOrEmpty(kData + "/delay_records.csv"));
  std::string line;
  std::getline(in, line);
  unsigned floor = 0;
  while (std::getline(in, line)) {
    u128 n = 0;
    ASSERT_TRUE(ParseDecimalU128(line.substr(0, line.find(',')), &n).ok());
    if (n < Pow2(40)) floor = std::max(floor, static_cast<unsigned>(std::stoul(line.substr(line.find(',') + 1))));
  }
  ASSERT_GT(floor, 1000u);
  EXPECT_NE(bench.out.find("floor " + std::to_string(floor) + ","), std::string::npos) << bench.out;

  EXPECT_NE(bench.out.find("context trusted: imported delay records complete below 1099511627776"), std::string::npos)
      << bench.out;
  EXPECT_NE(bench.out.find(", 90 known records (complete below 1099511627776)"), std::string::npos) << bench.out;

  // --context floor: the same floor (the published list is complete below 2^40) but no record
  // table; --context none: floor 0.
  Completed floor_only = RunCollatzctl({"bench", "--at", "2^40", "--numbers", "2^20", "--threads", "1", "--context", "floor"});
  ASSERT_EQ(floor_only.exit_code, 0) << Describe(floor_only);
  EXPECT_NE(floor_only.out.find("context floor: the provable floor"), std::string::npos) << floor_only.out;
  EXPECT_NE(floor_only.out.find("floor " + std::to_string(floor) + ", 0 open holes"), std::string::npos) << floor_only.out;
  EXPECT_NE(floor_only.out.find("0 known records (complete below 0)"), std::string::npos) << floor_only.out;
  Completed none = RunCollatzctl({"bench", "--at", "2^40", "--numbers", "2^20", "--threads", "1", "--context", "none"});
  ASSERT_EQ(none.exit_code, 0) << Describe(none);
  EXPECT_NE(none.out.find("context none: "), std::string::npos) << none.out;
  EXPECT_NE(none.out.find("spec: floor 0, 0 open holes"), std::string::npos) << none.out;
  Completed bad = RunCollatzctl({"bench", "--context", "some"});
  EXPECT_EQ(bad.exit_code, 2) << Describe(bad);
  EXPECT_NE(bad.err.find("--context must be none, floor or trusted"), std::string::npos) << bad.err;

  // --record-window moves --at to the aligned window holding the next published record: the
  // result line shows it; --check compares a slice with the CPU engine.
  Completed window = RunCollatzctl({"bench", "--at", "2^40", "--numbers", "2^22", "--threads", "1", "--record-window",
                                    "--check", "--check-numbers", "2^21"});
  ASSERT_EQ(window.exit_code, 0) << Describe(window);
  EXPECT_NE(window.out.find("is on the ladder"), std::string::npos) << window.out;
  EXPECT_EQ(window.out.find("ladder (empty)"), std::string::npos) << window.out;
  EXPECT_NE(window.out.find("check: ["), std::string::npos) << window.out;
  EXPECT_NE(window.out.find("IDENTICAL"), std::string::npos) << window.out;
  EXPECT_EQ(window.out.find(" 0 ladder entries, 0 class minima, tallies"), std::string::npos)
      << "the checked slice must reach the record: " << window.out;
  Completed bad_check = RunCollatzctl({"bench", "--check", "--check-numbers", "0"});
  EXPECT_EQ(bad_check.exit_code, 2) << Describe(bad_check);
  Completed no_record = RunCollatzctl({"bench", "--at", "2^100", "--record-window"});
  EXPECT_EQ(no_record.exit_code, 2) << Describe(no_record);
  EXPECT_NE(no_record.err.find("no odd published delay record"), std::string::npos) << no_record.err;

  Completed missing = RunCollatzctl({"bench", "--numbers", "2^20", "--records", "/nonexistent/records.csv"});
  EXPECT_EQ(missing.exit_code, 1) << Describe(missing);
  EXPECT_NE(missing.err.find("/nonexistent/records.csv"), std::string::npos) << missing.err;
}

// "spec: floor F, H open holes, ..." -> H (or -1).
long OpenHoles(const std::string& out) {
  const size_t at = out.find(" open holes");
  if (at == std::string::npos) return -1;
  const size_t start = out.rfind(' ', at - 1) + 1;
  return std::stol(out.substr(start, at - start));
}

TEST(CollatzctlBench, ClassBenchImportsTheClassRecordsBelow2p28) {
  TempDir dir;
  const std::vector<std::string> args = {"bench", "--at", "2^40", "--numbers", "2^20", "--threads", "1",
                                         "--kinds", "delay,class", "--no-class-members"};
  Completed with = RunCollatzctl(args);
  ASSERT_EQ(with.exit_code, 0) << Describe(with);
  // The copy of shared/data's class records compiled into the binary (a verbatim copy;
  // core/embedded_records_test.cc compares them), trusted up to its largest n.
  std::vector<Record> classes;
  ASSERT_TRUE(ReadRecordsCsv(kData + "/class_records_below_2p28.csv", RecordCsvKind::kClass, &classes).ok());
  u128 largest = 0;
  for (const Record& r : classes) largest = std::max(largest, r.n);
  const std::string imported = "class records complete below " + ToDecimal(largest + 1) +
                               " (built-in data/class_records_below_2p28.csv)";
  EXPECT_NE(with.out.find(imported), std::string::npos) << with.out;
  EXPECT_NE(with.out.find("(built-in data/published_delay_records.csv)"), std::string::npos) << with.out;

  // Without them (a list with only its header) more classes stay open.
  const std::string header_only = dir.File("no_classes.csv");
  std::ofstream(header_only) << "delay,n\n";
  std::vector<std::string> without_args = args;
  without_args.insert(without_args.end(), {"--class-records", header_only});
  Completed without = RunCollatzctl(without_args);
  ASSERT_EQ(without.exit_code, 0) << Describe(without);
  EXPECT_NE(without.out.find("class records complete below 1 ("), std::string::npos) << without.out;
  EXPECT_GT(OpenHoles(with.out), 0);
  EXPECT_LT(OpenHoles(with.out), OpenHoles(without.out)) << with.out << without.out;

  // By default members found below --at in the inverse tree of the delay records close
  // more of them; the bench says how many.
  Completed members = RunCollatzctl({args.begin(), args.end() - 1});
  ASSERT_EQ(members.exit_code, 0) << Describe(members);
  const std::string closed = "open holes (" + std::to_string(OpenHoles(with.out) - OpenHoles(members.out)) +
                             " more closed by members found below --at)";
  EXPECT_LT(OpenHoles(members.out), OpenHoles(with.out)) << members.out;
  EXPECT_NE(members.out.find(closed), std::string::npos) << members.out;

  // A wrong row is refused, naming the file; so is a usage error in --baseline-numbers.
  const std::string wrong = dir.File("wrong.csv");
  std::ofstream(wrong) << "delay,n\n0,1\n1,2\n7,3\n8,7\n";  // delay(7) = 16, not 8
  std::vector<std::string> wrong_args = args;
  wrong_args.insert(wrong_args.end(), {"--class-records", wrong});
  Completed refused = RunCollatzctl(wrong_args);
  EXPECT_EQ(refused.exit_code, 1) << Describe(refused);
  EXPECT_NE(refused.err.find(wrong + ": class records: row 7,8 is wrong"), std::string::npos) << refused.err;
  Completed bad = RunCollatzctl({"bench", "--numbers", "2^20", "--baseline-numbers", "2^41"});
  EXPECT_EQ(bad.exit_code, 2) << Describe(bad);
}

}  // namespace
}  // namespace collatz::e2e
