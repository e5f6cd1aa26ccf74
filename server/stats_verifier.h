// Verification of a worker's result of a stats unit before it is stored: the stats file
// decodes (magic, version, XXH64 checksums, sizes), covers exactly the unit's range in
// the job's batch size, every batch has min <= average <= max with the count its range
// gives, and the chosen batches, recomputed exactly on the server's CPU (FastDelay for
// every N), are equal bit for bit.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/delay.h"
#include "core/stats_file.h"
#include "core/status.h"

namespace collatz::server {

// The batches (indices into the unit) that an audit recomputes: the first, the last, and
// up to count - 2 more drawn at random, without repeats, ascending.
std::vector<uint64_t> ChooseAuditBatches(uint64_t batches, int count, std::mt19937_64* rng);

// Ok (and *decoded), or InvalidArgument naming what is wrong.
Status VerifyStatsResult(const FastDelay& delay, u128 begin, u128 end, uint32_t batch, const std::string& stats_file,
                         const std::vector<uint64_t>& audit_batches, StatsFile* decoded);

// One batch, computed directly: delay(N) for every N of [start, start + batch), N = 0 skipped.
BatchStats RecomputeBatch(const FastDelay& delay, u128 start, uint32_t batch);

}  // namespace collatz::server
