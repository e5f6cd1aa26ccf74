// Exact early termination (SPEC section 3). If a number has reached v after s steps,
// delay(N) = s + delay(v) lies in [s + bitlen(v) - 1, s + R(v)], where R(x) is the largest
// delay of any n <= x. When that interval holds no delay that matters to the unit (none
// above the floor for delay records; no open class for class records), N may stop.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ancestor_bounds.h"
#include "core/u128.h"
#include "core/unit.h"

namespace collatz {

// stop_below[s], s = 0 .. limit (empty for limit < 0): the least v with R(v) > limit - s (the
// first record above limit - s, or records_complete_below: R is known only below it), so
// s + R(v) <= limit <=> v < stop_below[s]. Non-increasing in s. Records ascend in n and delay.
std::vector<u128> StopThresholds(const UnitSpec& spec, int64_t limit);

// The predecessor bounds: a v with a smaller predecessor u (u reaches v in j steps, so
// delay(u) = delay(v) + j) has s + delay(v) = (s - j) + delay(u), so v can stop once u <
// stop_below[s - j]. Value classes (v mod 9): 1 for v = 2 or 5, whose u = (2v - 1) / 3 (j =
// 2) gives v < floor(3L / 2); 2 for v = 4, u = (8v - 5) / 9 (u -> (4v - 1) / 3 -> 4v -> 2v ->
// v, j = 5): v < floor(9L / 8); 3 for v = 8, also (4v - 5) / 9 ((2v - 1) / 3 is 2 mod 3, j =
// 4): v < floor(9L / 4); 0 otherwise (no bound).
constexpr uint32_t ValueClassOfResidue9(unsigned r) { return r == 2 || r == 5 ? 1 : r == 4 ? 2 : r == 8 ? 3 : 0; }

// The threshold below which a v >= 5 of that class stops after s steps by its predecessor
// bound, for stop_below = StopThresholds(spec, limit) (entries past its end are 0);
// saturated at 2^128 - 1; 0 for class 0.
u128 PredecessorThreshold(const std::vector<u128>& stop_below, size_t s, uint32_t value_class);

class EarlyTermination {
 public:
  // Sub-buckets per octave: v in [2^(b-1), 2^b) is split into 2^kSubBits equal parts.
  static constexpr int kSubBits = 3;
  static constexpr uint16_t kNoBound = 0xFFFF;

  // Disabled when the spec carries no records.
  // residue_bounds: also the delay-only tables of CanStopInClass and CanStopByAncestors (the
  // CPU's entry stop; about 0.4 ms a unit). The GPU engine, which builds its own from its
  // group stop table (gpu/stop_tables.h), passes false; without them both are CanStop.
  explicit EarlyTermination(const UnitSpec& spec, bool residue_bounds = true);

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
  // Delay-only: CanStop for a v >= 5 of a known value class (ValueClassOfResidue9), with its
  // predecessor bound as well (the CPU twin of the GPU prelude's checks, whose numbers share
  // their class).
  bool CanStopInClass(uint32_t s, u128 v, uint32_t value_class) const {
    if (CanStop(s, v)) return true;
    // v = 2 would have the predecessor 1, whose trajectory ends there.
    return s < class_rows_ && v >= 5 && v < class_stop_below_[(static_cast<size_t>(s) << 2) | value_class];
  }

  // Delay-only: the same with the thresholds of all of v's smaller ancestors
  // (core/ancestor_bounds.h) for a v >= 2^16 of residue r (mod 162) after s <= 128 steps.
  bool CanStopByAncestors(uint32_t s, u128 v, unsigned r) const {
    if (s >= ancestor_rows_ || v < 65536) return CanStopInClass(s, v, ValueClassOfResidue9(r % 9));
    return v < ancestor_stop_below_[static_cast<size_t>(s) * kAncestorModulus + r];
  }

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
  // Delay-only: PredecessorThreshold(stop_below_, s, c) at s << 2 | c, for s < class_rows_
  // (past them every threshold is 0).
  std::vector<u128> class_stop_below_;
  uint32_t class_rows_ = 0;
  // Delay-only: AncestorThresholds(stop_below_, ancestor_rows_) (entry stops take at most 2k
  // <= 128 steps).
  std::vector<u128> ancestor_stop_below_;
  uint32_t ancestor_rows_ = 0;
};

}  // namespace collatz
