// Batch statistics on the GPU (issue 6): the same results as collatz::ComputeBatchStats,
// bit for bit, for every batch-aligned range below 2^128. Tables are built once per object
// (the tail of exact delays on the device, the k-bit join groups on the host).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/batch_stats.h"
#include "core/status.h"
#include "core/u128.h"

namespace collatz {

struct GpuStatsOptions {
  int device = 0;
  // Defaults: the fastest of the sweeps on the H100 (docs/PERFORMANCE.md, batch statistics).
  int sieve_bits = 17;  // k of the join groups (<= 20); the batch must divide 2^k
  int step_bits = 13;   // S of the step table: <= 13 in shared memory, 14..20 in global memory (L2)
  // T of the device tail table (2^T delays of 2 bytes: 8 GiB at 32): max(16, k, S) <= T <= 34,
  // or 0: the largest T up to 34 whose table takes at most half the free device memory (33
  // and 34 are 3% and 6% faster than 32 on the H100, for 16 and 32 GiB).
  int tail_bits = 32;
  int block_threads = 1024;  // 256, 512 or 1024
  bool refill = false;  // lanes take the next survivor as soon as theirs is done (slower)
  bool pairs = false;   // two walks per thread (ignored with refill; slower)
  // Refinements of the fixed-stride walk; prefetch_tail and fast_steps need fast_reduce. They
  // change the speed, never the results.
  bool prefetch_tail = false;  // a walk's tail read completes while the thread walks its next survivor
  bool fast_steps = true;      // a 64-bit step loop while the value is below 2^64
  bool fast_reduce = true;     // 16-byte group-index loads, no pending test in blocks without one
  uint64_t launch_numbers = uint64_t{1} << 32;  // numbers per kernel launch (at most 2^22 batches)
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

  // The same batches handed over in order, one piece per kernel launch (at most 2^22 batches),
  // while the next launches run: `first` is the start of the piece's first batch, and the
  // pointer is valid during the call only. A sink's error stops the computation and is returned.
  using Sink = std::function<Status(u128 first, const BatchStats* batches, size_t count)>;
  Status ComputeStream(u128 from, u128 to, uint32_t batch, const Sink& sink, GpuStatsTimings* timings = nullptr);

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
