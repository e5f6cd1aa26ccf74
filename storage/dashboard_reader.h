// Read-only queries for the coordinator's web dashboard (server/dashboard/) on a connection
// of its own: in WAL mode its reads never wait for the coordinator's writes, nor the
// coordinator's writes for them. Not thread-safe (one caller at a time).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/u128.h"

namespace collatz {

struct ThroughputBucket {
  int64_t start_ms = 0;  // [start_ms, start_ms + bucket_ms)
  uint64_t units = 0;    // search units
  u128 numbers = 0;
  uint64_t stats_units = 0;  // stats units (batch statistics)
  u128 stats_numbers = 0;
};

struct DashboardEvent {
  int64_t at_ms = 0;
  // worker_flagged, worker_unflagged, unit_quarantined, stats_unit_quarantined (the events table), or
  // record (a final record or candidate, at the time the unit holding it finished).
  std::string kind;
  std::string detail;
};

class DashboardReader {
 public:
  // Opens `path` (an existing coordinator database of schema v6 or later) read-only.
  static Status Open(const std::string& path, std::unique_ptr<DashboardReader>* out);
  ~DashboardReader();
  DashboardReader(const DashboardReader&) = delete;
  DashboardReader& operator=(const DashboardReader&) = delete;

  // The finished work of [from_ms, to_ms) in consecutive buckets of bucket_ms (a positive
  // multiple of a minute; from_ms a multiple of bucket_ms), empty buckets included.
  Status Throughput(int64_t from_ms, int64_t to_ms, int64_t bucket_ms, std::vector<ThroughputBucket>* out);

  // The newest `limit` events, newest first: the events table and the records found by units.
  Status RecentEvents(int limit, std::vector<DashboardEvent>* out);

 private:
  explicit DashboardReader(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

}  // namespace collatz
