#include "core/early_termination.h"

#include <algorithm>

namespace collatz {

namespace {

// Largest delay of any n <= x: the delay of the last record at or below x.
uint32_t MaxDelayAtMost(const std::vector<Record>& records, u128 x) {
  auto it = std::upper_bound(records.begin(), records.end(), x, [](u128 v, const Record& r) { return v < r.n; });
  return it == records.begin() ? 0 : std::prev(it)->delay;
}

}  // namespace

u128 PredecessorThreshold(const std::vector<u128>& stop_below, size_t s, uint32_t value_class) {
  // The ancestors (a, b) of each class (core/ancestor_bounds.h): (2v - 1) / 3 is (1, 1),
  // (8v - 5) / 9 is (3, 2), (4v - 5) / 9 is (2, 2).
  switch (value_class) {
    case 1: return AncestorBound(stop_below, s, {1, 1});
    case 2: return AncestorBound(stop_below, s, {3, 2});
    case 3: return std::max(AncestorBound(stop_below, s, {1, 1}), AncestorBound(stop_below, s, {2, 2}));
    default: return 0;
  }
}

std::vector<u128> StopThresholds(const UnitSpec& spec, int64_t limit) {
  std::vector<u128> stop_below(limit < 0 ? 0 : static_cast<size_t>(limit) + 1, 0);
  // R(v) is the delay of the last record <= v: s + R(v) <= limit for v below the first record
  // whose delay exceeds limit - s, and below the table's completeness bound.
  size_t r = 0;
  for (int64_t t = 0; t <= limit; ++t) {
    while (r < spec.known_records.size() && spec.known_records[r].delay <= t) ++r;
    u128 v = spec.records_complete_below;
    if (r < spec.known_records.size()) v = std::min(v, spec.known_records[r].n);
    stop_below[static_cast<size_t>(limit - t)] = v;
  }
  return stop_below;
}

EarlyTermination::EarlyTermination(const UnitSpec& spec, bool residue_bounds)
    : check_classes_(spec.kinds == Kinds::kDelayAndClass), floor_(spec.floor) {
  hole_prefix_.assign(static_cast<size_t>(floor_) + 2, 0);
  size_t h = 0;
  for (uint32_t d = 0; d <= floor_ + 1; ++d) {
    while (h < spec.open_holes.size() && spec.open_holes[h] < d) ++h;
    hole_prefix_[d] = static_cast<uint32_t>(h);
  }
  bound_.assign(static_cast<size_t>(129) << kSubBits, kNoBound);
  stop_below_.assign(static_cast<size_t>(floor_) + 1, 0);
  const u128 complete = spec.records_complete_below;
  enabled_ = complete > 1 && !spec.known_records.empty() && spec.known_records.front().n == 1;
  if (!enabled_) return;
  stop_below_ = StopThresholds(spec, floor_);
  if (!check_classes_ && residue_bounds) {
    class_rows_ = floor_ + 1 + 5;  // a bound reaches 5 steps back
    class_stop_below_.resize(static_cast<size_t>(class_rows_) << 2);
    for (uint32_t s = 0; s < class_rows_; ++s) {
      for (uint32_t c = 0; c < 4; ++c) class_stop_below_[(s << 2) | c] = PredecessorThreshold(stop_below_, s, c);
    }
    ancestor_rows_ = 129;
    ancestor_stop_below_ = AncestorThresholds(stop_below_, ancestor_rows_);
  }
  for (unsigned b = 1; b <= 128; ++b) {
    for (unsigned j = 0; j < (1u << kSubBits); ++j) {
      // Largest value of the bucket: [2^(b-1) + j w, 2^(b-1) + (j+1) w) with w = 2^(b-1-kSubBits),
      // or the whole octave when it is narrower than 2^kSubBits.
      u128 last;
      if (b - 1 >= static_cast<unsigned>(kSubBits)) {
        last = (Pow2(b - 1) - 1) + static_cast<u128>(j + 1) * Pow2(b - 1 - kSubBits);
      } else {
        last = (b == 128) ? kU128Max : Pow2(b) - 1;
      }
      if (last >= complete) continue;
      const uint32_t r = MaxDelayAtMost(spec.known_records, last);
      if (r < kNoBound) bound_[(b << kSubBits) | j] = static_cast<uint16_t>(r);
    }
  }
}

}  // namespace collatz
