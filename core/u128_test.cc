#include "core/u128.h"

#include <gtest/gtest.h>

namespace collatz {
namespace {

u128 MustParse(const std::string& s) {
  u128 v = 0;
  Status st = ParseU128(s, &v);
  EXPECT_TRUE(st.ok()) << s << ": " << st.ToString();
  return v;
}

std::string ParseError(const std::string& s) {
  u128 v = 12345;
  Status st = ParseU128(s, &v);
  EXPECT_FALSE(st.ok()) << s << " parsed as " << ToDecimal(v);
  EXPECT_EQ(v, static_cast<u128>(12345)) << "output written on error";
  return st.message();
}

TEST(U128Test, ParsesEveryForm) {
  EXPECT_EQ(MustParse("0"), 0u);
  EXPECT_EQ(MustParse("27"), 27u);
  EXPECT_EQ(MustParse("0x1F"), 31u);
  EXPECT_EQ(MustParse("2^10"), 1024u);
  EXPECT_EQ(MustParse("2^60+2^40"), Pow2(60) + Pow2(40));
  EXPECT_EQ(MustParse("2^64-1"), static_cast<u128>(UINT64_MAX));
  EXPECT_EQ(MustParse(" 2^64 - 1 "), static_cast<u128>(UINT64_MAX));
  EXPECT_EQ(MustParse("2^128-1"), kU128Max);
  EXPECT_EQ(MustParse("340282366920938463463374607431768211455"), kU128Max);
  EXPECT_EQ(MustParse("2^10-2^20+2^30"), Pow2(10) - Pow2(20) + Pow2(30));
  EXPECT_EQ(MustParse("3^4"), 81u);
  EXPECT_EQ(MustParse("0xffffffffffffffffffffffffffffffff"), kU128Max);
}

TEST(U128Test, RejectsBadInputWithAClearMessage) {
  EXPECT_NE(ParseError("").find("empty"), std::string::npos);
  EXPECT_NE(ParseError("2^128").find("2^128"), std::string::npos);
  EXPECT_NE(ParseError("340282366920938463463374607431768211456").find("2^128"), std::string::npos);
  EXPECT_NE(ParseError("2^127+2^127").find("2^128"), std::string::npos);
  EXPECT_NE(ParseError("-5").find("negative"), std::string::npos);
  EXPECT_NE(ParseError("1-2").find("negative"), std::string::npos);
  EXPECT_NE(ParseError("12x").find("invalid digit"), std::string::npos);
  EXPECT_NE(ParseError("0x").find("hex digit"), std::string::npos);
  EXPECT_NE(ParseError("2^").find("digit"), std::string::npos);
  EXPECT_NE(ParseError("2^60+").find("missing term"), std::string::npos);
  EXPECT_NE(ParseError("2**60").find("unexpected character '*'"), std::string::npos);
  EXPECT_NE(ParseError("1e6").find("invalid digit"), std::string::npos);
  EXPECT_NE(ParseError("2^99999").find("exponent"), std::string::npos);
  EXPECT_NE(ParseError("2^2^2").find("chained"), std::string::npos);
  EXPECT_NE(ParseError("5 5").find("unexpected"), std::string::npos);
}

TEST(U128Test, DecimalRoundTrip) {
  EXPECT_EQ(ToDecimal(0), "0");
  EXPECT_EQ(ToDecimal(kU128Max), "340282366920938463463374607431768211455");
  u128 x = 1;
  for (int i = 0; i < 127; ++i) {
    x = x * 2 + (i % 3 == 0);
    u128 back = 0;
    ASSERT_TRUE(ParseDecimalU128(ToDecimal(x), &back).ok());
    EXPECT_EQ(back, x);
  }
  u128 v;
  EXPECT_FALSE(ParseDecimalU128("340282366920938463463374607431768211456", &v).ok());
  EXPECT_FALSE(ParseDecimalU128("12a", &v).ok());
  EXPECT_FALSE(ParseDecimalU128("", &v).ok());
}

TEST(U128Test, BitLength) {
  EXPECT_EQ(BitLength(0), 0);
  EXPECT_EQ(BitLength(1), 1);
  EXPECT_EQ(BitLength(Pow2(64)), 65);
  EXPECT_EQ(BitLength(kU128Max), 128);
}

}  // namespace
}  // namespace collatz
