#include "core/ancestor_bounds.h"

#include <algorithm>
#include <array>

namespace collatz {
namespace {

constexpr int kMaxThirds = 4;
constexpr int kMaxDoublings = 8;

// Walks back from one v of the class: x = (2^a v - c) / 3^b. A step (x - 1) / 3 needs x = 4
// (mod 6); with at most 3 thirds taken x mod 6 is the same for every v = r (mod 162) (v + 162
// moves x by 2^(a + 1) 3^(4 - b), a multiple of 6), so the options found hold for the class.
void Collect(u128 v, u128 x, int a, int b, std::vector<AncestorOption>* out) {
  if (b >= 1 && x < v) {
    const AncestorOption o{static_cast<uint8_t>(a), static_cast<uint8_t>(b)};
    if (std::none_of(out->begin(), out->end(),
                     [&](const AncestorOption& e) { return e.doublings == a && e.thirds == b; })) {
      out->push_back(o);
    }
  }
  if (a < kMaxDoublings) Collect(v, 2 * x, a + 1, b, out);
  if (b < kMaxThirds && x % 6 == 4) Collect(v, (x - 1) / 3, a, b + 1, out);
}

std::array<std::vector<AncestorOption>, kAncestorModulus> BuildOptions() {
  std::array<std::vector<AncestorOption>, kAncestorModulus> all;
  for (unsigned r = 0; r < kAncestorModulus; ++r) {
    const u128 v = (u128{1} << 40) * kAncestorModulus + r;  // large: every u on the way is above 1
    Collect(v, v, 0, 0, &all[r]);
  }
  return all;
}

// stop_below[s - back], 0 before 0 and past the end.
u128 Below(const std::vector<u128>& stop_below, size_t s, size_t back) {
  return s >= back && s - back < stop_below.size() ? stop_below[s - back] : u128{0};
}

}  // namespace

u128 AncestorBound(const std::vector<u128>& stop_below, size_t s, AncestorOption o) {
  // 3^b (L >> a) + floor(3^b (L mod 2^a) / 2^a), without a product past 128 bits.
  const u128 L = Below(stop_below, s, static_cast<size_t>(o.doublings) + o.thirds);
  u128 pow3 = 1;
  for (int i = 0; i < o.thirds; ++i) pow3 *= 3;
  const u128 high = L >> o.doublings, low = ((L & ((u128{1} << o.doublings) - 1)) * pow3) >> o.doublings;
  return high > (kU128Max - low) / pow3 ? kU128Max : high * pow3 + low;
}

const std::vector<AncestorOption>& AncestorOptions(unsigned r) {
  static const std::array<std::vector<AncestorOption>, kAncestorModulus> options = BuildOptions();
  return options[r % kAncestorModulus];
}

u128 AncestorThreshold(const std::vector<u128>& stop_below, size_t s, unsigned r) {
  u128 best = Below(stop_below, s, 0);
  for (const AncestorOption& o : AncestorOptions(r)) best = std::max(best, AncestorBound(stop_below, s, o));
  return best;
}

std::vector<u128> AncestorThresholds(const std::vector<u128>& stop_below, size_t rows) {
  std::vector<u128> out(rows * kAncestorModulus);
  // Every (a, b) that some residue has, scaled once a row; each residue's options as indices.
  std::vector<AncestorOption> distinct;
  std::vector<std::vector<size_t>> uses(kAncestorModulus);
  for (unsigned r = 0; r < kAncestorModulus; ++r) {
    for (const AncestorOption& o : AncestorOptions(r)) {
      size_t i = 0;
      while (i < distinct.size() && !(distinct[i].doublings == o.doublings && distinct[i].thirds == o.thirds)) ++i;
      if (i == distinct.size()) distinct.push_back(o);
      uses[r].push_back(i);
    }
  }
  std::vector<u128> scaled(distinct.size());
  for (size_t s = 0; s < rows; ++s) {
    for (size_t i = 0; i < distinct.size(); ++i) scaled[i] = AncestorBound(stop_below, s, distinct[i]);
    const u128 plain = Below(stop_below, s, 0);
    u128* row = out.data() + s * kAncestorModulus;
    for (unsigned r = 0; r < kAncestorModulus; ++r) {
      u128 best = plain;
      for (const size_t i : uses[r]) best = std::max(best, scaled[i]);
      row[r] = best;
    }
  }
  return out;
}

}  // namespace collatz
