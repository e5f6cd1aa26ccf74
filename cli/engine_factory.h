// Forwarding header: the engine factory lives in engines/engine_factory.h. Kept so that
// run_command.cc and bench_command.cc build unchanged; include engines/ directly in new code.
#pragma once

#include "engines/engine_factory.h"

namespace collatz::cli {

using engines::Backend;
using engines::BuildHasCuda;
using engines::BuildSearchTables;
using engines::DefaultSieveBits;
using engines::MakeEngine;
using engines::ParseBackendFlag;
using engines::ResolveBackend;

}  // namespace collatz::cli
