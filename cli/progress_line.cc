#include "cli/progress_line.h"

#include <cstdio>

#include <spdlog/spdlog.h>

namespace collatz::cli {

std::string FormatDuration(double seconds) {
  if (!(seconds >= 0) || seconds > 1e9) return "?";
  const long s = static_cast<long>(seconds + 0.5);
  char buf[48];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%ldh%02ldm%02lds", s / 3600, s / 60 % 60, s % 60);
  } else if (s >= 60) {
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lds", s);
  }
  return buf;
}

ProgressLine::ProgressLine(u128 total, ProgressOptions options) : total_(total), options_(std::move(options)) {
  if (!options_.now) options_.now = [] { return ProgressOptions::Clock::now(); };
  if (!options_.log) options_.log = [](const std::string& line) { spdlog::info("{}", line); };
  start_ = options_.now();
}

ProgressLine::~ProgressLine() { Clear(); }

std::string ProgressLine::Describe(u128 done, const std::string& label, ProgressOptions::Clock::time_point now) const {
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double d = static_cast<double>(done), t = static_cast<double>(total_);
  // The rate since the first report: what came before it (an engine's one-time tables, e.g.
  // its own record table) says nothing about how fast the rest goes.
  const double since_first = std::chrono::duration<double>(now - first_time_).count();
  const double rate = since_first > 0 && done > first_done_ ? static_cast<double>(done - first_done_) / since_first : 0;
  const double eta = rate > 0 ? (t - d) / rate : -1;
  char rate_text[32] = "?";
  if (rate > 0) std::snprintf(rate_text, sizeof rate_text, "%.3g", rate);
  char buf[256];
  std::snprintf(buf, sizeof buf, "%5.1f%%  %.3g of %.3g numbers  %s numbers/s  elapsed %s  ETA %s  ",
                t > 0 ? 100.0 * d / t : 100.0, d, t, rate_text, FormatDuration(elapsed).c_str(), FormatDuration(eta).c_str());
  return buf + label;
}

void ProgressLine::Update(u128 done, const std::string& label) {
  const auto now = options_.now();
  if (!reported_) {
    reported_ = true;
    first_done_ = done;
    first_time_ = now;
  }
  if (options_.terminal) {
    if (drawn_ && now - last_ < std::chrono::milliseconds(250)) return;
    last_ = now;
    std::fprintf(stderr, "\r\033[K%s", Describe(done, label, now).c_str());
    std::fflush(stderr);
    drawn_ = true;
    return;
  }
  if (logged_ && now - last_ < options_.log_interval) return;
  last_ = now;
  logged_ = true;
  options_.log("progress " + Describe(done, label, now));
}

void ProgressLine::Clear() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace collatz::cli
