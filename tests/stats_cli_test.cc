// End-to-end: collatzctl stats (csv and binary, against SlowDelay), damaged files, usage
// errors, and collatzctl plot (PNG files; skipped where gnuplot is missing).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/stats_command.h"
#include "core/batch_stats.h"
#include "tests/collatzctl_runner.h"

namespace collatz::e2e {
namespace {

// The CSV a correct run must print, from the slow path.
std::string ExpectedCsv(u128 from, u128 to, uint32_t batch) {
  cli::StatsFile f;
  f.from = from;
  f.batch = batch;
  EXPECT_TRUE(ComputeBatchStatsSlow(from, to, batch, &f.batches).ok());
  return cli::FormatStatsCsv(f);
}

bool HaveGnuplot() { return std::system("gnuplot --version > /dev/null 2>&1") == 0; }

bool IsPng(const std::string& path) {
  const std::string b = ReadFileOrEmpty(path);
  return b.size() > 1000 && b.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0;
}

TEST(StatsCli, CsvFromZeroByHand) {
  const Completed c = RunCollatzctl({"stats", "--from", "0", "--to", "16", "--batch", "8", "--format", "csv"});
  ASSERT_EQ(c.exit_code, 0) << Describe(c);
  EXPECT_EQ(c.out, "batch_start,min,avg,max\n0,0,5.571429,16\n8,3,11.750000,19\n");
}

TEST(StatsCli, CsvMatchesSlowPathAbove2p64) {
  const u128 from = (u128{1} << 64) + 1024 * 77;
  const Completed c = RunCollatzctl({"stats", "--from", "2^64+78848", "--to", "2^64+78848+8192", "--format", "csv",
                                     "--threads", "2"});
  ASSERT_EQ(c.exit_code, 0) << Describe(c);
  EXPECT_EQ(c.out, ExpectedCsv(from, from + 8192, 1024));
}

TEST(StatsCli, BinaryFileRoundTripsAndDamageIsRefused) {
  TempDir dir;
  const std::string bin = dir.File("s.stats");
  Completed c = RunCollatzctl({"stats", "--from", "0", "--to", "2^14", "--batch", "256", "--out", bin});
  ASSERT_EQ(c.exit_code, 0) << Describe(c);
  EXPECT_EQ(ReadFileOrEmpty(bin).size(), cli::kStatsHeaderBytes + 64 * cli::kStatsRecordBytes);
  c = RunCollatzctl({"stats", "--in", bin, "--format", "csv"});
  ASSERT_EQ(c.exit_code, 0) << Describe(c);
  EXPECT_EQ(c.out, ExpectedCsv(0, 1 << 14, 256));

  // A flipped payload byte and a truncated copy: failures (exit 1) that say why.
  std::string bytes = ReadFileOrEmpty(bin);
  bytes[cli::kStatsHeaderBytes + 5] ^= 0x01;
  std::ofstream(dir.File("flipped.stats"), std::ios::binary) << bytes;
  c = RunCollatzctl({"stats", "--in", dir.File("flipped.stats"), "--format", "csv"});
  EXPECT_EQ(c.exit_code, 1) << Describe(c);
  EXPECT_NE(c.err.find("payload checksum mismatch"), std::string::npos) << c.err;
  EXPECT_EQ(c.out, "");
  std::ofstream(dir.File("short.stats"), std::ios::binary) << ReadFileOrEmpty(bin).substr(0, 100);
  c = RunCollatzctl({"stats", "--in", dir.File("short.stats"), "--format", "csv"});
  EXPECT_EQ(c.exit_code, 1) << Describe(c);
  EXPECT_NE(c.err.find("truncated"), std::string::npos) << c.err;
  c = RunCollatzctl({"plot", "stats", "--in", dir.File("short.stats"), "--out", dir.File("x.png")});
  EXPECT_EQ(c.exit_code, 1) << Describe(c);
  EXPECT_FALSE(FileExists(dir.File("x.png")));
}

TEST(StatsCli, UsageErrors) {
  TempDir dir;
  const std::string out = dir.File("o.stats");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"stats", "--from", "1", "--to", "2048", "--out", out}, "multiple of the batch size"},
      {{"stats", "--from", "0", "--to", "2000", "--out", out}, "multiple of the batch size"},
      {{"stats", "--from", "2048", "--to", "1024", "--out", out}, "empty range"},
      {{"stats", "--from", "0", "--to", "1024", "--batch", "1", "--out", out}, "batch size"},
      {{"stats", "--from", "0", "--to", "1024", "--format", "xml"}, "--format"},
      {{"stats", "--from", "0", "--to", "1024"}, "--out"},
      {{"stats", "--from", "0", "--to", "1024", "--backend", "tpu", "--out", out}, "--backend"},
      {{"stats", "--from", "0", "--to", "2^128", "--out", out}, "2^128"},
      {{"stats", "--out", out}, "--to"},
      {{"plot", "pie", "--out", out}, "pie"},
      {{"plot", "stats", "--out", dir.File("p.png")}, "--in"},
  };
  for (const auto& [args, message] : cases) {
    const Completed c = RunCollatzctl(args);
    EXPECT_EQ(c.exit_code, 2) << Describe(c);
    EXPECT_NE(c.err.find(message), std::string::npos) << Describe(c);
  }
  EXPECT_FALSE(FileExists(out));
}

TEST(StatsCli, GpuBackendAgreesWithCpuOrSaysWhyNot) {
  const std::vector<std::string> range = {"stats", "--from", "2^33", "--to", "2^33+2^18", "--format", "csv"};
  std::vector<std::string> gpu = range, cpu = range;
  gpu.insert(gpu.end(), {"--backend", "gpu"});
  const Completed g = RunCollatzctl(gpu);
  if (g.exit_code == 0) {
    const Completed c = RunCollatzctl(cpu);
    ASSERT_EQ(c.exit_code, 0) << Describe(c);
    EXPECT_EQ(g.out, c.out);
  } else {
    EXPECT_EQ(g.exit_code, 1) << Describe(g);  // no device, or a build without CUDA
    EXPECT_NE(g.err.find("CUDA"), std::string::npos) << Describe(g);
  }
  const Completed bad = RunCollatzctl({"stats", "--from", "0", "--to", "3000", "--batch", "1000", "--backend", "gpu",
                                       "--format", "csv"});
  EXPECT_EQ(bad.exit_code, 2) << Describe(bad);
  EXPECT_NE(bad.err.find("power-of-two"), std::string::npos) << Describe(bad);
}

TEST(PlotCli, StatsAndRecordsPictures) {
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot not installed (deploy/install-deps.sh installs gnuplot-nox)";
  TempDir dir;
  Completed c = RunCollatzctl({"stats", "--from", "2^20", "--to", "2^20+2^18", "--out", dir.File("s.stats")});
  ASSERT_EQ(c.exit_code, 0) << Describe(c);
  c = RunCollatzctl({"plot", "stats", "--in", dir.File("s.stats"), "--out", dir.File("stats.png")});
  ASSERT_EQ(c.exit_code, 0) << Describe(c);
  EXPECT_TRUE(IsPng(dir.File("stats.png")));

  c = RunCollatzctl({"run", "--to", "2^16", "--db", dir.File("r.db")});
  ASSERT_EQ(c.exit_code, 0) << Describe(c);
  c = RunCollatzctl({"plot", "records", "--db", dir.File("r.db"), "--out", dir.File("records.png")});
  ASSERT_EQ(c.exit_code, 0) << Describe(c);
  EXPECT_TRUE(IsPng(dir.File("records.png")));
  c = RunCollatzctl({"plot", "records", "--db", dir.File("missing.db"), "--out", dir.File("no.png")});
  EXPECT_EQ(c.exit_code, 1) << Describe(c);
}

}  // namespace
}  // namespace collatz::e2e
