#include "cli/cli_util.h"

#include <cstdio>

#include "cli/exit_codes.h"

namespace collatz::cli {

int UsageError(const std::string& command, const std::string& message) {
  std::fprintf(stderr, "collatzctl %s: error: %s\nRun 'collatzctl %s --help' for usage.\n", command.c_str(),
               message.c_str(), command.c_str());
  return kExitUsage;
}

int Failure(const std::string& command, const Status& status) {
  std::fprintf(stderr, "collatzctl %s: %s\n", command.c_str(), status.ToString().c_str());
  return kExitFailure;
}

Status ParseNumberFlag(const std::string& flag, const std::string& text, u128* out) {
  Status st = ParseU128(text, out);
  if (!st.ok()) return Status::InvalidArgument(flag + ": " + st.message());
  return Status::Ok();
}

Status ParseKindsFlag(const std::string& text, Kinds* out) {
  if (text == "delay") {
    *out = Kinds::kDelay;
  } else if (text == "delay,class" || text == "class,delay") {
    *out = Kinds::kDelayAndClass;
  } else {
    return Status::InvalidArgument("--kinds: \"" + text + "\" is not one of: delay, delay,class");
  }
  return Status::Ok();
}

const char* KindsName(Kinds kinds) { return kinds == Kinds::kDelay ? "delay" : "delay,class"; }

std::string FormatNumberShort(u128 x) {
  if (x >= Pow2(20)) {
    const int b = BitLength(x) - 1;
    const u128 rest = x - Pow2(b);
    if (rest == 0) return "2^" + std::to_string(b);
    if (b >= 20 && rest < Pow2(16)) return "2^" + std::to_string(b) + "+" + ToDecimal(rest);
  }
  return ToDecimal(x);
}

std::string FormatRate(double per_second) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", per_second);
  return buf;
}

}  // namespace collatz::cli
