// Forwarding header: the result verifier lives in core/result_verifier.h. Kept so that
// run_command.cc and bench_command.cc build unchanged.
#pragma once

#include "core/result_verifier.h"

namespace collatz::cli {

// Core's verifier without the sieve (every check but the examined-number rule). Callers
// that hold their SearchTables should call collatz::VerifyUnitResult(tables, ...) instead.
inline Status VerifyUnitResult(const UnitSpec& spec, const UnitResult& result) {
  return collatz::VerifyUnitResult(static_cast<const Sieve*>(nullptr), spec, result);
}

}  // namespace collatz::cli
