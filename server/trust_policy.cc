#include "server/trust_policy.h"

#include <algorithm>

namespace collatz::server {

const char* DoubleCheckName(DoubleCheck p) {
  switch (p) {
    case DoubleCheck::kNone: return "none";
    case DoubleCheck::kAdaptive: return "adaptive";
    case DoubleCheck::kAll: return "all";
  }
  return "?";
}

bool ParseDoubleCheck(const std::string& text, DoubleCheck* out) {
  for (DoubleCheck p : {DoubleCheck::kNone, DoubleCheck::kAdaptive, DoubleCheck::kAll}) {
    if (text == DoubleCheckName(p)) {
      *out = p;
      return true;
    }
  }
  return false;
}

double AdaptiveCheckProbability(uint64_t checks_agreed, double floor) {
  const double p = 1.0 / (1.0 + static_cast<double>(checks_agreed) / 2.0);
  return std::clamp(std::max(p, floor), 0.0, 1.0);
}

}  // namespace collatz::server
