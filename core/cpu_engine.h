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
  // Delay-only units with early termination: chunks grow up to this many numbers while each
  // thread still gets kChunksPerThread of them, because the entry stop (core/unit_search.h)
  // checks each sieve entry once per chunk and mod-9 variant, and pays more the more blocks
  // of one variant a chunk holds.
  uint64_t entry_stop_chunk_numbers = uint64_t{1} << 28;
  static constexpr int kChunksPerThread = 4;
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
