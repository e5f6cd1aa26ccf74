#include "server/submission_units.h"

namespace collatz::server {

u128 UnitEnd(u128 x, u128 piece_end, u128 unit_size) {
  const u128 step = x < unit_size ? FirstUnitCut(x, unit_size) - x : unit_size;
  return piece_end - x > step ? x + step : piece_end;
}

u128 CountUnits(u128 begin, u128 end, u128 unit_size) {
  u128 units = 0;
  u128 x = begin;
  for (; x < end && x < unit_size; ++units) x = UnitEnd(x, end, unit_size);
  if (x < end) units += (end - x) / unit_size + ((end - x) % unit_size != 0 ? 1 : 0);
  return units;
}

}  // namespace collatz::server
