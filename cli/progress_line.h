// Progress of long commands, readable by a person and by a log: with a terminal, one line
// (percentage, rate, ETA) redrawn in place on stderr at most a few times a second; without
// one, a log line (done/total, numbers/s and ETA since the first report, the current unit) at
// the first report and
// then every `log_interval`, so that a log shows the run is alive (engines report about
// five times a second, core/search_engine.h).
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "core/u128.h"

namespace collatz::cli {

struct ProgressOptions {
  using Clock = std::chrono::steady_clock;
  bool terminal = false;  // normally isatty(STDERR_FILENO)
  std::chrono::milliseconds log_interval{20000};
  std::function<Clock::time_point()> now;         // tests inject a clock; default: Clock::now
  std::function<void(const std::string&)> log;   // default: spdlog::info
};

class ProgressLine {
 public:
  ProgressLine(u128 total, ProgressOptions options);
  ~ProgressLine();

  bool terminal() const { return options_.terminal; }
  // `done` numbers of `total` are finished; `label` is shown too ("unit 3/16 [2^60, 2^60+2^38)").
  void Update(u128 done, const std::string& label);
  // Erases the terminal line (before other output, and at the end).
  void Clear();

 private:
  std::string Describe(u128 done, const std::string& label, ProgressOptions::Clock::time_point now) const;

  u128 total_;
  ProgressOptions options_;
  bool drawn_ = false;   // a terminal line is on screen
  bool logged_ = false;  // a log line was written
  ProgressOptions::Clock::time_point start_;
  ProgressOptions::Clock::time_point last_;  // the last draw or log line
  bool reported_ = false;                     // Update was called: the rate counts from
  u128 first_done_ = 0;                       // its first report
  ProgressOptions::Clock::time_point first_time_;
};

std::string FormatDuration(double seconds);

}  // namespace collatz::cli
