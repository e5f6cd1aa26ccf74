#include "core/parallel_tasks.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <vector>

namespace collatz {
namespace {

// Every task runs exactly once, whatever the thread count (more threads than tasks too).
TEST(ParallelTasks, RunTasksRunsEachTaskOnce) {
  for (int threads : {1, 2, 7, 64}) {
    std::vector<std::atomic<int>> runs(50);
    std::vector<size_t> order(runs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = order.size() - 1 - i;
    RunTasks(order, threads, [&](size_t i) { ++runs[i]; });
    for (size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].load(), 1) << "task " << i << ", threads " << threads;
  }
  RunTasks({}, 4, [](size_t) { FAIL() << "no task to run"; });
}

TEST(ParallelTasks, LargestFirstKeepsTiesInIndexOrder) {
  EXPECT_EQ(LargestFirst({3, 9, 3, 0, 9}), (std::vector<size_t>{1, 4, 0, 2, 3}));
  EXPECT_TRUE(LargestFirst({}).empty());
}

// The chunks are consecutive, cover [0, n) once, differ in length by at most one, and each
// knows its index; n smaller than the chunk count leaves some empty.
TEST(ParallelTasks, ParallelChunksCoverTheRangeInOrder) {
  for (const auto& [n, chunks] : {std::pair<size_t, int>{1000, 7}, {5, 8}, {0, 3}, {64, 1}, {10, 0}}) {
    const int count = chunks < 1 ? 1 : chunks;
    std::vector<std::pair<size_t, size_t>> seen(static_cast<size_t>(count), {~size_t{0}, 0});
    std::mutex mu;
    ParallelChunks(n, chunks, [&](int c, size_t begin, size_t end) {
      std::lock_guard<std::mutex> lock(mu);
      seen[static_cast<size_t>(c)] = {begin, end};
    });
    size_t at = 0;
    for (const auto& [begin, end] : seen) {
      EXPECT_EQ(begin, at) << "n " << n << " chunks " << chunks;
      EXPECT_LE(end - begin, n / static_cast<size_t>(count) + 1);
      EXPECT_GE(end - begin, n / static_cast<size_t>(count));
      at = end;
    }
    EXPECT_EQ(at, n);
  }
}

}  // namespace
}  // namespace collatz
