// collatzctl stats: batch statistics of delays over [--from, --to) (issue 6), and the
// stats file format (docs/STATS_FORMAT.md) that it writes and `collatzctl plot stats` reads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/batch_stats.h"
#include "core/stats_file.h"
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

// The file encoding lives in core/stats_file.h (every binary links it); its names are
// also visible here, as before.
using collatz::DecodeStatsFile;
using collatz::EncodeStatsFile;
using collatz::FormatAverage;
using collatz::FormatStatsCsv;
using collatz::kStatsFormatVersion;
using collatz::kStatsHeaderBytes;
using collatz::kStatsRecordBytes;
using collatz::StatsFile;

// `data` to stdout (path empty or "-") or to a file: written to a temporary file in the
// same folder and renamed, so a reader never sees half a file.
Status WriteOutput(const std::string& path, const std::string& data);
// Written to a temporary file in the same folder and renamed, so a reader never sees half a file.
Status WriteStatsFile(const std::string& path, const StatsFile& file);
Status ReadStatsFile(const std::string& path, StatsFile* out);

}  // namespace collatz::cli
