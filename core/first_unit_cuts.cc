#include "core/first_unit_cuts.h"

namespace collatz {

u128 FirstUnitCut(u128 x, u128 unit_size) {
  for (int bits = kFirstUnitBits; bits < 128 && Pow2(bits) < unit_size;
       bits += bits < kFirstUnitsDoubleFromBits ? kFirstUnitsGrowBits : 1) {
    if (Pow2(bits) > x) return Pow2(bits);
  }
  return unit_size;
}

}  // namespace collatz
