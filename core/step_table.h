// S-bit step table (SPEC section 3): for each i < 2^S, S T-steps applied to
// N = 2^S h + i give 3^p h + c. One iteration of the step loop uses one entry.
#pragma once

#include <cstdint>
#include <vector>

namespace collatz {

// 3^0 .. 3^40 (all fit in 64 bits).
constexpr int kMaxPow3 = 40;
extern const uint64_t kPow3[kMaxPow3 + 1];

// Applies `steps` T-steps to residue i symbolically: N = 2^steps h + i -> 3^p h + c.
// Valid for steps <= 40 (c < 3^p <= 3^40 < 2^64).
void TStepsOfResidue(uint64_t i, int steps, uint32_t* p, uint64_t* c);

class StepTable {
 public:
  static constexpr int kMaxBits = 20;  // keeps c_i and 3^p_i in 32 bits (SPEC 3)

  explicit StepTable(int bits);

  int bits() const { return bits_; }
  uint64_t mask() const { return (uint64_t{1} << bits_) - 1; }
  // Entry i packed as c | (p << 32).
  const std::vector<uint64_t>& packed() const { return packed_; }
  uint32_t c(uint64_t i) const { return static_cast<uint32_t>(packed_[i]); }
  uint32_t p(uint64_t i) const { return static_cast<uint32_t>(packed_[i] >> 32); }

 private:
  int bits_;
  std::vector<uint64_t> packed_;
};

}  // namespace collatz
