// A minimal but real worker for tests: leases over gRPC, searches with collatz::CpuEngine
// (one per sieve width its leases name, the first from the tables it is given, others
// generated sharing their step and tail tables), completes. Test code only; the product
// worker is issue 4's collatz-worker.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "core/cpu_engine.h"
#include "client/worker_client.h"

namespace collatz::server {

struct TestWorkerOptions {
  std::string address;
  std::string token;
  // Registered as; an empty instance id gets a random one (each call is an installation of
  // its own, so a flag of one test worker does not reach the others).
  std::string host = "test-worker";
  std::string instance_id;
  int threads = 1;
  // Applied to every result before it is sent (to simulate a lying worker).
  std::function<void(UnitResult*)> tamper;
  // Searches each unit with the tables of the registration width whatever its lease names
  // (a misconfigured or older worker); such a worker does not declare unit_sieve_bits.
  bool one_width = false;
  // Stop after this many completions (0: until `stop` or no work).
  int max_units = 0;
  // Return when the server has no work for this long.
  int idle_exit_ms = 3000;
};

struct TestWorkerStats {
  int accepted = 0, duplicates = 0, audits = 0, errors = 0, reconnects = 0;
  int revoked = 0;  // completions refused because the server revoked the lease (e.g. an audit of a liar's result)
  std::string last_error;  // what the last counted error said, for test messages
};

// Runs until there is no more work (idle_exit_ms), max_units, or *stop. Survives server
// restarts: UNAVAILABLE is retried, and a NOT_FOUND worker id re-registers.
TestWorkerStats RunTestWorker(const TestWorkerOptions& options, std::shared_ptr<const SearchTables> tables,
                              const std::atomic<bool>* stop);

}  // namespace collatz::server
