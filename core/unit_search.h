// Searching one unit on the CPU: the reference engine (single thread, one chunk at a
// time) that the multithreaded engine and the GPU engine must agree with bit for bit.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "core/delay.h"
#include "core/early_termination.h"
#include "core/sieve.h"
#include "core/unit.h"

namespace collatz {

// Defaults: the classic 19-bit sieve; a 16-bit step table (512 KiB, stays in a CPU's L2);
// exact delays of every n < 2^20 as the tail.
constexpr int kDefaultSieveBits = 19;
constexpr int kDefaultStepBits = 16;
constexpr int kDefaultTailBits = 20;

// Everything a search needs that does not change between units: the sieve and its
// offset tables, the step and tail tables.
struct SearchTables {
  std::shared_ptr<const Sieve> sieve;
  std::shared_ptr<const OffsetTable> delay_offsets;  // modulus 9 variants (delay-only)
  std::shared_ptr<const FastDelay> delay;
  // The sieve's copy in an accelerator's memory when it was built there (gpu/device_sieve.h:
  // core stays free of CUDA types), so that the engine does not upload it again; else null.
  std::shared_ptr<const void> device_sieve;

  static Status Build(int sieve_bits, int step_bits, int tail_bits, std::shared_ptr<const SearchTables>* out);
  static Status FromSieve(std::shared_ptr<const Sieve> sieve, int step_bits, int tail_bits,
                          std::shared_ptr<const SearchTables>* out);
  // With the step and tail tables of other tables (`delay`): tables of several sieve widths
  // share them (a coordinator's or a worker's unit widths). Without `cpu_offsets` they lack
  // the mod-9 offset table, as GPU-built tables do (a coordinator's wide widths: 1.7 GB of the
  // 30-bit tables, read only by a CPU engine, which WithCpuOffsets gives them).
  static Status FromSieve(std::shared_ptr<const Sieve> sieve, std::shared_ptr<const FastDelay> delay,
                          std::shared_ptr<const SearchTables>* out, bool cpu_offsets = true);
  // `tables` as the CPU engine needs them: a copy with the mod-9 offset table added when they
  // lack it (tables built for the GPU), else the same tables.
  static std::shared_ptr<const SearchTables> WithCpuOffsets(std::shared_ptr<const SearchTables> tables);
};

// What SearchRange skipped (for tests and profiles).
struct SearchRangeStats {
  // Numbers whose whole sieve entry stopped within its first k T-steps (never jumped or walked).
  uint64_t entry_stopped = 0;
};

// Searches [from, to) (a sub-range of the unit [spec.begin, spec.end)) and returns the
// partial result; partial results of consecutive sub-ranges combine with
// UnitResultCombiner. `progress`, if not null, is increased by the numbers of the
// range as they are done. In delay-only units with early termination, the sieve entries
// whose largest number in the range's whole blocks (per mod-9 class of the block) can stop
// within its first k T-steps are counted without being walked (the entry stop), which pays
// the more such blocks the range holds; `stats`, if not null, is increased by their count.
// Ranges with fewer than `entry_stop_min_blocks` whole blocks walk every entry instead (the
// entry's test takes its first k T-steps one by one, the walk jumps them in one product, so
// the test pays only where it serves several blocks of a variant). Same result either way.
UnitResult SearchRange(const SearchTables& tables, const UnitSpec& spec, const EarlyTermination& et,
                       u128 from, u128 to, std::atomic<uint64_t>* progress = nullptr,
                       const std::atomic<bool>* cancel = nullptr, SearchRangeStats* stats = nullptr,
                       uint64_t entry_stop_min_blocks = 0);

// The plain version for tests: every odd N of the range that the sieve keeps is computed
// with SlowDelay or FastDelay, no early termination.
UnitResult SearchRangeSimple(const SearchTables& tables, const UnitSpec& spec, u128 from, u128 to);

}  // namespace collatz
