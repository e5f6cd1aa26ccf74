// The stats file format (docs/STATS_FORMAT.md): round trip, every kind of damage refused,
// and the CSV form.
#include <gtest/gtest.h>

#include "cli/plot_command.h"
#include "cli/stats_command.h"

namespace collatz::cli {
namespace {

StatsFile Sample() {
  StatsFile f;
  f.from = MakeU128(3, 1024 * 5);  // above 2^64
  f.batch = 1024;
  for (int b = 0; b < 5; ++b) f.batches.push_back(BatchStats{static_cast<uint16_t>(100 + b), 900, 1024, 1024u * 400 + b});
  return f;
}

TEST(StatsFile, RoundTrip) {
  const StatsFile f = Sample();
  const std::string bytes = EncodeStatsFile(f);
  ASSERT_EQ(bytes.size(), kStatsHeaderBytes + 5 * kStatsRecordBytes);
  EXPECT_EQ(bytes.substr(0, 8), "CLZSTATS");
  StatsFile g;
  const Status st = DecodeStatsFile(bytes, "x", &g);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(g.from == f.from);
  EXPECT_EQ(g.batch, f.batch);
  EXPECT_EQ(g.batches, f.batches);
}

TEST(StatsFile, FirstBatchCountsOneLess) {
  StatsFile f;
  f.from = 0;
  f.batch = 8;
  f.batches = {BatchStats{0, 16, 7, 39}, BatchStats{3, 19, 8, 94}};
  StatsFile g;
  ASSERT_TRUE(DecodeStatsFile(EncodeStatsFile(f), "x", &g).ok());
  EXPECT_EQ(g.batches, f.batches);
  EXPECT_EQ(FormatStatsCsv(g), "batch_start,min,avg,max\n0,0,5.571429,16\n8,3,11.750000,19\n");
}

Status DecodeMutated(const std::function<void(std::string*)>& mutate) {
  std::string bytes = EncodeStatsFile(Sample());
  mutate(&bytes);
  StatsFile g;
  return DecodeStatsFile(bytes, "f.stats", &g);
}

void ExpectRefused(const std::function<void(std::string*)>& mutate, const std::string& message) {
  const Status st = DecodeMutated(mutate);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find(message), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("f.stats"), std::string::npos) << st.ToString();
}

TEST(StatsFile, DamageIsRefused) {
  ExpectRefused([](std::string* b) { b->resize(40); }, "truncated");
  ExpectRefused([](std::string* b) { b->pop_back(); }, "truncated");
  ExpectRefused([](std::string* b) { b->push_back('\0'); }, "trailing bytes");
  ExpectRefused([](std::string* b) { (*b)[0] = 'X'; }, "bad magic");
  ExpectRefused([](std::string* b) { (*b)[8] = 2; }, "version 2");
  ExpectRefused([](std::string* b) { (*b)[40] ^= 1; }, "header checksum");  // the batch count
  ExpectRefused([](std::string* b) { (*b)[16] ^= 4; }, "header checksum");  // the batch size
  ExpectRefused([](std::string* b) { (*b)[kStatsHeaderBytes + 7] ^= 0x10; }, "payload checksum");
  ExpectRefused([](std::string* b) { b->back() ^= 1; }, "payload checksum");
  // Every single-bit flip anywhere is caught.
  const std::string good = EncodeStatsFile(Sample());
  for (size_t i = 0; i < good.size() * 8; ++i) {
    std::string b = good;
    b[i / 8] = static_cast<char>(b[i / 8] ^ (1 << (i % 8)));
    StatsFile g;
    EXPECT_FALSE(DecodeStatsFile(b, "f", &g).ok()) << "bit " << i;
  }
}

TEST(StatsFile, AverageIsExactAndRoundedHalfUp) {
  EXPECT_EQ(FormatAverage(39, 7), "5.571429");
  EXPECT_EQ(FormatAverage(94, 8), "11.750000");
  EXPECT_EQ(FormatAverage(0, 1023), "0.000000");
  EXPECT_EQ(FormatAverage(1, 2000000), "0.000001");  // 0.0000005 rounds up
  EXPECT_EQ(FormatAverage(1, 2000001), "0.000000");
  EXPECT_EQ(FormatAverage(uint64_t{65535} * (1u << 24), 1u << 24), "65535.000000");
}

TEST(PlotScripts, QuoteAndDownsample) {
  EXPECT_EQ(GnuplotQuote("a'b.png"), "'a''b.png'");
  StatsFile f;
  f.from = 1u << 20;
  f.batch = 32;
  for (int b = 0; b < 10000; ++b) f.batches.push_back(BatchStats{static_cast<uint16_t>(b % 50), 300, 32, 32u * 200});
  PlotArgs args;
  args.out = "x.png";
  const std::string s = StatsPlotScript(f, args, 100);
  // 100 points per series, each merging 100 batches: min over 0..49 is 0 everywhere.
  const std::string head = "$batches << EOD\n";
  const size_t block = s.find(head);
  ASSERT_NE(block, std::string::npos);
  const size_t end = s.find("EOD\n", block + head.size());
  const std::string rows = s.substr(block + head.size(), end - block - head.size());
  EXPECT_EQ(std::count(rows.begin(), rows.end(), '\n'), 100);
  EXPECT_EQ(rows.substr(0, rows.find('\n')), "1600 0 200.000000 300") << rows.substr(0, 100);
  EXPECT_NE(s.find("set output 'x.png'"), std::string::npos);
}

}  // namespace
}  // namespace collatz::cli
