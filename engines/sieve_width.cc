#include "engines/sieve_width.h"

#include <algorithm>

namespace collatz::engines {

int UnitSieveBits(Kinds kinds, u128 unit_numbers, int base_bits, int class_bits, u128 class_min_numbers,
                  int delay_bits, u128 delay_min_numbers) {
  const bool wide = delay_bits != 0 && unit_numbers >= delay_min_numbers;
  if (kinds == Kinds::kDelay) return wide ? delay_bits : base_bits;
  const int class_width = class_bits != 0 && unit_numbers >= class_min_numbers ? class_bits : base_bits;
  return wide ? std::max(class_width, delay_bits) : class_width;
}

}  // namespace collatz::engines
