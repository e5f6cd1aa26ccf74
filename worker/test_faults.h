// Faults for tests, injected through the lease loop's seams (never built into the
// production worker): a spool that kills the process right after a result is written, and
// a stats engine that lies about its last batch.
#pragma once

#include <memory>
#include <string>

#include "worker/spool.h"
#include "worker/stats_engines.h"

namespace collatz::worker {

// Writes through `spool`, then SIGKILLs the process with the result spooled and not sent.
std::unique_ptr<SpoolWriter> MakeCrashAfterSpool(SpoolWriter* spool);

// Computes with `engine`, then reports a sum one too large for the last batch.
std::unique_ptr<StatsEngine> MakeLyingStatsEngine(std::unique_ptr<StatsEngine> engine);

// How a lying worker changes each search result it hands in (collatz-worker-test
// --test-lie KIND), from its `after`-th result on (0: every one; earlier ones honest, so
// that it earns trust first):
//   omit-record         the last entry of the ladder left out (verification cannot see it),
//                       or of the class minima in a unit without ladder entries
//   drop-class-minimum  the last class minimum left out
//   wrong-count         one candidate more (verification refuses it)
//   self-check          as omit-record; the process also registers as another host and GPU,
//                       to answer the checks of its own token's results (the test starts it
//                       beside an omit-record worker with the same token)
enum class LieKind { kNone, kOmitRecord, kDropClassMinimum, kWrongCount, kSelfCheck };
bool ParseLieKind(const std::string& text, LieKind* out);
std::unique_ptr<SpoolWriter> MakeLyingSpool(SpoolWriter* spool, LieKind kind, int after);

}  // namespace collatz::worker
