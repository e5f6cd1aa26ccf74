#include "gpu/stop_tables.h"

#include <algorithm>

#include "core/u128.h"
#include "gpu/search_kernels.h"

namespace collatz {
namespace {

u128 Value(const ulonglong2& e) { return u128{e.y} << 64 | e.x; }

}  // namespace

std::vector<ulonglong2> BuildStopTable(const UnitSpec& spec, int64_t limit) {
  std::vector<ulonglong2> table(static_cast<size_t>(spec.floor) + 2, ulonglong2{0, 0});
  const u128 complete = spec.records_complete_below;
  size_t r = 0;  // records ascend in n and in delay
  for (int64_t t = 0; t <= limit; ++t) {
    while (r < spec.known_records.size() && spec.known_records[r].delay <= t) ++r;
    u128 v = complete;
    if (r < spec.known_records.size()) v = std::min(v, spec.known_records[r].n);
    ulonglong2& e = table[static_cast<size_t>(limit - t)];
    e.x = Lo64(v);
    e.y = Hi64(v);
  }
  return table;
}

WalkStopTable BuildWalkStopTable(const std::vector<ulonglong2>& stop_below, int tail_bits) {
  WalkStopTable t;
  const size_t n = stop_below.size();
  const size_t rows = n + gpu::kWalkExtraRows;
  const uint32_t row = 1u << gpu::kWalkRowBits;
  t.last_row = static_cast<uint32_t>(rows - 1);
  t.entries.resize(rows * row);
  for (size_t s = 0; s < rows; ++s) {
    u128 predecessor = 0;  // v = 2 (mod 3) stops below floor(3 stop_below[s - 2] / 2)
    if (s >= 2) {
      const u128 l = Value(stop_below[std::min(s - 2, n - 1)]);
      predecessor = l + l / 2 < l ? kU128Max : l + l / 2;  // saturated: then every v stops
    }
    for (uint32_t r = 0; r < (1u << gpu::kWalkCheckBits); ++r) {
      const uint32_t e = gpu::WalkCheckShift(r);
      u128 v = Value(stop_below[std::min(s + e, n - 1)]);
      v = (e != 0 && (v >> (128 - e)) != 0) ? kU128Max : v << e;
      const u128 with_predecessor = std::max(v, predecessor);
      t.entries[s * row + r] = ulonglong2{Lo64(v), Hi64(v)};
      t.entries[s * row + (1u << gpu::kWalkCheckBits) + r] = ulonglong2{Lo64(with_predecessor), Hi64(with_predecessor)};
    }
  }
  // The first s whose threshold is below 2^tail_bits (the last entry is 0, so there is one),
  // less the largest shift: before it, s + e stays before it too.
  const u128 tail_end = u128{1} << tail_bits;
  size_t first = n - 1;
  for (size_t s = 0; s < n; ++s) {
    if (Value(stop_below[s]) < tail_end) {
      first = s;
      break;
    }
  }
  // At least 1: a walking member has s >= k + G >= 1, and the walk ends a member with s = 0.
  const size_t max_shift = gpu::kWalkCheckBits;
  t.tail_from = static_cast<uint32_t>(first > max_shift + 1 ? first - max_shift : 1);
  return t;
}

}  // namespace collatz
