#include "core/stats_file.h"

#include <gtest/gtest.h>

#include "core/step_table.h"
#include "core/tail_table.h"

namespace collatz {
namespace {

StatsFile Computed(u128 from, u128 to, uint32_t batch) {
  StatsFile f;
  f.from = from;
  f.batch = batch;
  EXPECT_TRUE(ComputeBatchStatsSlow(from, to, batch, &f.batches).ok());
  return f;
}

TEST(CoreStatsFile, RoundTripOfComputedBatchesAboveTwoTo64) {
  const u128 from = Pow2(70);
  const StatsFile f = Computed(from, from + 8 * 64, 64);
  const std::string bytes = EncodeStatsFile(f);
  ASSERT_EQ(bytes.size(), kStatsHeaderBytes + 8 * kStatsRecordBytes);
  StatsFile g;
  ASSERT_TRUE(DecodeStatsFile(bytes, "x", &g).ok());
  EXPECT_EQ(g.from, f.from);
  EXPECT_EQ(g.batch, 64u);
  EXPECT_EQ(g.batches, f.batches);
  EXPECT_EQ(EncodeStatsFile(g), bytes);  // deterministic: same batches, same bytes
}

TEST(CoreStatsFile, CountsComeFromTheRange) {
  const StatsFile f = Computed(0, 32, 16);
  StatsFile g;
  ASSERT_TRUE(DecodeStatsFile(EncodeStatsFile(f), "x", &g).ok());
  EXPECT_EQ(g.batches[0].count, 15u);  // N = 0 is not counted
  EXPECT_EQ(g.batches[1].count, 16u);
}

TEST(CoreStatsFile, EveryBitFlipIsRefused) {
  const std::string good = EncodeStatsFile(Computed(1024, 1024 + 4 * 32, 32));
  for (size_t i = 0; i < good.size() * 8; ++i) {
    std::string b = good;
    b[i / 8] = static_cast<char>(b[i / 8] ^ (1 << (i % 8)));
    StatsFile g;
    EXPECT_FALSE(DecodeStatsFile(b, "f", &g).ok()) << "bit " << i;
  }
}

TEST(CoreStatsFile, AverageOutsideMinMaxIsRefusedEvenWithGoodChecksums) {
  StatsFile f = Computed(64, 128, 32);
  f.batches[1].sum = static_cast<uint64_t>(f.batches[1].max) * 32 + 1;  // avg > max
  StatsFile g;
  const Status st = DecodeStatsFile(EncodeStatsFile(f), "f", &g);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("inconsistent"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace collatz
