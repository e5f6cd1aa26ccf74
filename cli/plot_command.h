// collatzctl plot records|stats: PNG pictures drawn by gnuplot (Debian gnuplot-nox) from a
// generated script with the data inline, fed to gnuplot on stdin.
#pragma once

#include <string>
#include <vector>

#include "cli/stats_command.h"
#include "core/unit.h"

namespace collatz::cli {

struct PlotArgs {
  std::string what;  // "records" or "stats"
  std::string db = "./collatz.db";  // records
  std::string in;                   // stats: a stats file
  std::string out;                  // the PNG
  int width = 1200;
  int height = 750;
};
int PlotCommand(const PlotArgs& args);

// The gnuplot scripts (exposed for tests): every data point inline, the output path quoted.
std::string RecordsPlotScript(const std::vector<Record>& delay_records, const std::vector<Record>& class_records,
                              const std::string& covered, double covered_log2, const PlotArgs& args);
// At most `max_points` points: consecutive batches are merged (min of mins, max of maxes,
// average of all their numbers) when there are more.
std::string StatsPlotScript(const StatsFile& file, const PlotArgs& args, size_t max_points = 2000);

// A gnuplot single-quoted string literal.
std::string GnuplotQuote(const std::string& s);

}  // namespace collatz::cli
