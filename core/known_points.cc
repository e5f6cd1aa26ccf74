#include "core/known_points.h"

#include <algorithm>
#include <string>

#include "core/delay.h"
#include "core/import_check.h"

namespace collatz {

Status CheckKnownPointRows(const std::vector<Record>& points) {
  if (points.empty()) return Status::InvalidArgument("known points: the list is empty");
  if (points.size() > kMaxKnownPointsPerImport) {
    return Status::InvalidArgument("known points: " + std::to_string(points.size()) + " rows, more than the " +
                                   std::to_string(kMaxKnownPointsPerImport) + " an import may hold");
  }
  for (const Record& p : points) {
    if (p.n < 1) return Status::InvalidArgument("known points: n must be at least 1");
    const uint32_t exact = SlowDelay(p.n);
    if (exact != p.delay) {
      return Status::InvalidArgument("known points: row " + ToDecimal(p.n) + "," + std::to_string(p.delay) +
                                     " is wrong: the exact delay of " + ToDecimal(p.n) + " is " + std::to_string(exact));
    }
  }
  return Status::Ok();
}

Status CheckKnownPointsFitImports(const std::vector<Record>& points, const std::vector<TrustedImport>& imports) {
  for (TrustedImport imp : imports) {
    // Stored lists come back by n; the refutation wants delay records by n, class records by delay.
    std::sort(imp.delay_records.begin(), imp.delay_records.end(), [](const Record& a, const Record& b) { return a.n < b.n; });
    std::sort(imp.class_records.begin(), imp.class_records.end(),
              [](const Record& a, const Record& b) { return a.delay < b.delay; });
    if (Status st = CheckPointsFitImport(imp, points); !st.ok()) {
      return Status::InvalidArgument("known points contradict the trusted import complete below " +
                                     ToDecimal(imp.complete_below) + ": " + st.message());
    }
  }
  return Status::Ok();
}

Status CheckKnownPoints(const std::vector<Record>& points, const std::vector<TrustedImport>& imports) {
  if (Status st = CheckKnownPointRows(points); !st.ok()) return st;
  return CheckKnownPointsFitImports(points, imports);
}

}  // namespace collatz
