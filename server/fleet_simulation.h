// coordinator_bench --simulate-gpus: the coordinator's share of a large fleet, measured
// on the real collatz-server binary (a child process on 127.0.0.1) with simulated GPUs
// that do not search. Each simulated GPU completes its unit every --result-interval-s
// seconds (staggered) and leases the next; eight GPUs share one registered worker, as
// one `collatz-worker --gpus all` on an 8-GPU host does. The results are delay-only units
// high above the imported published records (--at 2^66): an empty ladder, which is what
// real workers report there for all but a vanishing few units, with the exact candidate
// count of the unit's sieve (the server checks it); their work hash is not a real one
// (a check of the same unit reports the same). Reported: the server process's CPU seconds per wall
// second (/proc/PID/stat) and per result, the results/s it sustained, its RSS, the
// database bytes per unit and per 10^20 numbers, and the time of one merge of the
// finished units of 10^20 numbers (the server re-merges them while results come in).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/merge.h"
#include "core/u128.h"

namespace collatz::server {

struct FleetOptions {
  std::string server_binary;  // collatz-server
  std::string db;             // prepared: imports and the submission; units start at `begin`
  uint64_t db_bytes_submitted = 0;  // its size then
  std::vector<TrustedImport> imports;  // those in the database (for the merge timing)
  u128 begin = 0, unit_size = 0;
  int units = 0;              // submitted
  int gpus = 10000;
  int gpus_per_worker = 8;
  double result_interval_s = 10;  // per simulated GPU
  double duration_s = 60;         // the measured window (after every GPU leased its first unit)
  int threads = 16;               // client threads driving the simulated GPUs
  int sieve_bits = 16;
  // The server's --double-check: "none" measures the load of one search a unit; "all" and
  // "adaptive" add the checks (a worker's results are checked by workers of other hosts;
  // the simulated results of a unit are equal, so every check agrees).
  std::string double_check = "none";
};

// Runs the simulation and prints the figures; 0 on success.
int RunFleetSimulation(const FleetOptions& options);

}  // namespace collatz::server
