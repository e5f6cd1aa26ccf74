#include "storage/n_text.h"

#include <gtest/gtest.h>

#include <random>

namespace collatz {
namespace {

TEST(NText, EncodesFixedWidth) {
  EXPECT_EQ(EncodeNText(0), std::string(39, '0'));
  EXPECT_EQ(EncodeNText(27), std::string(37, '0') + "27");
  EXPECT_EQ(EncodeNText(kU128Max), "340282366920938463463374607431768211455");
}

TEST(NText, RoundTripsAndSortsNumerically) {
  std::mt19937_64 rng(7);
  std::vector<u128> values = {0, 1, 9, 10, Pow2(64) - 1, Pow2(64), kU128Max - 1, kU128Max};
  for (int i = 0; i < 2000; ++i) {
    const u128 v = MakeU128(rng(), rng()) >> (rng() % 128);
    values.push_back(v);
  }
  for (u128 a : values) {
    u128 back = 0;
    ASSERT_TRUE(DecodeNText(EncodeNText(a), &back).ok());
    EXPECT_TRUE(back == a);
  }
  for (size_t i = 0; i + 1 < values.size(); ++i) {
    const u128 a = values[i], b = values[i + 1];
    EXPECT_EQ(a < b, EncodeNText(a) < EncodeNText(b));
  }
}

TEST(NText, RejectsMalformed) {
  u128 v = 0;
  EXPECT_EQ(DecodeNText("27", &v).code(), Status::Code::kCorruption);
  EXPECT_EQ(DecodeNText(std::string(38, '0') + "x", &v).code(), Status::Code::kCorruption);
  EXPECT_EQ(DecodeNText("999999999999999999999999999999999999999", &v).code(), Status::Code::kCorruption);
}

}  // namespace
}  // namespace collatz
