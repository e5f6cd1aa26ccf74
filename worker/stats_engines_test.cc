#include "worker/stats_engines.h"

#include <gtest/gtest.h>

#include "core/step_table.h"
#include "core/tail_table.h"

namespace collatz::worker {
namespace {

std::shared_ptr<const FastDelay> Delay() {
  return std::make_shared<const FastDelay>(std::make_shared<const StepTable>(12),
                                           std::make_shared<const TailTable>(16, 1));
}

TEST(CpuStatsEngine, ChunksGiveThePlainBatchesAndCountProgress) {
  for (u128 from : {u128{0}, Pow2(40), Pow2(64) - 4096}) {
    const u128 to = from + 10 * 512;
    // Chunks of 3 batches (1600 rounds down): 4 chunks, the last one short.
    auto engine = MakeCpuStatsEngine(Delay(), 1, 1600);
    std::vector<BatchStats> got, want;
    std::atomic<uint64_t> done{0};
    ASSERT_TRUE(engine->Compute(from, to, 512, &got, &done, nullptr).ok());
    ASSERT_TRUE(ComputeBatchStatsSlow(from, to, 512, &want).ok());
    EXPECT_EQ(got, want) << ToDecimal(from);
    EXPECT_EQ(done.load(), 10u * 512);
  }
}

TEST(CpuStatsEngine, CancelStopsBetweenChunksAndBadRangesAreRefused) {
  auto engine = MakeCpuStatsEngine(Delay(), 1, 1024);
  std::vector<BatchStats> out;
  std::atomic<bool> cancel{true};
  EXPECT_EQ(engine->Compute(0, 4096, 1024, &out, nullptr, &cancel).code(), Status::Code::kUnavailable);
  EXPECT_FALSE(engine->Compute(100, 4096, 1024, &out, nullptr, nullptr).ok());
  EXPECT_NE(engine->Describe().find("cpu"), std::string::npos);
}

TEST(GpuStatsEngine, AbsentFromBuildsWithoutIt) {
  std::unique_ptr<StatsEngine> gpu;
  const Status st = MakeGpuStatsEngine(0, Delay(), 1, &gpu);
  EXPECT_EQ(st.ok(), BuildHasGpuStats());
}

}  // namespace
}  // namespace collatz::worker
