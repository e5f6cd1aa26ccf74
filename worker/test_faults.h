// Faults for tests, injected through the lease loop's seams (never built into the
// production worker): a spool that kills the process right after a result is written, and
// a stats engine that lies about its last batch.
#pragma once

#include <memory>

#include "worker/spool.h"
#include "worker/stats_engines.h"

namespace collatz::worker {

// Writes through `spool`, then SIGKILLs the process with the result spooled and not sent.
std::unique_ptr<SpoolWriter> MakeCrashAfterSpool(SpoolWriter* spool);

// Computes with `engine`, then reports a sum one too large for the last batch.
std::unique_ptr<StatsEngine> MakeLyingStatsEngine(std::unique_ptr<StatsEngine> engine);

}  // namespace collatz::worker
