// The interface every unit-search engine (CPU, GPU) implements. For the same spec and the
// same sieve, every engine returns an identical UnitResult.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "core/status.h"
#include "core/unit.h"

namespace collatz {

// Reports numbers of the unit done so far and the unit's size; called from the thread
// that called Search.
using ProgressFn = std::function<void(uint64_t done, uint64_t total)>;

class SearchEngine {
 public:
  virtual ~SearchEngine() = default;
  // Searches the whole unit [spec.begin, spec.end). Returns Unavailable if cancelled.
  virtual Status Search(const UnitSpec& spec, UnitResult* result, const ProgressFn& progress = nullptr,
                        const std::atomic<bool>* cancel = nullptr) = 0;
  // Builds ahead what a search of `spec` would build on first use (the GPU engine: its own
  // record table and the join map), so that a benchmark's timed search does not pay it.
  virtual Status Prepare(const UnitSpec&) { return Status::Ok(); }
  // "cpu (2 threads)", "gpu 0 (NVIDIA H100 80GB HBM3)".
  virtual std::string Describe() const = 0;
  // How the last Search went, for debug logs ("" when the engine has nothing to say):
  // the GPU engine's path (early termination or full-delay walk), launches and set-up time.
  virtual std::string LastSearchNote() const { return ""; }
  // How the engine's own set-up went (the GPU engine: seconds of each phase), for debug logs.
  virtual std::string SetupNote() const { return ""; }
};

}  // namespace collatz
