// The multithreaded CPU engine: splits a unit into chunks, searches them on all cores
// with the offset table and the step/tail tables, and combines the chunk results in order.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "core/search_engine.h"
#include "core/unit.h"
#include "core/unit_search.h"

namespace collatz {

struct CpuEngineOptions {
  int threads = 0;  // 0: all cores
  // Numbers per chunk handed to one thread (rounded to the sieve block where possible).
  uint64_t chunk_numbers = uint64_t{1} << 24;
  // Delay-only units with early termination: chunks grow up to this many sieve blocks (2^k
  // numbers each) while each thread still gets kChunksPerThread of them, because the entry
  // stop (core/unit_search.h) checks each sieve entry once per chunk and mod-9 variant, and
  // pays more the more blocks of one variant a chunk holds: 2^28 numbers with the 19-bit
  // sieve, 2^37 with the 28-bit one (whose chunks of 2^28 held one block: 2.7-3.5x slower).
  uint64_t entry_stop_chunk_blocks = 512;
  // Chunks with fewer whole blocks walk every entry (SearchRange's entry_stop_min_blocks):
  // 8 blocks a variant, about where the entry stop starts to pay at 2^66 (2 threads, 19-bit
  // sieve: chunks of 36 / 72 / 144 blocks 0.84 / 0.96 / 1.28x the walk; 28-bit chunks of 32
  // blocks 0.75x at 2^66, 0.93x at 2^60; docs/PERFORMANCE.md, session 28).
  uint64_t entry_stop_min_blocks = 72;
  static constexpr int kChunksPerThread = 4;
  // The entry-stop chunk in numbers for a sieve of `sieve_bits`.
  uint64_t EntryStopChunkNumbers(int sieve_bits) const { return entry_stop_chunk_blocks << sieve_bits; }
};

class CpuEngine : public SearchEngine {
 public:
  CpuEngine(std::shared_ptr<const SearchTables> tables, CpuEngineOptions options);

  // Searches the whole unit. Returns Unavailable if cancelled.
  Status Search(const UnitSpec& spec, UnitResult* result, const ProgressFn& progress = nullptr,
                const std::atomic<bool>* cancel = nullptr) override;
  std::string Describe() const override;

  int threads() const { return threads_; }
  const SearchTables& tables() const { return *tables_; }

 private:
  std::shared_ptr<const SearchTables> tables_;
  CpuEngineOptions options_;
  int threads_;
};

}  // namespace collatz
