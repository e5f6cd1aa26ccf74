// The work hash of a unit result (core/unit.h): a checksum over every examined N that
// workers must agree on bit for bit, so that an audit catches an engine that skipped or
// repeated numbers. Shared by the CPU engine and the CUDA kernels (host and device code).
//
// Version 2: sum (mod 2^64) over examined N of Term(x) = x * (x + kOdd), where x is the low
// 64 bits of the value after the first k T-steps (in the first block [1, 2^k): of N). A
// polynomial, so the terms of an arithmetic progression of x (the members of a GPU residue
// group) sum in closed form instead of one by one. A missing or extra N changes the sum by
// Term(x), which is 0 only for x = 0 or x = -kOdd (kOdd is odd). Version 1 summed
// splitmix64's finalizer; results of the two versions cannot be compared.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define COLLATZ_HOST_DEVICE __host__ __device__
#else
#define COLLATZ_HOST_DEVICE
#endif

namespace collatz {

inline constexpr uint32_t kWorkHashVersion = 2;
inline constexpr uint64_t kWorkHashOdd = 0x9E3779B97F4A7C15ULL;

COLLATZ_HOST_DEVICE inline constexpr uint64_t WorkHashTerm(uint64_t x) { return x * (x + kWorkHashOdd); }

// Sum of WorkHashTerm(w + d t) over t = 0 .. n - 1, mod 2^64, for n < 2^62:
// n w (w + K) + d (2w + K) n(n-1)/2 + d^2 (n-1) n (2n-1)/6, the divisions exact on the
// integers (each done on the factor it divides).
COLLATZ_HOST_DEVICE inline constexpr uint64_t WorkHashProgression(uint64_t w, uint64_t d, uint64_t n) {
  if (n == 0) return 0;
  uint64_t a = n, b = n - 1, c = 2 * n - 1;  // exact: n < 2^62
  const uint64_t pairs = (a % 2 == 0) ? (a / 2) * b : a * (b / 2);  // n(n-1)/2
  if (a % 2 == 0) {
    a /= 2;
  } else {
    b /= 2;
  }
  if (a % 3 == 0) {
    a /= 3;
  } else if (b % 3 == 0) {
    b /= 3;
  } else {
    c /= 3;
  }
  const uint64_t squares = a * b * c;  // sum of t^2 = (n-1) n (2n-1) / 6
  return n * w * (w + kWorkHashOdd) + d * (2 * w + kWorkHashOdd) * pairs + d * d * squares;
}

}  // namespace collatz
