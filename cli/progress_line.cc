#include "cli/progress_line.h"

#include <cstdio>

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

ProgressLine::ProgressLine(u128 total, bool enabled)
    : total_(total), enabled_(enabled), start_(std::chrono::steady_clock::now()) {}

ProgressLine::~ProgressLine() { Clear(); }

void ProgressLine::Update(u128 done, const std::string& label) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(250)) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double d = static_cast<double>(done), t = static_cast<double>(total_);
  const double rate = elapsed > 0 ? d / elapsed : 0;
  const double eta = rate > 0 ? (t - d) / rate : -1;
  std::fprintf(stderr, "\r\033[K%5.1f%%  %.3g of %.3g numbers  %.3g numbers/s  elapsed %s  ETA %s  %s",
               t > 0 ? 100.0 * d / t : 100.0, d, t, rate, FormatDuration(elapsed).c_str(),
               FormatDuration(eta).c_str(), label.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::Clear() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace collatz::cli
