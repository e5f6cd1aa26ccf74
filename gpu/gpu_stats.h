// Batch statistics on the GPU (issue 6): the same results as collatz::ComputeBatchStats,
// bit for bit, for every batch-aligned range below 2^128. Tables are built once per object
// (the tail of exact delays on the device, the k-bit join groups on the host).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/batch_stats.h"
#include "core/status.h"
#include "core/u128.h"

namespace collatz {

struct GpuStatsOptions {
  int device = 0;
  int sieve_bits = 16;  // k of the join groups (<= 20); the batch must divide 2^k
  // Defaults: the fastest of the sweep on the H200 (docs/PERFORMANCE.md, batch statistics).
  int step_bits = 19;   // S of the step table: <= 13 in shared memory, 14..20 in global memory (L2)
  int tail_bits = 32;   // T of the device tail table (k, S <= T <= 32; 2^T * 2 bytes: 8 GiB at 32)
  int block_threads = 512;
  bool refill = false;  // lanes take the next survivor as soon as theirs is done
  bool pairs = false;   // two walks per thread (ignored with refill)
  uint64_t launch_numbers = uint64_t{1} << 32;  // numbers per kernel launch
};

struct GpuStatsTimings {
  double kernel_seconds = 0;  // CUDA events around the kernels
  double total_seconds = 0;   // wall time of Compute, copies and host work included
  uint64_t host_finished = 0;  // survivors finished on the host (128-bit overflow)
  uint64_t launches_redone = 0;  // launches redone on the CPU (host-finish list overflowed)
};

class GpuStats {
 public:
  ~GpuStats();
  GpuStats(const GpuStats&) = delete;
  GpuStats& operator=(const GpuStats&) = delete;

  // Whether a CUDA device can be used (false without a driver or device; never fails).
  static bool DeviceAvailable();

  static Status Create(const GpuStatsOptions& options, std::unique_ptr<GpuStats>* out);

  // Every batch of [from, to); the batch must be a power of two in [32, 2^sieve_bits].
  Status Compute(u128 from, u128 to, uint32_t batch, std::vector<BatchStats>* out,
                 GpuStatsTimings* timings = nullptr);

  // Why a batch size cannot be used on this engine, or Ok.
  Status CheckBatch(uint32_t batch) const;

  // "gpu 0 (NVIDIA H100 80GB HBM3), k=16, S=13, T=28".
  std::string Describe() const;
  uint32_t survivor_count() const;

 private:
  struct Impl;
  explicit GpuStats(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace collatz
