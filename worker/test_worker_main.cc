// collatz-worker-test: the production worker (WorkerMain) plus fault flags for the
// end-to-end tests, injected through its seams. Built with the tests only, never installed.
#include <CLI/CLI.hpp>

#include "worker/test_faults.h"
#include "worker/worker_app.h"

int main(int argc, char** argv) {
  using namespace collatz::worker;
  bool crash_after_spool = false, lie_in_stats = false;
  std::string lie_text;
  int lie_after = 0;
  LieKind lie = LieKind::kNone;
  WorkerSeams seams;
  seams.test_binary = true;  // its flavour is "test": a coordinator needs --allow-test-builds
  seams.add_flags = [&](CLI::App* app) {
    app->add_flag("--test-crash-after-spool", crash_after_spool, "SIGKILL itself right after spooling a result");
    app->add_flag("--test-lie-stats", lie_in_stats, "Report a wrong sum in the last batch of every stats result");
    app->add_option("--test-lie", lie_text, "Lie in search results: omit-record, drop-class-minimum, wrong-count, self-check")
        ->check(CLI::IsMember({"omit-record", "drop-class-minimum", "wrong-count", "self-check"}));
    app->add_option("--test-lie-after", lie_after, "Hand in this many honest results that could carry the lie first (to earn trust)");
  };
  seams.wrap_stats = [&](std::unique_ptr<StatsEngine> engine) {
    return lie_in_stats ? MakeLyingStatsEngine(std::move(engine)) : std::move(engine);
  };
  seams.wrap_spool = [&](SpoolWriter* spool) -> std::unique_ptr<SpoolWriter> {
    if (!lie_text.empty() && ParseLieKind(lie_text, &lie)) return MakeLyingSpool(spool, lie, lie_after);
    return crash_after_spool ? MakeCrashAfterSpool(spool) : nullptr;
  };
  seams.adjust_identity = [&](collatz::client::WorkerIdentity* identity) {
    if (lie_text != "self-check") return;
    // A second registration of the liar's token that claims another machine and GPU.
    identity->host = "self-check-" + identity->host;
    identity->gpus = {{"Fake GPU", "GPU-00000000-5e1f-c4ec-0000-000000000000"}};
  };
  return WorkerMain(argc, argv, seams);
}
