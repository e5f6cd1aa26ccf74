// The level-by-level sieve generator (SPEC section 2, lifting): level k+1 is grouped
// from the lifts of the level-k survivors (all of them, even and odd: an even residue
// can kill an odd one, e.g. 4 kills 5 at k = 3). Each level is partitioned by a hash of
// (p, c) so every partition is grouped in memory; a level whose lifts do not fit in the
// memory budget is kept in STXXL blocks on disk. Output is identical either way.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/status.h"

namespace collatz::sievegen {

struct GeneratorOptions {
  int bits = 0;
  uint64_t memory_bytes = uint64_t{4} << 30;  // budget for the generator's data
  std::string tmpdir = ".";                   // where out-of-core levels live
  int threads = 0;                            // 0: all hardware threads
  bool force_external = false;                // keep every level from 2 on in STXXL (tests)
  bool include_even = false;                  // emit even survivors too (tests, oracle comparison)
  int min_partition_bits = 0;                 // at least 2^this partitions per level (tests)
};

struct GeneratorStats {
  uint64_t survivors = 0;      // all residues (even and odd) surviving at level `bits`
  uint64_t odd_survivors = 0;  // what a sieve file holds
  uint64_t largest_level_records = 0;
  int external_levels = 0;     // levels held out of core
  int max_partitions = 1;
  int threads = 0;
  uint64_t peak_external_bytes = 0;  // largest STXXL allocation (scratch disk) at once
  uint64_t external_read_bytes = 0;
  uint64_t external_written_bytes = 0;
};

struct Progress {
  int level = 0;
  int bits = 0;
  uint64_t records_done = 0;      // lifts grouped so far, all levels
  uint64_t records_expected = 0;  // estimate for the whole run
  double elapsed_s = 0;
};
using ProgressFn = std::function<void(const Progress&)>;

// Receives the surviving residues in ascending order, in batches.
using ResidueSink = std::function<Status(const uint64_t* residues, size_t n)>;

Status GenerateSieve(const GeneratorOptions& options, const ResidueSink& sink, GeneratorStats* stats,
                     const ProgressFn& progress = nullptr);

// Estimated survivors (even and odd) at level k, an upper-side fit to SPEC section 2's counts.
double EstimatedSurvivors(int k);

// Resource estimates for a run with these options, checked before any work is done.
struct ResourceEstimate {
  bool external = false;          // some level will not fit in memory_bytes
  uint64_t peak_disk_bytes = 0;   // in tmpdir
  uint64_t output_bytes = 0;      // the sieve file
  uint64_t peak_memory_bytes = 0;
};
ResourceEstimate EstimateResources(const GeneratorOptions& options);

}  // namespace collatz::sievegen
