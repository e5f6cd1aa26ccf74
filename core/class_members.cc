#include "core/class_members.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

#include "core/delay.h"

namespace collatz {
namespace {

// One Collatz step; false when 3v + 1 would not fit (the trajectory is then left).
bool Step(u128* v) {
  if ((*v & 1) == 0) {
    *v >>= 1;
    return true;
  }
  if (*v > (kU128Max - 1) / 3) return false;
  *v = 3 * *v + 1;
  return true;
}

inline unsigned Mod3(u128 n) { return static_cast<unsigned>((Hi64(n) % 3 + Lo64(n) % 3) % 3); }  // 2^64 = 1 (mod 3)

// 3 * kInverseOf3 = 1 (mod 2^128): multiplying by it divides a multiple of 3 by 3 exactly.
constexpr u128 kInverseOf3 = MakeU128(0xAAAAAAAAAAAAAAAAull, 0xAAAAAAAAAAAAAAABull);
static_assert(static_cast<u128>(3) * kInverseOf3 == 1);

// How promising a number is to climb through: its ancestor weight W_r(x), the sum of x / y
// over the numbers y of x's inverse tree within r levels (x itself included), a doubling
// counting 1/2 and an (y - 1) / 3 step 3 (the -1 ignored). log2 x - log2 W_r(x) =
// -log2 (sum of 1/y) is the level's sort key: of two numbers of one size, the one with more
// (y - 1) / 3 steps ahead, and so more and smaller ancestors, comes first. Whether an
// (y - 1) / 3 step exists is decided by y = 4 (mod 6): for x even it depends on x mod 3, for
// its later ancestors on x mod 3^j, so W_r(x) is a function of the parity and of x mod 3^9 as
// long as the path has taken at most 9 such steps; past that, a third of the even numbers
// are taken to have one (their average). Selecting by this key instead of by size makes the
// beam keep numbers whose climb goes far above the bound before it falls below it; the
// members are exact either way (each is a number of the inverse tree, and re-verified).
class AncestorWeight {
 public:
  static constexpr int kDigits = 9;
  static constexpr uint64_t kModulus = 19683;  // 3^9

  explicit AncestorWeight(unsigned levels) {
    // even[j][res], odd[j][res]: W of an even / odd x with x = res (mod 3^j), one level at a time.
    std::vector<uint64_t> pow3(kDigits + 1, 1);
    for (int j = 1; j <= kDigits; ++j) pow3[j] = 3 * pow3[j - 1];
    std::vector<std::vector<double>> even(kDigits + 1), odd(kDigits + 1);
    for (int j = 0; j <= kDigits; ++j) {
      even[j].assign(pow3[j], 1.0);
      odd[j].assign(pow3[j], 1.0);
    }
    auto next_even = even, next_odd = odd;
    for (unsigned r = 1; r <= levels; ++r) {
      for (int j = 0; j <= kDigits; ++j) {
        for (uint64_t res = 0; res < pow3[j]; ++res) {
          const double doubled = even[j][(2 * res) % pow3[j]];
          next_odd[j][res] = 1 + doubled / 2;
          double w = 1 + doubled / 2;
          if (j == 0) {
            w += odd[0][0];  // a third of them have (x - 1) / 3, worth 3 each
          } else if (res % 3 == 1) {
            w += 3 * odd[j - 1][((res - 1) / 3) % pow3[j - 1]];
          }
          next_even[j][res] = w;
        }
      }
      even.swap(next_even);
      odd.swap(next_odd);
    }
    log2_even_.resize(kModulus);
    log2_odd_.resize(kModulus);
    for (uint64_t res = 0; res < kModulus; ++res) {
      log2_even_[res] = std::log2(even[kDigits][res]);
      log2_odd_[res] = std::log2(odd[kDigits][res]);
    }
  }

  // log2 x - log2 W(x): smaller is more promising.
  double Key(u128 x) const {
    const uint64_t res = (Hi64(x) % kModulus * kTwoTo64Mod + Lo64(x) % kModulus) % kModulus;  // x mod 3^9
    return std::log2(static_cast<double>(x)) - ((x & 1) ? log2_odd_[res] : log2_even_[res]);
  }

 private:
  static constexpr uint64_t kTwoTo64Mod = static_cast<uint64_t>((static_cast<u128>(1) << 64) % kModulus);
  std::vector<double> log2_even_, log2_odd_;
};

// Keeps the `width` entries of `level` that come first: by AncestorWeight's key when given,
// else by size. Ties go to the smaller number, so the result does not depend on the order.
void KeepBest(size_t width, const AncestorWeight* weight, std::vector<u128>* level,
              std::vector<std::pair<double, u128>>* scratch) {
  if (level->size() <= width) return;
  const auto cut = static_cast<std::ptrdiff_t>(width);
  if (weight == nullptr) {
    std::nth_element(level->begin(), level->begin() + cut, level->end());
    level->resize(width);
    return;
  }
  scratch->clear();
  for (u128 x : *level) scratch->emplace_back(weight->Key(x), x);
  std::nth_element(scratch->begin(), scratch->begin() + cut, scratch->end());
  level->clear();
  for (size_t i = 0; i < width; ++i) level->push_back((*scratch)[i].second);
}

}  // namespace

Status FindClassMembers(const std::vector<Record>& seeds, const ClassMemberSearch& search,
                        std::vector<Record>* members) {
  members->clear();
  if (search.below < 2) return Status::InvalidArgument("class members: the bound must be 2 or more");
  if (search.beam_width == 0) return Status::InvalidArgument("class members: the beam width must be positive");

  // Every trajectory point of a seed has a known delay: the seed's minus the steps taken.
  const unsigned spare_bits = 128u - static_cast<unsigned>(BitLength(search.below));
  const unsigned headroom = std::min(search.headroom_bits, spare_bits > 0 ? spare_bits - 1 : 0u);
  const u128 climb_below = search.below << headroom;
  // points[d]: the seeds' trajectory points of delay d, at most kSeedsPerLevel beams of them,
  // the smallest: every seed's trajectory passes nearly every level, so 100000 seeds
  // (imported known points) would otherwise hold and sort seeds x levels numbers (about 1 GB
  // and 10 s at 2^66). A level collects up to twice its share and then keeps the smallest
  // half (one nth_element), so an accepted point costs an append. The published and class
  // records put fewer than that on any level, so their search is unchanged.
  constexpr size_t kSeedsPerLevel = 4;
  const size_t seeds_per_level = kSeedsPerLevel * search.beam_width;
  std::vector<std::vector<u128>> points(static_cast<size_t>(search.max_delay) + 1);
  // Points at or above it cannot be among a level's smallest (contiguous, so that the common
  // case, a point too large to keep, costs no visit to the level).
  std::vector<u128> keep_below(points.size(), kU128Max);
  const auto keep_smallest = [&](uint32_t d) {
    std::vector<u128>& at = points[d];
    std::nth_element(at.begin(), at.begin() + static_cast<std::ptrdiff_t>(seeds_per_level - 1), at.end());
    at.resize(seeds_per_level);
    keep_below[d] = *std::max_element(at.begin(), at.end());
  };
  points[0].push_back(1);
  for (const Record& seed : seeds) {
    // The walk below checks the delay on the way (it must reach 1 exactly at step `delay`);
    // a trajectory that leaves 128 bits is checked on GMP integers.
    u128 v = seed.n;
    uint32_t d = seed.delay;
    bool wide = false;
    for (; d > 0 && v > 1; --d) {
      if (v < climb_below && d <= search.max_delay && v < keep_below[d]) {
        points[d].push_back(v);
        if (points[d].size() == 2 * seeds_per_level) keep_smallest(d);
      }
      if (!Step(&v)) {
        wide = true;
        break;
      }
    }
    if (seed.n == 0 || (wide ? SlowDelay(seed.n) != seed.delay : d != 0 || v != 1)) {
      return Status::InvalidArgument("class members: seed " + ToDecimal(seed.n) + " does not have delay " +
                                     std::to_string(seed.delay));
    }
  }
  for (uint32_t d = 0; d < points.size(); ++d) {
    if (points[d].size() > seeds_per_level) keep_smallest(d);
  }

  // Climb level by level, keeping beam_width numbers of each delay: the most promising ones
  // (AncestorWeight) or the smallest. Distinct numbers of one level have distinct
  // predecessors, so a level never holds a number twice except through the seeds. A multiple
  // of 3 has only doublings above it, so one at or above the bound is dropped.
  std::unique_ptr<AncestorWeight> weight;
  if (search.lookahead_levels > 0) weight = std::make_unique<AncestorWeight>(search.lookahead_levels);
  std::vector<u128> level, next;
  std::vector<std::pair<double, u128>> scratch;
  u128 smallest_made = 0;  // the smallest number the last level made, kept or not (0: none)
  for (uint32_t d = 0; d <= search.max_delay; ++d) {
    u128 smallest = smallest_made;
    const std::vector<u128>& seeded = points[d];
    if (!seeded.empty()) {
      level.insert(level.end(), seeded.begin(), seeded.end());
      std::sort(level.begin(), level.end());
      level.erase(std::unique(level.begin(), level.end()), level.end());
      if (smallest == 0 || level.front() < smallest) smallest = level.front();
    }
    if (smallest != 0 && smallest < search.below) members->push_back(Record{smallest, d});

    next.clear();
    for (u128 n : level) {
      const unsigned r3 = Mod3(n);
      if (n < climb_below - n && (r3 != 0 || n < search.below)) next.push_back(2 * n);  // 2n < climb_below
      if ((n & 1) == 0 && r3 == 1 && n > 4) {                                              // n = 4 (mod 6)
        const u128 m = (n - 1) * kInverseOf3;                                              // (n - 1) / 3, exact
        if (m < search.below || Mod3(m) != 0) next.push_back(m);
      }
    }
    smallest_made = next.empty() ? 0 : *std::min_element(next.begin(), next.end());
    KeepBest(search.beam_width, weight.get(), &next, &scratch);
    level.swap(next);
  }

  // The climb is exact by construction; checking it costs milliseconds.
  for (const Record& m : *members) {
    if (SlowDelay(m.n) != m.delay) {
      return Status::Internal("class members: " + ToDecimal(m.n) + " was found with a wrong delay");
    }
  }
  return Status::Ok();
}

std::vector<Record> ClassMemberSeeds(const MergedRecords& merged, const std::vector<Record>& extra_points) {
  std::vector<Record> seeds;
  for (const auto* list : {&merged.delay_final, &merged.delay_candidates, &merged.class_final,
                           &merged.class_candidates, &merged.known_points, &extra_points}) {
    seeds.insert(seeds.end(), list->begin(), list->end());
  }
  return seeds;
}

Status CloseHolesFromKnownPoints(const MergedRecords& merged, u128 begin, LeaseContext* ctx,
                                 const std::vector<Record>& extra_points) {
  if (ctx->open_holes.empty() || begin < 2) return Status::Ok();
  ClassMemberSearch search;
  search.below = begin;
  search.max_delay = ctx->floor;
  std::vector<Record> members;
  Status st = FindClassMembers(ClassMemberSeeds(merged, extra_points), search, &members);
  if (!st.ok()) return st;
  CloseHoles(members, begin, ctx);
  return Status::Ok();
}

}  // namespace collatz
