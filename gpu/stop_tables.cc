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

std::vector<ulonglong2> WalkLookaheadTable(const WalkStopTable& walk, int check_bits) {
  const size_t walk_row = size_t{1} << gpu::kWalkRowBits;
  const size_t rows = walk.entries.size() / walk_row;
  const uint32_t residues = 1u << check_bits;
  const size_t row = size_t{4} << check_bits;
  // Each residue u's path: after t + 1 <= check_bits T-steps every v = u (mod 2^check_bits)
  // is (3^a v + c) / 2^(t + 1), after t + 1 + a steps, and of a value class that c gives
  // once a >= 1 (3^a v + c = c mod 3, and mod 9 from a >= 2; 2^-1 = 5 mod 9).
  struct PathStep {
    uint32_t steps = 0;
    uint32_t value_class = 0;
    uint64_t a = 1;  // 3^odd
    u128 c = 0;
  };
  std::vector<PathStep> paths(static_cast<size_t>(residues) * check_bits);
  for (uint32_t u = 0; u < residues; ++u) {
    uint64_t a = 1;
    u128 c = 0;
    uint32_t odd = 0;
    for (int t = 0; t < check_bits; ++t) {
      // v_t = (a v + c) / 2^t; its parity is bit t of a u + c.
      if ((((u128{a} * u + c) >> t) & 1) != 0) {
        a *= 3;
        c = 3 * c + (u128{1} << t);
        ++odd;
      }
      PathStep& p = paths[static_cast<size_t>(u) * check_bits + t];
      p.steps = static_cast<uint32_t>(t + 1) + odd;
      p.a = a;
      p.c = c;
      uint32_t inverse9 = 1;  // 2^-(t + 1) mod 9
      for (int i = 0; i <= t; ++i) inverse9 = inverse9 * 5 % 9;
      const uint32_t r9 = static_cast<uint32_t>(c % 9) * inverse9 % 9;
      p.value_class = odd >= 2 ? ValueClassOfResidue9(r9) : odd == 1 && r9 % 3 == 2 ? 1 : 0;
    }
  }
  // The threshold of value class k after sigma steps (stop_below, or a predecessor's) is the
  // walk's entry for an odd v (no zeros to count: r = 1) of that class; rows past the last
  // read the last, as the kernels do.
  auto by_class = [&](size_t sigma, uint32_t k) {
    return Value(walk.entries[std::min<size_t>(sigma, rows - 1) * walk_row + (k << gpu::kWalkCheckBits) + 1]);
  };
  std::vector<ulonglong2> out(rows * row);
  for (size_t s = 0; s < rows; ++s) {
    // A predecessor bound holds for w >= 5 only ((2w - 1) / 3 = 1 for w = 2, whose delay is
    // not 3). A v of row s that its own entry does not stop is at least the row's smallest
    // entry, and w >= v / 2^check_bits: so the classes count only where that is at least 5
    // 2^check_bits (every row before tail_from: at least 2^tail_bits); elsewhere stop_below alone.
    u128 smallest = kU128Max;
    for (size_t i = 0; i < walk_row; ++i) smallest = std::min(smallest, Value(walk.entries[s * walk_row + i]));
    const bool classes = smallest >= (u128{5} << check_bits);
    for (uint32_t u = 0; u < residues; ++u) {
      // The largest bound of the path's T-steps: v < X stops after t + 1 of them when
      // (a v + c) / 2^(t + 1) is below that step count's threshold L, i.e. a v < 2^(t + 1) L - c.
      u128 ahead = 0;
      for (int t = 0; t < check_bits; ++t) {
        const PathStep& p = paths[static_cast<size_t>(u) * check_bits + t];
        const u128 limit = by_class(s + p.steps, classes ? p.value_class : 0);
        u128 x;
        if ((limit >> (127 - t)) != 0) {
          x = kU128Max;  // past 2^128: every value stops
        } else {
          const u128 scaled = limit << (t + 1);
          x = scaled <= p.c ? 0 : (scaled - p.c + p.a - 1) / p.a;
        }
        ahead = std::max(ahead, x);
      }
      for (uint32_t k = 0; k < 4; ++k) {
        const u128 here = Value(walk.entries[s * walk_row + (k << gpu::kWalkCheckBits) + (u & 3)]);
        const u128 threshold = std::max(here, ahead);
        out[s * row + (static_cast<size_t>(k) << check_bits) + u] = ulonglong2{Lo64(threshold), Hi64(threshold)};
      }
    }
  }
  return out;
}

std::vector<ulonglong2> PairWalkCheckTable(const WalkStopTable& walk, int shift) {
  return PairWalkCheckTable(walk.entries, gpu::kWalkRowBits, shift);
}

std::vector<ulonglong2> PairWalkCheckTable(const std::vector<ulonglong2>& rows_of_walk, int row_bits, int shift) {
  std::vector<ulonglong2> entries(size_t{gpu::kPairStepOffset} << row_bits, ulonglong2{~0ull, ~0ull});
  entries.insert(entries.end(), rows_of_walk.begin(), rows_of_walk.end());
  if (shift == 0) return entries;
  const size_t row = size_t{1} << row_bits;
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
