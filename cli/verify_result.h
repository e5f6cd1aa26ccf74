// Re-verification before storing (SPEC section 5): every N a unit reports (its ladder
// and its class minima) is recomputed with the plain GMP definition of delay, and the
// result's internal order is checked. An engine bug is caught here, not in the database.
#pragma once

#include "core/status.h"
#include "core/unit.h"

namespace collatz::cli {

Status VerifyUnitResult(const UnitSpec& spec, const UnitResult& result);

}  // namespace collatz::cli
