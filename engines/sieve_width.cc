#include "engines/sieve_width.h"

namespace collatz::engines {

int UnitSieveBits(Kinds kinds, u128 unit_numbers, int base_bits, int class_bits, u128 class_min_numbers,
                  int delay_bits, u128 delay_min_numbers) {
  if (kinds == Kinds::kDelayAndClass && class_bits != 0 && unit_numbers >= class_min_numbers) return class_bits;
  if (kinds == Kinds::kDelay && delay_bits != 0 && unit_numbers >= delay_min_numbers) return delay_bits;
  return base_bits;
}

}  // namespace collatz::engines
