#include "worker/gpu_discovery.h"

#include <gtest/gtest.h>

namespace collatz::worker {
namespace {

std::vector<GpuInfo> ThreeGpus() {
  std::vector<GpuInfo> v(3);
  const char* uuids[] = {"GPU-0a1b2c3d-0000-1111-2222-333344445555", "GPU-9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff",
                         "GPU-0a1b9999-0000-1111-2222-333344445555"};
  for (int i = 0; i < 3; ++i) {
    v[i].index = i;
    v[i].model = "NVIDIA H200";
    v[i].uuid = uuids[i];
  }
  return v;
}

std::vector<int> Indices(const std::vector<GpuInfo>& v) {
  std::vector<int> out;
  for (const auto& g : v) out.push_back(g.index);
  return out;
}

TEST(GpuSelectionTest, AllAndIndicesAndUuids) {
  std::vector<GpuInfo> out;
  ASSERT_TRUE(SelectGpus("all", ThreeGpus(), &out).ok());
  EXPECT_EQ(Indices(out), (std::vector<int>{0, 1, 2}));
  ASSERT_TRUE(SelectGpus("2,0", ThreeGpus(), &out).ok());
  EXPECT_EQ(Indices(out), (std::vector<int>{2, 0}));
  ASSERT_TRUE(SelectGpus("GPU-9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff", ThreeGpus(), &out).ok());
  EXPECT_EQ(Indices(out), (std::vector<int>{1}));
  ASSERT_TRUE(SelectGpus(" 0a1b99 , 1", ThreeGpus(), &out).ok());  // prefix without GPU-, case-insensitive
  EXPECT_EQ(Indices(out), (std::vector<int>{2, 1}));
  ASSERT_TRUE(SelectGpus("all", {}, &out).ok());
  EXPECT_TRUE(out.empty());
}

TEST(GpuSelectionTest, RejectsWhatMatchesNothingOrTwice) {
  std::vector<GpuInfo> out;
  EXPECT_FALSE(SelectGpus("3", ThreeGpus(), &out).ok());
  EXPECT_FALSE(SelectGpus("GPU-ffff", ThreeGpus(), &out).ok());
  EXPECT_FALSE(SelectGpus("0a1b", ThreeGpus(), &out).ok());  // ambiguous prefix
  EXPECT_FALSE(SelectGpus("1,1", ThreeGpus(), &out).ok());
  EXPECT_FALSE(SelectGpus("0,,1", ThreeGpus(), &out).ok());
}

TEST(GpuSelectionTest, FormatsUuidLikeNvidiaSmi) {
  const unsigned char b[16] = {0x0a, 0x1b, 0x2c, 0x3d, 0, 0, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33, 0x44, 0x44, 0x55, 0x55};
  EXPECT_EQ(FormatGpuUuid(b), "GPU-0a1b2c3d-0000-1111-2222-333344445555");
}

}  // namespace
}  // namespace collatz::worker
