#include "engines/sieve_width.h"

namespace collatz::engines {

int UnitSieveBits(Kinds kinds, u128 unit_numbers, int base_bits, int class_bits, u128 class_min_numbers) {
  if (class_bits == 0 || kinds != Kinds::kDelayAndClass || unit_numbers < class_min_numbers) return base_bits;
  return class_bits;
}

}  // namespace collatz::engines
