#include "storage/dashboard_reader.h"

#include <algorithm>

#include "storage/n_text.h"
#include "storage/sqlite_statement.h"

namespace collatz {

namespace {

// Records found by units (imports are not "found"), at the time the finished unit whose
// range holds the record finished (the record itself may be a doubling the merge derived
// from a record of an earlier unit): each delay record or candidate on its own, class
// records and candidates per unit (a unit often holds dozens). The unit is the finished
// one with the largest begin <= n (index units_by_state), if its range holds n.
constexpr const char* kRecordEventsSql = R"sql(
WITH found AS (
  SELECT f.kind, f.status, f.n, f.delay,
         (SELECT u.id FROM units u WHERE u.state = 'finished' AND u.begin_n <= f.n
           ORDER BY u.begin_n DESC LIMIT 1) AS unit_id
    FROM final_records f)
SELECT fo.kind, fo.status, max(fo.n), max(fo.delay), count(*), u.begin_n, u.end_n,
       CAST(round((julianday(u.finished_at) - 2440587.5) * 86400000.0) AS INTEGER) AS at_ms
  FROM found fo JOIN units u ON u.id = fo.unit_id AND fo.n < u.end_n AND u.finished_at IS NOT NULL
  GROUP BY fo.kind, fo.status, u.id, CASE WHEN fo.kind = 'delay' THEN fo.n ELSE '' END
  ORDER BY at_ms DESC LIMIT ?1
)sql";

}  // namespace

Status DashboardReader::Open(const std::string& path, std::unique_ptr<DashboardReader>* out) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  if (rc != SQLITE_OK) {
    Status st = SqliteStatus(db, rc, "cannot open database " + path + " for the dashboard");
    sqlite3_close_v2(db);
    return st;
  }
  sqlite3_busy_timeout(db, 2000);
  out->reset(new DashboardReader(db));
  return Status::Ok();
}

DashboardReader::~DashboardReader() { sqlite3_close_v2(db_); }

Status DashboardReader::Throughput(int64_t from_ms, int64_t to_ms, int64_t bucket_ms,
                                   std::vector<ThroughputBucket>* out) {
  out->clear();
  if (bucket_ms <= 0 || bucket_ms % 60000 != 0 || from_ms % bucket_ms != 0 || to_ms < from_ms) {
    return Status::InvalidArgument("throughput buckets must be whole minutes and aligned");
  }
  for (int64_t t = from_ms; t < to_ms; t += bucket_ms) out->push_back(ThroughputBucket{t});
  for (const bool stats : {false, true}) {
    SqliteStatement q;
    Status st = q.Prepare(db_, stats ? "SELECT minute_ms, units, numbers FROM stats_throughput "
                                       "WHERE minute_ms >= ?1 AND minute_ms < ?2"
                                     : "SELECT minute_ms, units, numbers FROM throughput "
                                       "WHERE minute_ms >= ?1 AND minute_ms < ?2");
    if (!st.ok()) return st;
    q.BindInt64(1, from_ms);
    q.BindInt64(2, to_ms);
    while (true) {
      bool row = false;
      if (!(st = q.Step(&row)).ok()) return st;
      if (!row) break;
      u128 numbers = 0;
      if (!(st = DecodeNText(q.ColumnText(2), &numbers)).ok()) return st;
      ThroughputBucket& b = (*out)[static_cast<size_t>((q.ColumnInt64(0) - from_ms) / bucket_ms)];
      (stats ? b.stats_units : b.units) += static_cast<uint64_t>(q.ColumnInt64(1));
      (stats ? b.stats_numbers : b.numbers) += numbers;
    }
  }
  return Status::Ok();
}

Status DashboardReader::RecentEvents(int limit, std::vector<DashboardEvent>* out) {
  out->clear();
  SqliteStatement logged;
  Status st = logged.Prepare(db_, "SELECT at_ms, kind, detail FROM events ORDER BY at_ms DESC, id DESC LIMIT ?1");
  if (!st.ok()) return st;
  logged.BindInt64(1, limit);
  while (true) {
    bool row = false;
    if (!(st = logged.Step(&row)).ok()) return st;
    if (!row) break;
    out->push_back(DashboardEvent{logged.ColumnInt64(0), logged.ColumnText(1), logged.ColumnText(2)});
  }
  SqliteStatement records;
  if (!(st = records.Prepare(db_, kRecordEventsSql)).ok()) return st;
  records.BindInt64(1, limit);
  while (true) {
    bool row = false;
    if (!(st = records.Step(&row)).ok()) return st;
    if (!row) break;
    u128 n = 0, begin = 0, end = 0;
    if (!(st = DecodeNText(records.ColumnText(2), &n)).ok()) return st;
    if (!(st = DecodeNText(records.ColumnText(5), &begin)).ok()) return st;
    if (!(st = DecodeNText(records.ColumnText(6), &end)).ok()) return st;
    const bool candidate = records.ColumnText(1) == "candidate";
    const std::string delay = std::to_string(records.ColumnInt64(3));
    std::string detail;
    if (records.ColumnText(0) == "delay") {
      detail =
          std::string(candidate ? "delay candidate" : "delay record") + " n = " + ToDecimal(n) + ", delay " + delay;
    } else {
      const int64_t count = records.ColumnInt64(4);
      detail = std::to_string(count) + (candidate ? " class candidate" : " class record") + (count == 1 ? "" : "s") +
               " up to delay " + delay;
    }
    detail += " (unit [" + ToDecimal(begin) + ", " + ToDecimal(end) + "))";
    out->push_back(DashboardEvent{records.ColumnInt64(7), "record", std::move(detail)});
  }
  std::stable_sort(out->begin(), out->end(),
                   [](const DashboardEvent& a, const DashboardEvent& b) { return a.at_ms > b.at_ms; });
  if (out->size() > static_cast<size_t>(limit)) out->resize(static_cast<size_t>(limit));
  return Status::Ok();
}

}  // namespace collatz
