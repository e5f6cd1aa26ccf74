// Exact early termination (SPEC section 3). If a number has reached v after s steps,
// delay(N) = s + delay(v) lies in [s + bitlen(v) - 1, s + R(v)], where R(x) is the largest
// delay of any n <= x. When that interval holds no delay that matters to the unit (none
// above the floor for delay records; no open class for class records), N may stop.
#pragma once

#include <cstdint>
#include <vector>

#include "core/u128.h"
#include "core/unit.h"

namespace collatz {

// stop_below[s], s = 0 .. limit (empty for limit < 0): the least v with R(v) > limit - s (the
// first record above limit - s, or records_complete_below: R is known only below it), so
// s + R(v) <= limit <=> v < stop_below[s]. Non-increasing in s. Records ascend in n and delay.
std::vector<u128> StopThresholds(const UnitSpec& spec, int64_t limit);

class EarlyTermination {
 public:
  // Sub-buckets per octave: v in [2^(b-1), 2^b) is split into 2^kSubBits equal parts.
  static constexpr int kSubBits = 3;
  static constexpr uint16_t kNoBound = 0xFFFF;

  // Disabled when the spec carries no records.
  explicit EarlyTermination(const UnitSpec& spec);

  bool enabled() const { return enabled_; }

  // Upper bound of delay(v) for v >= 1 from the record table, or kNoBound.
  uint16_t Bound(u128 v) const {
    const int b = BitLength(v);
    unsigned j = 0;
    if (b - 1 >= kSubBits) j = static_cast<unsigned>(v >> (b - 1 - kSubBits)) & ((1u << kSubBits) - 1);
    return bound_[(static_cast<unsigned>(b) << kSubBits) | j];
  }

  // True if a number at v after s steps can be neither a delay record nor (in class
  // searches) a class record of an open class. Delay-only: one comparison with the exact
  // threshold of s (stop_below), not the bucketed bound (fewer instructions in the CPU
  // engine's step loop, and R exact instead of bucketed).
  bool CanStop(uint32_t s, u128 v) const {
    if (!check_classes_) return s <= floor_ && v < stop_below_[s];
    const uint32_t hi = s + Bound(v);
    if (hi > floor_) return false;
    if (!check_classes_) return true;
    const uint32_t lo = s + static_cast<uint32_t>(BitLength(v)) - 1;
    return lo <= hi && hole_prefix_[hi + 1] == hole_prefix_[lo];
  }

  // The bucketed bound table, (bitlen << kSubBits | sub-bucket) -> bound; for GPU copies.
  const std::vector<uint16_t>& bound_table() const { return bound_; }
  // hole_prefix()[d] = number of open holes below d, for d in 0 .. floor + 1.
  const std::vector<uint32_t>& hole_prefix() const { return hole_prefix_; }
  uint32_t floor() const { return floor_; }
  // stop_below()[s] for s in 0 .. floor: the smallest v with s + R(v) > floor or v at or past
  // the table's completeness bound (0 when disabled), so that s + R(v) <= floor with R known
  // exactly when v < stop_below()[s].
  const std::vector<u128>& stop_below() const { return stop_below_; }
  bool check_classes() const { return check_classes_; }

 private:
  bool enabled_ = false;
  bool check_classes_ = false;
  uint32_t floor_ = 0;
  std::vector<uint16_t> bound_;
  std::vector<uint32_t> hole_prefix_;
  std::vector<u128> stop_below_;
};

}  // namespace collatz
