#include "core/merge.h"

#include <algorithm>
#include <map>
#include <queue>

namespace collatz {

u128 CoveredPrefix(std::vector<std::pair<u128, u128>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  u128 prefix = 1;
  for (const auto& [b, e] : intervals) {
    if (b > prefix) break;
    prefix = std::max(prefix, e);
  }
  return prefix;
}

namespace {

// Running-maximum filter over all known (n, delay) points with the even records of rule 1
// (2m follows every record m, with delay + 1) merged in ascending n.
std::vector<Record> DelayRecordsOf(std::vector<Record> points) {
  std::sort(points.begin(), points.end(), [](const Record& a, const Record& b) { return a.n < b.n; });
  auto greater_n = [](const Record& a, const Record& b) { return a.n > b.n; };
  std::priority_queue<Record, std::vector<Record>, decltype(greater_n)> evens(greater_n);
  std::vector<Record> records;
  size_t i = 0;
  while (i < points.size() || !evens.empty()) {
    Record next;
    if (evens.empty() || (i < points.size() && points[i].n <= evens.top().n)) {
      next = points[i++];
    } else {
      next = evens.top();
      evens.pop();
    }
    if (!records.empty() && next.n == records.back().n) continue;
    if (records.empty() || next.delay > records.back().delay) {
      records.push_back(next);
      if (next.n <= kU128Max / 2) evens.push({next.n * 2, next.delay + 1});
    }
  }
  return records;
}

// Visits the delays of r.n, 2 r.n, 4 r.n, ... below `begin` (delay(2n) = delay(n) + 1);
// r.n itself must be below begin.
template <typename Visit>
void ForEachDoubling(const Record& r, u128 begin, Visit&& visit) {
  const u128 half = begin / 2 + (begin & 1);  // 2n < begin  <=>  n < half
  u128 n = r.n;
  for (uint32_t d = r.delay;; ++d) {
    visit(d);
    if (n >= half) break;
    n *= 2;
  }
}

}  // namespace

MergedRecords MergeRecords(const std::vector<TrustedImport>& imports, const std::vector<FinishedUnit>& units,
                           const std::vector<Record>& known_points) {
  MergedRecords out;
  out.known_points = known_points;
  SortKnownPoints(&out.known_points);
  std::vector<std::pair<u128, u128>> all, with_classes;
  std::vector<Record> points;
  for (const TrustedImport& imp : imports) {
    all.push_back({1, imp.complete_below});
    if (ImportCoversClasses(imp)) with_classes.push_back({1, imp.complete_below});
    points.insert(points.end(), imp.delay_records.begin(), imp.delay_records.end());
  }
  uint32_t max_delay = 0;
  std::map<uint32_t, u128> odd_min;  // smallest known odd n of each class from class searches
  for (const FinishedUnit& u : units) {
    all.push_back({u.begin, u.end});
    points.insert(points.end(), u.result.ladder.begin(), u.result.ladder.end());
    if (u.kinds == Kinds::kDelayAndClass) {
      with_classes.push_back({u.begin, u.end});
      for (const Record& r : u.result.class_minima) {
        auto it = odd_min.find(r.delay);
        if (it == odd_min.end() || r.n < it->second) odd_min[r.delay] = r.n;
        max_delay = std::max(max_delay, r.delay);
      }
    }
  }
  out.covered_prefix = CoveredPrefix(all);
  // 1 (delay 0) is the first record; it never exceeds a floor, so no ladder holds it.
  if (out.covered_prefix > 1) points.push_back({1, 0});
  out.class_covered_prefix = CoveredPrefix(with_classes);

  for (const Record& r : DelayRecordsOf(std::move(points))) {
    (r.n < out.covered_prefix ? out.delay_final : out.delay_candidates).push_back(r);
  }

  // Class records: imported ones are final; the rest follow the rule-1 recurrence
  // classrec(d) = min(smallest odd n with delay d, 2 classrec(d-1)), final below the class prefix.
  std::map<uint32_t, u128> imported;
  for (const TrustedImport& imp : imports) {
    for (const Record& r : imp.class_records) {
      if (r.n >= imp.complete_below) continue;
      auto it = imported.find(r.delay);
      if (it == imported.end() || r.n < it->second) imported[r.delay] = r.n;
      max_delay = std::max(max_delay, r.delay);
    }
  }
  const u128 cp = out.class_covered_prefix;
  bool have_prev = false;
  u128 prev = 0;
  for (uint32_t d = 0;; ++d) {
    // Past the largest class any unit or import reported, no odd n below the class prefix
    // has delay d (its unit would have reported it, or a smaller member of its class), so
    // the doublings of the last record are the records there while they stay below it
    // (classrec(950) = 2 * 63728127 in [1, 2^27), where no odd n of delay 950 lies).
    if (d > max_delay && (!have_prev || prev > kU128Max / 2 || 2 * prev >= cp)) break;
    bool have = false;
    u128 x = 0;
    if (auto it = imported.find(d); it != imported.end()) {
      have = true;
      x = it->second;
    } else {
      if (auto it2 = odd_min.find(d); it2 != odd_min.end()) {
        have = true;
        x = it2->second;
      }
      if (have_prev && prev <= kU128Max / 2 && (!have || 2 * prev < x)) {
        have = true;
        x = 2 * prev;
      }
    }
    have_prev = have;
    prev = x;
    if (!have) continue;
    (x < cp ? out.class_final : out.class_candidates).push_back({x, d});
  }
  return out;
}

void SortKnownPoints(std::vector<Record>* points) {
  std::sort(points->begin(), points->end(),
            [](const Record& a, const Record& b) { return a.n < b.n || (a.n == b.n && a.delay < b.delay); });
  points->erase(std::unique(points->begin(), points->end(), [](const Record& a, const Record& b) { return a.n == b.n; }),
                points->end());
}

LeaseContext ComputeLeaseContext(const MergedRecords& merged, u128 begin, Kinds kinds,
                                 const std::vector<Record>& extra_points) {
  LeaseContext ctx;
  // Every known (n, delay) point below begin.
  std::vector<Record> known;
  for (const auto* list : {&merged.delay_final, &merged.delay_candidates, &merged.class_final,
                           &merged.class_candidates, &merged.known_points, &extra_points}) {
    for (const Record& r : *list) {
      if (r.n >= 1 && r.n < begin) known.push_back(r);
    }
  }
  for (const Record& r : known) ForEachDoubling(r, begin, [&](uint32_t d) { ctx.floor = std::max(ctx.floor, d); });
  if (kinds == Kinds::kDelayAndClass) {
    // A class is closed when a member below begin is known.
    std::vector<bool> closed(static_cast<size_t>(ctx.floor) + 1, false);
    for (const Record& r : known) ForEachDoubling(r, begin, [&](uint32_t d) {
      if (d <= ctx.floor) closed[d] = true;
    });
    for (uint32_t d = 0; d <= ctx.floor; ++d) {
      if (!closed[d]) ctx.open_holes.push_back(d);
    }
  }
  RecordTableBelow(merged, begin, &ctx.known_records, &ctx.records_complete_below);
  return ctx;
}

void RecordTableBelow(const MergedRecords& merged, u128 begin, std::vector<Record>* records, u128* complete_below) {
  records->clear();
  *complete_below = 0;
  if (merged.covered_prefix <= 1 || merged.delay_final.empty() || merged.delay_final.front().n != 1) return;
  // Only records below the bound are claimed complete.
  const u128 bound = std::min(merged.covered_prefix, begin);
  for (const Record& r : merged.delay_final) {
    if (r.n < bound) records->push_back(r);
  }
  if (!records->empty()) *complete_below = bound;
}

void CloseHoles(const std::vector<Record>& members, u128 begin, LeaseContext* ctx) {
  std::vector<bool> closed(static_cast<size_t>(ctx->floor) + 1, false);
  for (const Record& m : members) {
    if (m.n == 0 || m.n >= begin) continue;
    ForEachDoubling(m, begin, [&](uint32_t d) {
      if (d <= ctx->floor) closed[d] = true;
    });
  }
  std::vector<uint32_t> still_open;
  for (uint32_t d : ctx->open_holes) {
    if (!closed[d]) still_open.push_back(d);
  }
  ctx->open_holes.swap(still_open);
}

}  // namespace collatz
