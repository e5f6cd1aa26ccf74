#include "core/class_members.h"

#include <algorithm>
#include <map>

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
  std::map<uint32_t, std::vector<u128>> points;  // delay -> numbers
  points[0].push_back(1);
  for (const Record& seed : seeds) {
    if (seed.n == 0 || SlowDelay(seed.n) != seed.delay) {
      return Status::InvalidArgument("class members: seed " + ToDecimal(seed.n) + " does not have delay " +
                                     std::to_string(seed.delay));
    }
    u128 v = seed.n;
    for (uint32_t d = seed.delay; d > 0; --d) {
      if (v < climb_below && d <= search.max_delay) points[d].push_back(v);
      if (!Step(&v)) break;
    }
  }

  // Climb level by level, keeping the smallest numbers of each delay (small numbers have the
  // most predecessors below the bound). Distinct numbers of one level have distinct
  // predecessors, so a level never holds a number twice except through the seeds.
  std::vector<u128> level, next;
  for (uint32_t d = 0; d <= search.max_delay; ++d) {
    auto seeded = points.find(d);
    if (seeded != points.end()) level.insert(level.end(), seeded->second.begin(), seeded->second.end());
    std::sort(level.begin(), level.end());
    level.erase(std::unique(level.begin(), level.end()), level.end());
    if (!level.empty() && level.front() < search.below) members->push_back(Record{level.front(), d});

    next.clear();
    for (u128 n : level) {
      if (n < climb_below - n) next.push_back(2 * n);  // 2n < climb_below
      if (n % 6 == 4 && n > 4) next.push_back((n - 1) / 3);
    }
    if (next.size() > search.beam_width) {
      std::nth_element(next.begin(), next.begin() + static_cast<std::ptrdiff_t>(search.beam_width), next.end());
      next.resize(search.beam_width);
    }
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
                           &merged.class_candidates, &extra_points}) {
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
