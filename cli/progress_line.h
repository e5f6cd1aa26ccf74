// The live progress line of long commands: percentage, rate and ETA, redrawn in place on
// stderr at most a few times a second, and only when stderr is a terminal (logs and
// pipes stay clean).
#pragma once

#include <chrono>
#include <string>

#include "core/u128.h"

namespace collatz::cli {

class ProgressLine {
 public:
  // enabled: normally isatty(STDERR_FILENO).
  ProgressLine(u128 total, bool enabled);
  ~ProgressLine();

  bool enabled() const { return enabled_; }
  // `done` numbers of `total` are finished; `label` is shown too ("unit 3/16").
  void Update(u128 done, const std::string& label);
  // Erases the line (before other output, and at the end).
  void Clear();

 private:
  u128 total_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

std::string FormatDuration(double seconds);

}  // namespace collatz::cli
