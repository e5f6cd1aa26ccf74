// Exact delays of every n < 2^T (SPEC section 3): the step loop runs while N >= 2^T,
// then adds tail[N]. 16-bit entries suffice (no n < 2^64 has a delay near 65535).
#pragma once

#include <cstdint>
#include <vector>

namespace collatz {

class TailTable {
 public:
  static constexpr int kMaxBits = 32;

  // Builds the table with `threads` threads (0 = all cores).
  explicit TailTable(int bits, int threads = 0);

  int bits() const { return bits_; }
  uint64_t limit() const { return uint64_t{1} << bits_; }
  uint16_t operator[](uint64_t n) const { return delays_[n]; }
  const std::vector<uint16_t>& delays() const { return delays_; }

 private:
  int bits_;
  std::vector<uint16_t> delays_;
};

}  // namespace collatz
