// What the dashboard's JSON API serves (docs/HTTP.md), rendered from the coordinator's
// memory (status, workers, merged records) and the database (throughput, events) through
// a read-only connection. Every answer comes from a snapshot at most max_age_ms old, so
// however many browsers poll, the coordinator's mutex is taken a few times a second at
// most and the gRPC service never waits on a browser. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "core/status.h"
#include "server/clock.h"
#include "server/coordinator.h"
#include "storage/dashboard_reader.h"
#include "storage/record_db.h"

namespace collatz::server {

struct DashboardOptions {
  int64_t max_age_ms = 1000;  // snapshots older than this are taken again
  int events = 50;            // recent events in /api/status
};

// The windows of /api/throughput: the last hour by minute, day by 15 minutes, week by hour.
enum class ThroughputRange { kHour, kDay, kWeek };

class DashboardData {
 public:
  // `coordinator` and `clock` must outlive this object.
  DashboardData(Coordinator* coordinator, std::unique_ptr<DashboardReader> reader, const Clock* clock,
                DashboardOptions options);
  ~DashboardData();

  // JSON documents; a database error is returned as a Status (the HTTP answer is then 500).
  Status StatusJson(std::string* out);
  Status WorkersJson(std::string* out);
  Status RecordsJson(RecordKind kind, std::string* out);
  Status ThroughputJson(ThroughputRange range, std::string* out);
  // The final records (as `collatzctl server-records --format csv` prints them), or the
  // candidates above the covered prefix in the same format.
  Status RecordsCsv(RecordKind kind, bool candidates, std::string* out);

 private:
  struct Snapshot;
  std::shared_ptr<const Snapshot> Current();
  // Document `name` of the current snapshot, rendered by `render` (under mu_) unless it
  // was already.
  Status Rendered(const std::string& name, std::string* out,
                  const std::function<Status(const Snapshot&, std::string*)>& render);
  static Status RenderStatus(const Snapshot& snap, std::string* out);

  Coordinator* coordinator_;
  const Clock* clock_;
  const DashboardOptions options_;
  std::mutex mu_;  // guards snapshot_ and reader_ (one SQLite connection, one caller at a time)
  std::shared_ptr<const Snapshot> snapshot_;
  std::unique_ptr<DashboardReader> reader_;
};

}  // namespace collatz::server
