// The stats file encoding (docs/STATS_FORMAT.md): batch statistics as a compact,
// checksummed byte string. One encoding for everything that stores or moves them: the
// files of `collatzctl stats`, a worker's result of a stats unit on the wire, the
// coordinator's stored results, and the file `collatzctl stats-fetch` writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/batch_stats.h"
#include "core/status.h"
#include "core/u128.h"

namespace collatz {

// The contents of a stats file: batches of `batch` numbers starting at `from`.
struct StatsFile {
  u128 from = 0;
  uint32_t batch = kDefaultStatsBatch;
  std::vector<BatchStats> batches;
  u128 to() const { return from + static_cast<u128>(batches.size()) * batch; }
};

constexpr size_t kStatsHeaderBytes = 64;
constexpr size_t kStatsRecordBytes = 12;  // min u16, max u16, sum u64
constexpr uint32_t kStatsFormatVersion = 1;

std::string EncodeStatsFile(const StatsFile& file);
// Checks magic, version, header and payload checksums, sizes and counts, and that every
// batch has min <= sum / count <= max (count from the range); `name` is used in messages.
Status DecodeStatsFile(const std::string& bytes, const std::string& name, StatsFile* out);

// "batch_start,min,avg,max" and one row per batch; avg = sum / count, rounded to 6 decimals.
std::string FormatStatsCsv(const StatsFile& file);
// sum / count with 6 decimals, rounded half up, computed exactly in integers.
std::string FormatAverage(uint64_t sum, uint32_t count);

}  // namespace collatz
