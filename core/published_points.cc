#include "core/published_points.h"

#include <algorithm>

#include "core/delay.h"
#include "core/embedded_records.h"
#include "core/records_csv.h"

namespace collatz {

const std::vector<Record>& PublishedDelayPoints() {
  static const std::vector<Record> points = [] {
    std::vector<Record> rows;
    if (!ParseRecordsCsv(EmbeddedPublishedDelayRecordsCsv(), RecordCsvKind::kDelay, &rows).ok()) rows.clear();
    // The list's delay column is not trusted: each delay is the exact one of its n
    // (SlowDelay leaves 128 bits for GMP when a trajectory would).
    for (Record& r : rows) r.delay = SlowDelay(r.n);
    std::sort(rows.begin(), rows.end(), [](const Record& a, const Record& b) { return a.n < b.n; });
    return rows;
  }();
  return points;
}

}  // namespace collatz
