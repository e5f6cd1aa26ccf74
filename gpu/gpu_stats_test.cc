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

  // mode: 0 fixed stride, 1 lane refill, 2 two walks per thread; variant: bits of the fixed
  // stride (1 prefetch tail, 2 64-bit steps, 4 fast reduce).
  static std::unique_ptr<GpuStats> Make(int sieve_bits, int tail_bits, int threads, uint64_t launch_numbers,
                                        int mode = 0, int step_bits = 13, int variant = 7) {
    GpuStatsOptions o;
    o.step_bits = step_bits;
    o.refill = mode == 1;
    o.pairs = mode == 2;
    o.prefetch_tail = (variant & 1) != 0;
    o.fast_steps = (variant & 2) != 0;
    o.fast_reduce = (variant & 4) != 0;
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
    std::vector<BatchStats> cpu;
    EXPECT_TRUE(ComputeBatchStats(Fast(), from, to, batch, 0, &cpu).ok());
    return ExpectSame(g, from, to, batch, cpu, also_slow);
  }

  // GPU == cpu (computed by the caller) for every batch; returns the GPU timings.
  static GpuStatsTimings ExpectSame(GpuStats& g, u128 from, u128 to, uint32_t batch, const std::vector<BatchStats>& cpu,
                                    bool also_slow = false) {
    std::vector<BatchStats> gpu(3, BatchStats{1, 2, 3, 4});  // old contents must go
    GpuStatsTimings t;
    Status st = g.Compute(from, to, batch, &gpu, &t);
    EXPECT_TRUE(st.ok()) << st.ToString();
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
  // The ranges and their CPU results once; then every walk mode and variant against them.
  struct Range {
    u128 start, end;
    uint32_t batch;
    std::vector<BatchStats> cpu;
  };
  std::vector<Range> ranges;
  std::mt19937_64 rng(66);
  for (int e : {30, 40, 50, 63, 64, 65, 70, 100}) {
    const uint32_t batch = 32u << (rng() % 6);
    u128 start = (u128{1} << e) + ((static_cast<u128>(rng()) << 64 | rng()) % (u128{1} << e));
    start -= start % batch;
    const u128 len = static_cast<u128>(batch) * (1 + rng() % (e >= 64 ? 200 : 3000));
    Range r{start, start + len, batch, {}};
    EXPECT_TRUE(ComputeBatchStats(Fast(), r.start, r.end, batch, 0, &r.cpu).ok());
    if (e >= 64) {
      std::vector<BatchStats> slow;
      EXPECT_TRUE(ComputeBatchStatsSlow(r.start, r.end, batch, &slow).ok());
      EXPECT_TRUE(slow == r.cpu);
    }
    ranges.push_back(std::move(r));
  }
  struct Config {
    int mode, variant, step_bits;
  };
  const Config configs[] = {{0, 0, 13}, {0, 7, 13}, {1, 4, 13}, {2, 4, 13}, {0, 7, 19},
                            {0, 5, 19}, {0, 6, 19}, {0, 4, 16}, {2, 4, 19}, {0, 6, 13}};
  for (const Config& c : configs) {
    SCOPED_TRACE("mode " + std::to_string(c.mode) + ", variant " + std::to_string(c.variant) + ", S " +
                 std::to_string(c.step_bits));
    auto g = Make(16, 28, 512, uint64_t{1} << 20, c.mode, c.step_bits, c.variant);
    ASSERT_NE(g, nullptr);
    for (const Range& r : ranges) {
      SCOPED_TRACE(ToDecimal(r.start) + " batch " + std::to_string(r.batch));
      ExpectSame(*g, r.start, r.end, r.batch, r.cpu);
    }
  }
}

TEST_F(GpuStatsTest, OtherTableShapes) {
  for (int k : {12, 17, 18}) {
    auto g = Make(k, 20, 1024, uint64_t{1} << 22, /*mode=*/k == 18 ? 1 : k == 17 ? 0 : 2, 13, /*variant=*/6);
    ASSERT_NE(g, nullptr);
    const u128 start = (u128{1} << 45) + 12345 * 1024;
    ExpectSameAsCpu(*g, start, start + (uint64_t{1} << 20), 1024);
  }
}

TEST_F(GpuStatsTest, WalksPast128BitsAreFinishedOnTheHost) {
  for (int mode_variant : {7, 6, 0, 10 + 4, 20 + 4}) {
  const int mode = mode_variant / 10, variant = mode_variant % 10;
  SCOPED_TRACE("mode " + std::to_string(mode) + ", variant " + std::to_string(variant));
  auto g = Make(16, 24, 256, uint64_t{1} << 17, mode, variant == 0 ? 13 : 19, variant);
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

TEST_F(GpuStatsTest, ComputeStreamHandsOverEveryBatchInOrder) {
  auto g = Make(17, 24, 1024, uint64_t{1} << 18, 0, 19);
  ASSERT_NE(g, nullptr);
  const u128 from = (u128{1} << 40) + 3 * 1024, to = from + (uint64_t{1} << 21) + 5 * 1024;
  std::vector<BatchStats> whole, pieces;
  ASSERT_TRUE(g->Compute(from, to, 1024, &whole).ok());
  int calls = 0;
  const Status st = g->ComputeStream(from, to, 1024, [&](u128 first, const BatchStats* b, size_t count) {
    EXPECT_TRUE(first == from + static_cast<u128>(pieces.size()) * 1024);
    EXPECT_LE(count, (uint64_t{1} << 18) / 1024);
    pieces.insert(pieces.end(), b, b + count);
    ++calls;
    return Status::Ok();
  });
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_GE(calls, 8);
  EXPECT_TRUE(pieces == whole);
  std::vector<BatchStats> cpu;
  ASSERT_TRUE(ComputeBatchStats(Fast(), from, to, 1024, 0, &cpu).ok());
  EXPECT_TRUE(cpu == whole);
  // A sink's error stops the computation and comes back.
  const Status stopped = g->ComputeStream(from, to, 1024, [](u128, const BatchStats*, size_t) {
    return Status::IOError("disk full");
  });
  EXPECT_FALSE(stopped.ok());
  EXPECT_NE(stopped.ToString().find("disk full"), std::string::npos);
  // The engine is usable again afterwards.
  std::vector<BatchStats> again;
  ASSERT_TRUE(g->Compute(from, to, 1024, &again).ok());
  EXPECT_TRUE(again == whole);
}

TEST_F(GpuStatsTest, RejectsVariantsThatAreNotCompiled) {
  GpuStatsOptions o;
  o.fast_reduce = false;  // prefetch_tail and fast_steps are on by default
  o.tail_bits = 20;
  std::unique_ptr<GpuStats> g;
  EXPECT_FALSE(GpuStats::Create(o, &g).ok());
  GpuStatsOptions too_wide;
  too_wide.tail_bits = 35;
  EXPECT_FALSE(GpuStats::Create(too_wide, &g).ok());
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
