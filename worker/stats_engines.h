// The engines a worker computes stats units with (issue 6): the CPU (core
// ComputeBatchStats) or a GPU (GpuStats, gpu/gpu_stats.h, in builds with CUDA). A unit is
// computed in batch-aligned chunks so that progress is reported and a cancel (shutdown,
// lost lease) takes effect between chunks.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/batch_stats.h"
#include "core/delay.h"
#include "core/status.h"

namespace collatz::worker {

class StatsEngine {
 public:
  virtual ~StatsEngine() = default;
  // Every batch of [from, to) (batch aligned). `done` counts numbers finished; a set
  // `cancel` stops between chunks with Unavailable.
  virtual Status Compute(u128 from, u128 to, uint32_t batch, std::vector<BatchStats>* out, std::atomic<uint64_t>* done,
                         const std::atomic<bool>* cancel) = 0;
  virtual std::string Describe() const = 0;
};

// ComputeBatchStats on `threads` threads (0: all cores), in chunks of about
// `chunk_numbers` (whole batches).
std::unique_ptr<StatsEngine> MakeCpuStatsEngine(std::shared_ptr<const FastDelay> delay, int threads,
                                                u128 chunk_numbers = u128{1} << 24);

// GpuStats on `device`, created at the first unit and checked then against the CPU on
// [2^40, 2^40 + 2^16); batch sizes the GPU cannot take, and every unit after a failed GPU
// start or check, go to the CPU. FailedPrecondition in a
// build without the GPU stats engine.
Status MakeGpuStatsEngine(int device, std::shared_ptr<const FastDelay> delay, int cpu_threads,
                          std::unique_ptr<StatsEngine>* out);

// Whether this build has the GPU stats engine.
bool BuildHasGpuStats();

}  // namespace collatz::worker
