#include "core/record_table_check.h"

#include <algorithm>
#include <string>

#include "core/published_points.h"

namespace collatz {
namespace {

std::string Describe(const Record& r) { return ToDecimal(r.n) + " (delay " + std::to_string(r.delay) + ")"; }

std::string BoundText(u128 bound) {
  for (unsigned k = 0; k < 128; ++k) {
    if (bound == Pow2(k)) return "2^" + std::to_string(k);
  }
  return ToDecimal(bound);
}

}  // namespace

Status CheckRecordsAgainstPublished(const std::vector<Record>& table, u128 complete_below,
                                    const std::vector<Record>& published, u128 published_complete_below,
                                    const std::string& what) {
  const u128 below = std::min(complete_below, published_complete_below);
  const std::string head = what + ": its delay records below " + BoundText(below) +
                           " differ from the published ones (complete there): ";
  for (size_t i = 1; i < table.size() && table[i - 1].n < below; ++i) {
    if (table[i].n <= table[i - 1].n) {
      return Status::FailedPrecondition(head + "the table is not ascending at " + Describe(table[i]));
    }
  }
  size_t i = 0, j = 0;
  for (;;) {
    const bool has_mine = i < table.size() && table[i].n < below;
    const bool has_theirs = j < published.size() && published[j].n < below;
    if (!has_mine && !has_theirs) return Status::Ok();
    if (!has_theirs || (has_mine && table[i].n < published[j].n)) {
      return Status::FailedPrecondition(head + "it holds " + Describe(table[i]) + ", which is not a published record");
    }
    if (!has_mine || published[j].n < table[i].n) {
      return Status::FailedPrecondition(head + "it misses the published record " + Describe(published[j]));
    }
    if (table[i].delay != published[j].delay) {
      return Status::FailedPrecondition(head + "it holds " + Describe(table[i]) + ", the published record " +
                                        Describe(published[j]));
    }
    ++i;
    ++j;
  }
}

Status CheckRecordsAgainstPublished(const std::vector<Record>& table, u128 complete_below, const std::string& what) {
  const std::vector<Record>& published = PublishedDelayPoints();
  if (published.empty()) return Status::Internal("the built-in published records do not parse");
  return CheckRecordsAgainstPublished(table, complete_below, published, published.back().n + 1, what);
}

}  // namespace collatz
