// Early termination through smaller ancestors, by residue (SPEC section 3, sharpened): a
// value v with a smaller ancestor u that reaches v in d steps has delay(u) = delay(v) + d, so
// a number at v after s steps has s + delay(v) = (s - d) + delay(u) <= (s - d) + R(u), and
// can stop once u < stop_below[s - d]. The ancestors u = (2^a v - c) / 3^b (a doublings and
// b steps (x - 1) / 3 back from v, d = a + b, c >= 0) that exist for every v of a residue
// class mod 162 = 2 3^4 give, with u < L <=> v < floor(3^b L / 2^a) (at most), a threshold
// per residue. The GPU prelude (gpu/stop_tables.h, BuildAncestorStopTable) compares the
// largest of numbers that share their residue mod 162 with it.
#pragma once

#include <cstdint>
#include <vector>

#include "core/u128.h"

namespace collatz {

// Residues of the table: v mod 2 3^4.
constexpr unsigned kAncestorModulus = 162;

struct AncestorOption {
  uint8_t doublings;  // a
  uint8_t thirds;     // b (1 .. 4)
};

// The bound of one ancestor (a, b): floor(3^b stop_below[s - a - b] / 2^a) (entries before 0
// or past the end of stop_below count as 0), saturated at 2^128 - 1 (then every v is below it).
u128 AncestorBound(const std::vector<u128>& stop_below, size_t s, AncestorOption o);

// The distinct (a, b) of the ancestors u < v that every v >= 2^16 with v = r (mod 162) has,
// with at most 4 thirds and 8 doublings.
const std::vector<AncestorOption>& AncestorOptions(unsigned r);

// max(stop_below[s], max over AncestorOptions(r) of floor(3^b stop_below[s - a - b] / 2^a))
// (entries before 0 or past the end of stop_below count as 0), saturated at 2^128 - 1: a v
// >= 2^16 with v = r (mod 162) below it, after s steps, has s + delay(v) <= the limit that
// stop_below was built for.
u128 AncestorThreshold(const std::vector<u128>& stop_below, size_t s, unsigned r);

// The same for rows s = 0 .. rows - 1 and every residue, at s * kAncestorModulus + r (each
// distinct (a, b) scaled once a row: a few ms for 2^60's 2300 rows).
std::vector<u128> AncestorThresholds(const std::vector<u128>& stop_below, size_t rows);

}  // namespace collatz
