// The build flavour (worker/build_flavour.h): empty for a release build, each trait named,
// and the version string that --version prints and registration sends.
#include "worker/build_flavour.h"

#include <gtest/gtest.h>

namespace collatz::worker {
namespace {

TEST(BuildFlavour, ReleaseHasNone) {
  EXPECT_EQ(BuildFlavour(BuildTraits{}), "");
  EXPECT_EQ(VersionWithFlavour("collatz-worker 0.1.0+abc", ""), "collatz-worker 0.1.0+abc");
}

TEST(BuildFlavour, EachTraitIsNamed) {
  EXPECT_EQ(BuildFlavour({.gpu_mutation = 2}), "mutation 2");
  EXPECT_EQ(BuildFlavour({.debug = true}), "debug");
  EXPECT_EQ(BuildFlavour({.test_binary = true}), "test");
  EXPECT_EQ(BuildFlavour({.gpu_mutation = 1, .debug = true, .test_binary = true}), "mutation 1, debug, test");
  EXPECT_EQ(VersionWithFlavour("collatz-worker 1.2.3+abcdef", "mutation 2"), "collatz-worker 1.2.3+abcdef (mutation 2)");
  EXPECT_EQ(VersionWithFlavour("collatz-worker 1.2.3+abcdef", "debug"), "collatz-worker 1.2.3+abcdef (debug)");
}

// This build as compiled: the test binary is always a test build; the rest follows the
// build's own settings (CMAKE_BUILD_TYPE, NDEBUG, COLLATZ_GPU_MUTATION).
TEST(BuildFlavour, ThisBuild) {
  EXPECT_TRUE(ThisBuild(true).test_binary);
  EXPECT_FALSE(ThisBuild(false).test_binary);
  EXPECT_NE(BuildFlavour(ThisBuild(true)).find("test"), std::string::npos);
#ifndef NDEBUG
  EXPECT_TRUE(ThisBuild(false).debug);
#endif
  EXPECT_EQ(ThisBuild(false).gpu_mutation, COLLATZ_WORKER_GPU_MUTATION);
}

}  // namespace
}  // namespace collatz::worker
