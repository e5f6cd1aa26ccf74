// Kernels of the GPU batch-statistics engine (issue 6) and their thin launch wrappers
// (stats_kernel.cu). Plain structs only: this header is shared by nvcc and the host compiler.
//
// The job counts every N, so there is no sieve to skip numbers with; but the k-bit join
// (SPEC 2, rule 3) still pays: for N = 2^k h + i with h >= 1, residues i with equal (p, c)
// after k T-steps have EQUAL delays. A block of 2^k numbers computes only the smallest
// residue of each (p, c) group (k = 16: 19275 of 65536, evens included) into shared memory,
// then every batch of the block is reduced from those delays through rep[i], the group of i.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace collatz::gpu {

// What the kernel writes for one batch; numbers whose survivor went to the host are not
// counted yet (the host adds them), so count may be below the batch size.
struct StatsBatchOut {
  uint16_t min;  // 0xFFFF if count == 0
  uint16_t max;
  uint32_t count;
  unsigned long long sum;
};

// A survivor whose walk would leave 128 bits: N = 2^k h + residue of survivor `survivor`.
struct StatsFinishEntry {
  uint64_t h_lo, h_hi;
  uint32_t survivor;
  uint32_t unused;
};

// Delay entries of the shared table that the host still has to fill.
constexpr uint16_t kStatsPending = 0xFFFF;
// Widest step table kept in shared memory (4-byte entries c | p << 26, 32 KiB); wider ones
// (up to 20 bits) are read from global memory (L2), 16-byte entries {c, 3^p, 4 (S + p), 0}.
constexpr int kStatsMaxSharedStepBits = 13;
constexpr int kStatsMaxStepBits = 20;
constexpr int kStatsMaxSieveBits = 20;  // c < 3^k and 3^p fit 32 bits

struct StatsParams {
  const uint16_t* tail = nullptr;  // exact delays of n < 2^tail_bits
  int tail_bits = 0;
  const uint32_t* steps = nullptr;      // step_bits <= 13: 2^step_bits entries c | p << 26 (copied to shared)
  const uint4* global_steps = nullptr;  // step_bits > 13: 2^step_bits entries {c, 3^p, 4 (step_bits + p), 0}
  int step_bits = 0;
  const uint4* survivors = nullptr;  // {c, 3^p, k + p, 0} of each group's smallest residue
  const uint32_t* rep = nullptr;     // 2^sieve_bits entries: survivor index of residue i
  const uint16_t* rep16 = nullptr;   // the same in 16 bits when there are at most 65535 survivors (half the reads)
  uint32_t survivor_count = 0;
  int sieve_bits = 0;
  // Blocks h = first_h + j for j < blocks; launch position x = N - (2^k first_h + begin_offset).
  uint64_t first_h_lo = 0, first_h_hi = 0;
  uint64_t blocks = 0;
  uint64_t begin_offset = 0;  // multiple of the batch, < 2^k
  uint64_t numbers = 0;       // multiple of the batch
  int batch_bits = 0;         // batch = 2^batch_bits, 5 <= batch_bits <= sieve_bits
  StatsBatchOut* out = nullptr;  // numbers >> batch_bits entries
  unsigned long long* counted = nullptr;  // += the numbers counted by the kernel (the host checks the total)
  StatsFinishEntry* finish = nullptr;
  unsigned int* finish_count = nullptr;  // may exceed the capacity: then the host redoes the launch
  uint32_t finish_capacity = 0;
  uint32_t safe_hi = 0;   // 64-bit steps: no step from v < 2^32 safe_hi passes 2^64 (StatsSafeHigh)
};

// The largest 2^(B-32) with 3^S (2^(B-S) + 1) <= 2^64: a step of the S-bit table from any
// v < 2^B stays below 2^64.
uint32_t StatsSafeHigh(int step_bits);

// Dynamic shared memory the stats kernel needs for these tables (the step table only when
// step_bits <= kStatsMaxSharedStepBits).
size_t StatsSharedBytes(int step_bits, uint32_t survivor_count);

// How a CTA's threads share the walks of a block: a fixed stride, lane refill (lanes of a
// warp take the next survivor as soon as theirs is done), or two walks per thread.
constexpr int kStatsModeStride = 0;
constexpr int kStatsModeRefill = 1;
constexpr int kStatsModePairs = 2;

// Refinements of the fixed-stride mode (bits of `variant`; the other modes always use
// kStatsFastReduce). Every combination gives the same results; they differ in speed.
constexpr int kStatsPrefetchTail = 1;  // a walk's tail read completes while the thread walks its next survivor
constexpr int kStatsFast64 = 2;        // a 64-bit step loop while the value is below 2^64
constexpr int kStatsFastReduce = 4;    // 16-byte group-index loads; no pending test in blocks without one
constexpr int kStatsVariantAll = 7;
// The variants of the fixed-stride mode that are compiled: 0, 4, 5, 6, 7.
bool StatsVariantAvailable(int mode, int variant);

// Launches the stats kernel (block_threads: 256, 512 or 1024) on a persistent grid.
cudaError_t LaunchStats(const StatsParams& p, int block_threads, int mode, int variant, int grid_blocks,
                        cudaStream_t stream);

// Resident blocks per SM of the stats kernel of that configuration (also raises the
// kernel's dynamic shared memory limit to what it needs).
cudaError_t StatsBlocksPerSm(int block_threads, int mode, int variant, int step_bits, uint32_t survivor_count,
                             int* blocks);

}  // namespace collatz::gpu
