// collatz-worker as a function: leases units from a collatz-server and searches them on
// every selected GPU (or the CPU). Wiring only: flags, logging, signals, engines and their
// self-test, spool, sender and one lease loop per device (docs/WORKER.md). The production
// binary (worker_main.cc) runs it as it is; the test-only collatz-worker-test binary
// (test_worker_main.cc) adds its fault flags through the seams.
#pragma once

#include <functional>
#include <memory>

#include "client/worker_client.h"
#include "worker/spool.h"
#include "worker/stats_engines.h"

namespace CLI {
class App;
}  // namespace CLI

namespace collatz::worker {

struct WorkerSeams {
  // collatz-worker-test: a test build (worker/build_flavour.h), said in --version and at
  // registration, which a coordinator refuses unless started with --allow-test-builds.
  bool test_binary = false;
  // Adds flags to the command line before it is parsed.
  std::function<void(CLI::App*)> add_flags;
  // After parsing: may wrap each lane's stats engine, and the spool the lanes write to.
  std::function<std::unique_ptr<StatsEngine>(std::unique_ptr<StatsEngine>)> wrap_stats;
  std::function<std::unique_ptr<SpoolWriter>(SpoolWriter*)> wrap_spool;
  // Before registering: may change what the worker says it is (host, GPUs).
  std::function<void(client::WorkerIdentity*)> adjust_identity;
};

// The process's exit status: 0, 1 (fatal) or 2 (usage).
int WorkerMain(int argc, char** argv, const WorkerSeams& seams = {});

}  // namespace collatz::worker
