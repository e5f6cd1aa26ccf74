#include "server/audit_settlement.h"

#include <algorithm>
#include <map>

namespace collatz::server {

namespace {

bool IsOpenClass(const UnitSpec& spec, uint32_t d) {
  return d > spec.floor || std::binary_search(spec.open_holes.begin(), spec.open_holes.end(), d);
}

// The ladder and class minima a correct result must have, given the verified points.
UnitResult EntriesFromPoints(const UnitSpec& spec, std::vector<Record> points) {
  std::sort(points.begin(), points.end(), [](const Record& a, const Record& b) { return a.n < b.n; });
  UnitResult out;
  uint32_t running = spec.floor;
  std::map<uint32_t, u128> minima;
  for (const Record& p : points) {
    if (p.delay > running) {
      out.ladder.push_back(p);
      running = p.delay;
    }
    if (spec.kinds == Kinds::kDelayAndClass && IsOpenClass(spec, p.delay)) minima.emplace(p.delay, p.n);  // first: smallest n
  }
  for (const auto& [d, n] : minima) out.class_minima.push_back({n, d});
  return out;
}

}  // namespace

EntryVerdict WrongByEntries(const UnitSpec& spec, const UnitResult& first, const UnitResult& second) {
  std::vector<Record> points;
  for (const UnitResult* r : {&first, &second}) {
    points.insert(points.end(), r->ladder.begin(), r->ladder.end());
    points.insert(points.end(), r->class_minima.begin(), r->class_minima.end());
  }
  const UnitResult truth = EntriesFromPoints(spec, std::move(points));
  auto wrong = [&](const UnitResult& r) { return r.ladder != truth.ladder || r.class_minima != truth.class_minima; };
  return {wrong(first), wrong(second)};
}

}  // namespace collatz::server
