// collatz-worker-test: the production worker (WorkerMain) plus fault flags for the
// end-to-end tests, injected through its seams. Built with the tests only, never installed.
#include <CLI/CLI.hpp>

#include "worker/test_faults.h"
#include "worker/worker_app.h"

int main(int argc, char** argv) {
  using namespace collatz::worker;
  bool crash_after_spool = false, lie_in_stats = false;
  WorkerSeams seams;
  seams.test_binary = true;  // its flavour is "test": a coordinator needs --allow-test-builds
  seams.add_flags = [&](CLI::App* app) {
    app->add_flag("--test-crash-after-spool", crash_after_spool, "SIGKILL itself right after spooling a result");
    app->add_flag("--test-lie-stats", lie_in_stats, "Report a wrong sum in the last batch of every stats result");
  };
  seams.wrap_stats = [&](std::unique_ptr<StatsEngine> engine) {
    return lie_in_stats ? MakeLyingStatsEngine(std::move(engine)) : std::move(engine);
  };
  seams.wrap_spool = [&](SpoolWriter* spool) -> std::unique_ptr<SpoolWriter> {
    return crash_after_spool ? MakeCrashAfterSpool(spool) : nullptr;
  };
  return WorkerMain(argc, argv, seams);
}
