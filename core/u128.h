// The 128-bit unsigned integer that N is at every interface, and its text forms.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace collatz {

using u128 = unsigned __int128;

constexpr u128 kU128Max = ~static_cast<u128>(0);

inline constexpr u128 MakeU128(uint64_t hi, uint64_t lo) { return (static_cast<u128>(hi) << 64) | lo; }
inline constexpr uint64_t Hi64(u128 x) { return static_cast<uint64_t>(x >> 64); }
inline constexpr uint64_t Lo64(u128 x) { return static_cast<uint64_t>(x); }
inline constexpr u128 Pow2(unsigned k) { return static_cast<u128>(1) << k; }  // k < 128

// Number of significant bits: 0 for 0, 1 for 1, 128 for 2^127 and above.
inline int BitLength(u128 x) {
  const uint64_t hi = Hi64(x);
  if (hi != 0) return 128 - __builtin_clzll(hi);
  const uint64_t lo = Lo64(x);
  return lo == 0 ? 0 : 64 - __builtin_clzll(lo);
}

// Decimal text of x.
std::string ToDecimal(u128 x);

// Parses the forms users type for N: decimal, 0x hex, a^k (normally 2^k), and
// sums/differences of those, e.g. "2^60+2^40", "2^64-1", "0xffff". Spaces are allowed
// around operators. Malformed text, a negative result or a value >= 2^128 is an error
// whose message names the problem; nothing wraps around.
Status ParseU128(const std::string& text, u128* out);

// Parses a plain decimal string only (used for CSV and database fields).
Status ParseDecimalU128(const std::string& text, u128* out);

}  // namespace collatz
