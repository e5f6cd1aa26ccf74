// collatzctl stats: batch statistics of delays over [--from, --to) (issue 6), and the
// stats file format (docs/STATS_FORMAT.md) that it writes and `collatzctl plot stats` reads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/batch_stats.h"
#include "core/status.h"
#include "core/u128.h"

namespace collatz::cli {

struct StatsArgs {
  std::string from = "0";
  std::string to;
  uint32_t batch = kDefaultStatsBatch;
  std::string backend = "cpu";
  int threads = 0;        // CPU threads, 0: all cores
  std::string out;        // binary file (required for --format bin); csv: the file, or stdout if empty or "-"
  std::string format = "bin";
  std::string in;         // instead of computing: read this stats file (e.g. to print it as csv)
};
int StatsCommand(const StatsArgs& args);

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
// Checks magic, version, header and payload checksums, sizes and counts; `name` is used in messages.
Status DecodeStatsFile(const std::string& bytes, const std::string& name, StatsFile* out);
// Written to a temporary file in the same folder and renamed, so a reader never sees half a file.
Status WriteStatsFile(const std::string& path, const StatsFile& file);
Status ReadStatsFile(const std::string& path, StatsFile* out);

// "batch_start,min,avg,max" and one row per batch; avg = sum / count, rounded to 6 decimals.
std::string FormatStatsCsv(const StatsFile& file);
// sum / count with 6 decimals, rounded half up, computed exactly in integers.
std::string FormatAverage(uint64_t sum, uint32_t count);

}  // namespace collatz::cli
