#include "gpu/stop_tables.h"

#include <algorithm>

#include "core/ancestor_bounds.h"
#include "core/early_termination.h"
#include "core/u128.h"
#include "gpu/search_kernels.h"

namespace collatz {
namespace {

u128 Value(const ulonglong2& e) { return u128{e.y} << 64 | e.x; }

std::vector<u128> Values(const std::vector<ulonglong2>& entries) {
  std::vector<u128> out(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) out[i] = Value(entries[i]);
  return out;
}

}  // namespace

std::vector<ulonglong2> BuildStopTable(const UnitSpec& spec, int64_t limit) {
  std::vector<ulonglong2> table(static_cast<size_t>(spec.floor) + 2, ulonglong2{0, 0});
  const std::vector<u128> stop_below = StopThresholds(spec, limit);  // limit <= floor
  for (size_t s = 0; s < stop_below.size() && s < table.size(); ++s) {
    table[s] = ulonglong2{Lo64(stop_below[s]), Hi64(stop_below[s])};
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
  const std::vector<u128> thresholds = Values(stop_below);
  for (size_t s = 0; s < rows; ++s) {
    // The predecessor bounds of each value class (core/early_termination.h); the table's
    // last entry is 0, as every s past it.
    u128 by_class[4];
    for (uint32_t c = 0; c < 4; ++c) by_class[c] = PredecessorThreshold(thresholds, s, c);
    for (uint32_t r = 0; r < (1u << gpu::kWalkCheckBits); ++r) {
      const uint32_t e = gpu::WalkCheckShift(r);
      u128 v = thresholds[std::min(s + e, n - 1)];
      // Saturated: a bound past 2^128 stops every value.
      v = (e != 0 && (v >> (128 - e)) != 0) ? kU128Max : v << e;
      for (uint32_t c = 0; c < 4; ++c) {
        const u128 threshold = std::max(v, by_class[c]);
        t.entries[s * row + (c << gpu::kWalkCheckBits) + r] = ulonglong2{Lo64(threshold), Hi64(threshold)};
      }
    }
  }
  t.tail_from = WalkTailFrom(stop_below, tail_bits);
  return t;
}

uint32_t WalkTailFrom(const std::vector<ulonglong2>& stop_below, int bits) {
  // The first s whose threshold is below 2^bits (the last entry is 0, so there is one), less
  // the largest shift: before it, s + e stays before it too.
  const u128 tail_end = u128{1} << bits;
  const size_t n = stop_below.size();
  size_t first = n - 1;
  for (size_t s = 0; s < n; ++s) {
    if (Value(stop_below[s]) < tail_end) {
      first = s;
      break;
    }
  }
  // At least 1: a walking member has s >= k + G >= 1, and the walk ends a member with s = 0.
  const size_t max_shift = gpu::kWalkCheckBits;
  return static_cast<uint32_t>(first > max_shift + 1 ? first - max_shift : 1);
}

std::vector<ulonglong2> PairWalkCheckTable(const WalkStopTable& walk, int shift) {
  std::vector<ulonglong2> entries(size_t{gpu::kPairStepOffset} << gpu::kWalkRowBits, ulonglong2{~0ull, ~0ull});
  entries.insert(entries.end(), walk.entries.begin(), walk.entries.end());
  if (shift == 0) return entries;
  const size_t row = size_t{1} << gpu::kWalkRowBits;
  const size_t rows = entries.size() / row;
  std::vector<ulonglong2> smallest((((rows - 1) >> shift) + 1) * row, ulonglong2{~0ull, ~0ull});
  for (size_t s = 0; s < rows; ++s) {
    for (size_t r = 0; r < row; ++r) {
      ulonglong2& to = smallest[(s >> shift) * row + r];
      if (Value(entries[s * row + r]) < Value(to)) to = entries[s * row + r];
    }
  }
  for (size_t s = 0; s < rows; ++s) {
    std::copy_n(smallest.begin() + static_cast<std::ptrdiff_t>((s >> shift) * row), row,
                entries.begin() + static_cast<std::ptrdiff_t>(s * row));
  }
  return entries;
}

std::vector<uint64_t> NarrowWalkCheckTable(const std::vector<ulonglong2>& check) {
  std::vector<uint64_t> out(check.size());
  for (size_t i = 0; i < check.size(); ++i) {
    const u128 high = Value(check[i]) >> kNarrowCheckShift;
    out[i] = high > ~uint64_t{0} ? ~uint64_t{0} : static_cast<uint64_t>(high);
  }
  return out;
}

uint32_t PairWalkTailFrom(uint32_t tail_from, int shift) {
  const uint32_t later = (1u << shift) - 1;
  return tail_from > later + 1 ? tail_from - later : 1;
}

static_assert(gpu::kAncestorResidues == kAncestorModulus, "the kernel's row width is the residues'");

AncestorStopTable BuildAncestorStopTable(const std::vector<ulonglong2>& stop_below, size_t rows) {
  AncestorStopTable t;
  t.last_row = static_cast<uint32_t>(rows - 1);
  const std::vector<u128> all = AncestorThresholds(Values(stop_below), rows);
  t.entries.resize(all.size());
  for (size_t i = 0; i < all.size(); ++i) t.entries[i] = ulonglong2{Lo64(all[i]), Hi64(all[i])};
  return t;
}

}  // namespace collatz
