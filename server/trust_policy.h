// The trust policy (collatz-server --double-check, docs/PROTOCOL.md "Trust model"): which
// finished units another, independent worker must search again before their results count.
#pragma once

#include <cstdint>
#include <string>

namespace collatz::server {

enum class DoubleCheck {
  kNone,      // one search counts (a private fleet that accepts the risk); --audit-fraction samples
  kAdaptive,  // a worker is checked at a rate falling with its agreeing checks, never below a floor
  kAll,       // every unit counts only once two independent workers agree
};

// "none", "adaptive", "all".
const char* DoubleCheckName(DoubleCheck p);
// False for anything else.
bool ParseDoubleCheck(const std::string& text, DoubleCheck* out);

// The probability that adaptive checking checks a result of a worker with `checks_agreed`
// agreeing checks since its last disagreement: 1 for a new worker, 1 / (1 + agreed / 2)
// after that (BOINC's adaptive replication in spirit), never below `floor`.
double AdaptiveCheckProbability(uint64_t checks_agreed, double floor);

// After a disagreement involving a worker (adaptive), this many of its most recent results
// that were not checked are checked after all.
inline constexpr int kRecheckAfterDisagreement = 32;

}  // namespace collatz::server
