#include "cli/plot_command.h"

#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <memory>

#include "cli/cli_util.h"
#include "cli/exit_codes.h"
#include "storage/record_db.h"

namespace collatz::cli {
namespace {

double Log2(u128 n) { return std::log2(static_cast<long double>(n)); }

std::string Num(double x, const char* fmt = "%.9g") {
  char buf[48];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}

// Enhanced-text form of a number for titles: "2^60+5" -> "2^{60}+5" (a bare ^ raises one character).
std::string Enhanced(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '^') {
      size_t j = i + 1;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
      out += '{';
      out.append(text, i + 1, j - i - 1);
      out += '}';
      i = j - 1;
    }
  }
  return out;
}

// "2^30+2^21" when the offset is a power of two, else FormatNumberShort.
std::string ShortEnd(u128 from, u128 to) {
  const u128 d = to - from;
  if (from != 0 && (d & (d - 1)) == 0 && d >= 1024) return FormatNumberShort(from) + "+2^" + std::to_string(BitLength(d) - 1);
  return FormatNumberShort(to);
}

std::string Header(const PlotArgs& args) {
  return "set terminal pngcairo size " + std::to_string(args.width) + "," + std::to_string(args.height) +
         " enhanced font 'DejaVu Sans,11'\n"
         "set output " + GnuplotQuote(args.out) + "\n"
         "set grid lc rgb '#dddddd'\n"
         "set border lc rgb '#444444'\n";
}

// A datablock with one "x y" line per point.
std::string Block(const std::string& name, const std::vector<std::pair<double, double>>& points) {
  std::string s = "$" + name + " << EOD\n";
  for (const auto& [x, y] : points) s += Num(x) + " " + Num(y) + "\n";
  return s + "EOD\n";
}

// Runs gnuplot with the script on stdin; its messages go to our stderr.
Status RunGnuplot(const std::string& script) {
  std::fflush(stdout);
  FILE* p = ::popen("gnuplot", "w");
  if (p == nullptr) return Status::Unavailable("cannot start gnuplot (install gnuplot-nox: deploy/install-deps.sh)");
  const size_t written = std::fwrite(script.data(), 1, script.size(), p);
  const int rc = ::pclose(p);
  if (rc == -1 || !WIFEXITED(rc)) return Status::Internal("gnuplot did not finish normally");
  if (WEXITSTATUS(rc) == 127) return Status::Unavailable("gnuplot not found (install gnuplot-nox: deploy/install-deps.sh)");
  if (WEXITSTATUS(rc) != 0) return Status::Internal("gnuplot failed with exit status " + std::to_string(WEXITSTATUS(rc)));
  if (written != script.size()) return Status::IOError("writing the script to gnuplot failed");
  return Status::Ok();
}

Status CheckPng(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return Status::Internal("gnuplot wrote no " + path);
  unsigned char sig[8] = {0};
  const size_t n = std::fread(sig, 1, 8, f);
  std::fclose(f);
  static const unsigned char kPng[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (n != 8 || !std::equal(sig, sig + 8, kPng)) return Status::Internal(path + " is not a PNG file");
  return Status::Ok();
}

}  // namespace

std::string GnuplotQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "''";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out + "'";
}

std::string RecordsPlotScript(const std::vector<Record>& delay_records, const std::vector<Record>& class_records,
                              const std::string& covered, double covered_log2, const PlotArgs& args) {
  std::vector<std::pair<double, double>> delay, cls;
  for (const Record& r : delay_records) delay.emplace_back(Log2(r.n), r.delay);
  // The running maximum holds up to the covered prefix: the step line ends there.
  std::vector<std::pair<double, double>> steps = delay;
  if (!steps.empty() && covered_log2 > steps.back().first) steps.emplace_back(covered_log2, steps.back().second);
  for (const Record& r : class_records) cls.emplace_back(Log2(r.n), r.delay);
  std::string s = Header(args);
  s += "set title " + GnuplotQuote("Collatz delay records and class records (final below N = " + Enhanced(covered) + ")") + "\n";
  s += "set xlabel 'log_2 N'\nset ylabel 'delay(N)'\nset key top left box opaque\nset xrange [0:*]\nset yrange [0:*]\n";
  s += Block("delay", delay) + Block("steps", steps) + Block("class", cls);
  s += "plot $class using 1:2 with points pt 7 ps 0.35 lc rgb '#6baed6' title " +
       GnuplotQuote("class records: least N of each delay (" + std::to_string(cls.size()) + ")") + ", \\\n";
  s += "     $steps using 1:2 with steps lw 2 lc rgb '#d62728' title " +
       GnuplotQuote("delay records (" + std::to_string(delay.size()) + ")") + ", \\\n";
  s += "     $delay using 1:2 with points pt 7 ps 0.7 lc rgb '#d62728' notitle\n";
  return s;
}

std::string StatsPlotScript(const StatsFile& file, const PlotArgs& args, size_t max_points) {
  const size_t n = file.batches.size();
  const size_t group = std::max<size_t>(1, (n + max_points - 1) / std::max<size_t>(1, max_points));
  std::vector<std::pair<double, double>> mins, avgs, maxs;
  const u128 span = file.to() - file.from;
  for (size_t g = 0; g < n; g += group) {
    uint32_t mn = 0xFFFF, mx = 0;
    uint64_t sum = 0, count = 0;
    for (size_t b = g; b < std::min(n, g + group); ++b) {
      const BatchStats& s = file.batches[b];
      mn = std::min<uint32_t>(mn, s.min);
      mx = std::max<uint32_t>(mx, s.max);
      sum += s.sum;
      count += s.count;
    }
    // x: the middle of the merged batches, relative to the range start.
    const double x = static_cast<double>(static_cast<u128>(g) * file.batch) +
                     static_cast<double>(std::min(n, g + group) - g) * file.batch / 2.0;
    mins.emplace_back(x, mn);
    maxs.emplace_back(x, mx);
    avgs.emplace_back(x, count == 0 ? 0.0 : static_cast<double>(sum) / static_cast<double>(count));
  }
  std::string s = Header(args);
  std::string range = "[";
  range.append(Enhanced(FormatNumberShort(file.from))).append(", ").append(Enhanced(ShortEnd(file.from, file.to()))).append(")");
  std::string title = "delay per batch of " + std::to_string(file.batch) + " over " + range;
  if (group > 1) title += ", " + std::to_string(group) + " batches per point";
  s += "set title " + GnuplotQuote(title) + "\n";
  s += "set xlabel " + GnuplotQuote(std::string("N - ").append(Enhanced(FormatNumberShort(file.from)))) + "\n";
  s += "set ylabel 'delay(N)'\nset key outside top center horizontal\nset format x '%.3g'\n";
  s += "set xrange [0:" + Num(static_cast<double>(span)) + "]\nset yrange [0:*]\n";
  s += "$batches << EOD\n";
  for (size_t i = 0; i < mins.size(); ++i) {
    s += Num(mins[i].first) + " " + Num(mins[i].second) + " " + Num(avgs[i].second, "%.6f") + " " + Num(maxs[i].second) + "\n";
  }
  s += "EOD\n";
  const char* style = mins.size() > 200 ? "lines" : "linespoints pt 7 ps 0.5";
  s += "plot $batches using 1:2:4 with filledcurves lc rgb '#fbe3d6' title 'min..max', \\\n";
  s += "     $batches using 1:4 with " + std::string(style) + " lw 1.2 lc rgb '#d62728' title 'max', \\\n";
  s += "     $batches using 1:3 with " + std::string(style) + " lw 2 lc rgb '#222222' title 'average', \\\n";
  s += "     $batches using 1:2 with " + std::string(style) + " lw 1.2 lc rgb '#2171b5' title 'min'\n";
  return s;
}

int PlotCommand(const PlotArgs& args) {
  const std::string cmd = "plot " + args.what;
  if (args.out.empty()) return UsageError(cmd, "--out FILE.png is required");
  if (args.width < 200 || args.width > 8000 || args.height < 150 || args.height > 8000) {
    return UsageError(cmd, "--width/--height out of range (200..8000, 150..8000)");
  }
  std::string script;
  if (args.what == "records") {
    if (args.db.empty()) return UsageError(cmd, "--db must not be empty");
    std::unique_ptr<RecordDb> db;
    Status st = RecordDb::Open(args.db, RecordDb::OpenMode::kExistingOnly, &db);
    if (!st.ok()) return Failure(cmd, st);
    std::vector<Record> delay, cls;
    u128 delay_prefix = 1, class_prefix = 1;
    if (!(st = db->QueryFinalRecords(RecordKind::kDelay, &delay, &delay_prefix)).ok()) return Failure(cmd, st);
    if (!(st = db->QueryFinalRecords(RecordKind::kClass, &cls, &class_prefix)).ok()) return Failure(cmd, st);
    if (delay.empty()) return Failure(cmd, Status::NotFound(args.db + " holds no final delay records to plot"));
    std::string covered = FormatNumberShort(delay_prefix);
    if (class_prefix != delay_prefix) covered += "; classes below " + FormatNumberShort(class_prefix);
    script = RecordsPlotScript(delay, cls, covered, Log2(delay_prefix), args);
  } else if (args.what == "stats") {
    if (args.in.empty()) return UsageError(cmd, "--in FILE (a stats file) is required");
    StatsFile file;
    const Status st = ReadStatsFile(args.in, &file);
    if (!st.ok()) return Failure(cmd, st);
    script = StatsPlotScript(file, args);
  } else {
    return UsageError("plot", "expected records or stats, got \"" + args.what + "\"");
  }
  Status st = RunGnuplot(script);
  if (st.ok()) st = CheckPng(args.out);
  if (!st.ok()) return Failure(cmd, st);
  return kExitOk;
}

}  // namespace collatz::cli
