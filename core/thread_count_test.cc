#include "core/thread_count.h"

#include <thread>

#include <gtest/gtest.h>

namespace collatz {
namespace {

TEST(ThreadCountTest, PositiveRequestIsKept) {
  EXPECT_EQ(ResolveThreadCount(1), 1);
  EXPECT_EQ(ResolveThreadCount(7), 7);
}

TEST(ThreadCountTest, ZeroOrLessMeansEveryHardwareThread) {
  const unsigned hardware = std::thread::hardware_concurrency();
  const int expected = hardware > 0 ? static_cast<int>(hardware) : 1;
  EXPECT_EQ(ResolveThreadCount(0), expected);
  EXPECT_EQ(ResolveThreadCount(-3), expected);
  EXPECT_GE(ResolveThreadCount(0), 1);
}

}  // namespace
}  // namespace collatz
