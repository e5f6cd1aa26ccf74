#include "core/step_table.h"

#include <array>
#include <stdexcept>

namespace collatz {

namespace {
constexpr std::array<uint64_t, kMaxPow3 + 1> MakePow3() {
  std::array<uint64_t, kMaxPow3 + 1> t{};
  uint64_t v = 1;
  for (int i = 0; i <= kMaxPow3; ++i) {
    t[i] = v;
    v *= 3;
  }
  return t;
}
constexpr auto kPow3Array = MakePow3();
}  // namespace

const uint64_t kPow3[kMaxPow3 + 1] = {
#define P(i) kPow3Array[i]
    P(0),  P(1),  P(2),  P(3),  P(4),  P(5),  P(6),  P(7),  P(8),  P(9),  P(10), P(11), P(12), P(13),
    P(14), P(15), P(16), P(17), P(18), P(19), P(20), P(21), P(22), P(23), P(24), P(25), P(26), P(27),
    P(28), P(29), P(30), P(31), P(32), P(33), P(34), P(35), P(36), P(37), P(38), P(39), P(40)
#undef P
};

void TStepsOfResidue(uint64_t i, int steps, uint32_t* p, uint64_t* c) {
  // N = 2^steps h + i. After j steps N = 2^(steps-j) 3^q h + x; its parity is x's while
  // steps - j >= 1, so the residue alone decides every step.
  uint32_t q = 0;
  unsigned __int128 x = i;
  for (int j = 0; j < steps; ++j) {
    if (x & 1) {
      x = (3 * x + 1) / 2;
      ++q;
    } else {
      x /= 2;
    }
  }
  *p = q;
  *c = static_cast<uint64_t>(x);
}

StepTable::StepTable(int bits) : bits_(bits) {
  if (bits < 1 || bits > kMaxBits) throw std::invalid_argument("step table bits must be in 1..20");
  // Width by width, one T-step an entry (2^(S+1) steps in all, not S 2^S: an engine's set-up
  // builds several tables, issue 23). The (w-1)-bit entry (p, c) of i' = i mod 2^(w-1) takes
  // N = 2^w h + i = 2^(w-1) (2h + b) + i' (b = bit w-1 of i) to 3^p (2h + b) + c = 2 3^p h + x
  // with x = 3^p b + c, whose parity is x's: one more T-step gives 3^(p+1) h + (3x + 1) / 2
  // (x odd) or 3^p h + x / 2. Upper halves first, so that the lower ones can be done in place.
  const uint64_t size = uint64_t{1} << bits;
  packed_.assign(size, 0);  // width 0: p = 0, c = i = 0 for the one residue
  for (int w = 1; w <= bits; ++w) {
    const uint64_t half = uint64_t{1} << (w - 1);
    for (uint64_t b = 2; b-- > 0;) {
      for (uint64_t i = 0; i < half; ++i) {
        const uint64_t e = packed_[i];
        const uint32_t p = static_cast<uint32_t>(e >> 32);
        const uint64_t x = kPow3[p] * b + static_cast<uint32_t>(e);  // < 2 3^20 + 3^20
        packed_[i + b * half] = (x & 1) != 0 ? ((3 * x + 1) / 2) | (static_cast<uint64_t>(p + 1) << 32)
                                             : (x / 2) | (static_cast<uint64_t>(p) << 32);
      }
    }
  }
}

}  // namespace collatz
