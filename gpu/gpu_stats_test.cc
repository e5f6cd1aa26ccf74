// GPU batch statistics against the CPU (FastDelay) and the slow path. Skips without a device.
#include "gpu/gpu_stats.h"

#include <gtest/gtest.h>

#include <random>

namespace collatz {
namespace {

class GpuStatsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!GpuStats::DeviceAvailable()) GTEST_SKIP() << "no CUDA device";
  }

  // mode: 0 fixed stride, 1 lane refill, 2 two walks per thread.
  static std::unique_ptr<GpuStats> Make(int sieve_bits, int tail_bits, int threads, uint64_t launch_numbers,
                                        int mode = 0, int step_bits = 13) {
    GpuStatsOptions o;
    o.step_bits = step_bits;
    o.refill = mode == 1;
    o.pairs = mode == 2;
    o.sieve_bits = sieve_bits;
    o.tail_bits = tail_bits;
    o.block_threads = threads;
    o.launch_numbers = launch_numbers;
    std::unique_ptr<GpuStats> g;
    const Status st = GpuStats::Create(o, &g);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return g;
  }

  static const FastDelay& Fast() {
    static const FastDelay fast(std::make_shared<const StepTable>(16), std::make_shared<const TailTable>(20));
    return fast;
  }

  // GPU == CPU for every batch; returns the GPU timings.
  static GpuStatsTimings ExpectSameAsCpu(GpuStats& g, u128 from, u128 to, uint32_t batch, bool also_slow = false) {
    std::vector<BatchStats> gpu, cpu;
    GpuStatsTimings t;
    Status st = g.Compute(from, to, batch, &gpu, &t);
    EXPECT_TRUE(st.ok()) << st.ToString();
    EXPECT_TRUE(ComputeBatchStats(Fast(), from, to, batch, 0, &cpu).ok());
    EXPECT_EQ(gpu.size(), cpu.size());
    size_t bad = 0;
    for (size_t b = 0; b < std::min(gpu.size(), cpu.size()); ++b) {
      if (!(gpu[b] == cpu[b]) && ++bad <= 5) {
        ADD_FAILURE() << "batch at " << ToDecimal(from + static_cast<u128>(b) * batch) << ": gpu min " << gpu[b].min
                      << " max " << gpu[b].max << " count " << gpu[b].count << " sum " << gpu[b].sum << "; cpu min "
                      << cpu[b].min << " max " << cpu[b].max << " count " << cpu[b].count << " sum " << cpu[b].sum;
      }
    }
    EXPECT_EQ(bad, 0u);
    if (also_slow) {
      std::vector<BatchStats> slow;
      EXPECT_TRUE(ComputeBatchStatsSlow(from, to, batch, &slow).ok());
      EXPECT_TRUE(slow == gpu);
    }
    return t;
  }
};

TEST_F(GpuStatsTest, FromZeroAcrossBlocksAndLaunches) {
  auto g = Make(16, 24, 256, uint64_t{1} << 18);
  ASSERT_NE(g, nullptr);
  ExpectSameAsCpu(*g, 0, uint64_t{1} << 21, 1024);
  ExpectSameAsCpu(*g, 0, 4096, 32, /*also_slow=*/true);
}

TEST_F(GpuStatsTest, RandomRangesUnalignedToBlocks) {
  for (int mode_and_steps : {0, 1, 2, 0 + 3, 2 + 3}) {
  const int mode = mode_and_steps % 3, step_bits = mode_and_steps >= 3 ? 19 : 13;
  SCOPED_TRACE("mode " + std::to_string(mode) + ", S " + std::to_string(step_bits));
  auto g = Make(16, 28, 512, uint64_t{1} << 20, mode, step_bits);
  ASSERT_NE(g, nullptr);
  std::mt19937_64 rng(66);
  const int exponents[] = {30, 40, 50, 63, 64, 65, 70, 100};
  for (int e : exponents) {
    const uint32_t batch = 32u << (rng() % 6);
    u128 start = (u128{1} << e) + ((static_cast<u128>(rng()) << 64 | rng()) % (u128{1} << e));
    start -= start % batch;
    const u128 len = static_cast<u128>(batch) * (1 + rng() % (e >= 64 ? 200 : 3000));
    SCOPED_TRACE(ToDecimal(start) + " batch " + std::to_string(batch));
    ExpectSameAsCpu(*g, start, start + len, batch, e >= 64);
  }
  }
}

TEST_F(GpuStatsTest, OtherTableShapes) {
  for (int k : {12, 18}) {
    auto g = Make(k, 20, 1024, uint64_t{1} << 22, /*mode=*/k == 18 ? 1 : 2);
    ASSERT_NE(g, nullptr);
    const u128 start = (u128{1} << 45) + 12345 * 1024;
    ExpectSameAsCpu(*g, start, start + (uint64_t{1} << 20), 1024);
  }
}

TEST_F(GpuStatsTest, WalksPast128BitsAreFinishedOnTheHost) {
  for (int mode : {0, 1, 2}) {
  SCOPED_TRACE("mode " + std::to_string(mode));
  auto g = Make(16, 24, 256, uint64_t{1} << 17, mode);
  ASSERT_NE(g, nullptr);
  u128 past128 = 0;
  ASSERT_TRUE(ParseDecimalU128("48503373501652785087", &past128).ok());
  const u128 start = past128 - past128 % 1024 - 2048;
  ExpectSameAsCpu(*g, start, start + 8192, 1024, /*also_slow=*/true);
  // Near 2^127 most walks leave 128 bits at once.
  const u128 top = u128{1} << 127;
  const GpuStatsTimings t = ExpectSameAsCpu(*g, top, top + (uint64_t{1} << 17), 1024);
  EXPECT_GT(t.host_finished, 1000u);
  }
}

TEST_F(GpuStatsTest, StepTableInGlobalMemory) {
  for (int S : {16, 19}) {
    GpuStatsOptions o;
    o.sieve_bits = 16;
    o.step_bits = S;
    o.tail_bits = 24;
    o.refill = S == 19;
    o.pairs = S == 16;
    o.launch_numbers = uint64_t{1} << 20;
    std::unique_ptr<GpuStats> g;
    const Status st = GpuStats::Create(o, &g);
    ASSERT_TRUE(st.ok()) << st.ToString();
    for (int e : {40, 66, 127}) {
      const u128 start = (u128{1} << e) + 1024 * 333;
      ExpectSameAsCpu(*g, start, start + (uint64_t{1} << 18), 1024);
    }
  }
}

TEST_F(GpuStatsTest, RejectsBadBatches) {
  auto g = Make(16, 24, 256, uint64_t{1} << 20);
  ASSERT_NE(g, nullptr);
  std::vector<BatchStats> out;
  EXPECT_FALSE(g->Compute(0, 3000, 1000, &out).ok());      // not a power of two
  EXPECT_FALSE(g->Compute(0, 1 << 18, 1 << 17, &out).ok());  // above 2^k
  EXPECT_FALSE(g->Compute(16, 1024, 16, &out).ok());       // below 32
  EXPECT_FALSE(g->Compute(1024, 1024, 1024, &out).ok());   // empty
}

}  // namespace
}  // namespace collatz
