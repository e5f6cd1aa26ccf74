// The one engine factory: the search tables (from a sieve file or a generated sieve of a
// given width) and the search engine for --backend cpu|gpu|auto, for collatzctl, the
// worker and the coordinator. The GPU engine exists only in builds with CUDA
// (gpu/gpu_engine.h); auto uses it when a device is present and falls back to the CPU.
#pragma once

#include <future>
#include <memory>
#include <string>

#include "core/search_engine.h"
#include "core/status.h"
#include "core/u128.h"
#include "core/unit_search.h"
#include "engines/sieve_width.h"

namespace collatz::engines {

enum class Backend { kCpu, kGpu, kAuto };

Status ParseBackendFlag(const std::string& text, Backend* out);

// Whether this binary was built with the CUDA engine.
bool BuildHasCuda();

// Resolves kAuto to kCpu or kGpu; FailedPrecondition when kGpu cannot be had (no CUDA
// in this build, or no device). `note` explains an automatic choice, for the log.
Status ResolveBackend(Backend requested, Backend* resolved, std::string* note);

// Starts creating a GPU device's CUDA context on a thread (a no-op future without CUDA), so
// that it overlaps what the caller does before building the engine; the engine's Init
// then waits for it at most. The future's destructor waits for the thread.
std::future<void> StartGpuContext(int device);

// What the GPU engine wants of the process's environment before any thread starts (a no-op
// without CUDA): first thing in main.
void PrepareProcessForGpu();

// The sieve width used when --sieve-bits is not given (core's kDefaultSieveBits for
// every backend).
int DefaultSieveBits(Backend resolved);

// Units whose record table ends 16 bits or more below them (an empty database: a provable
// floor and the GPU engine's own table) walk every number the sieve keeps to its end, so a
// wider sieve pays there: 2^66, 2^44 delay-only numbers on an H200, 1.211e12 numbers/s with
// 19 bits, 1.341e12 with 28 (docs/PERFORMANCE.md, lever 90). Built on the device.
constexpr int kFloorContextSieveBits = 28;
// The sieve width of a run when --sieve-bits is not given, for work of `numbers` numbers in
// units of `unit_size` from `first_begin`, whose records are complete below `complete_below`:
// on the GPU, kFloorContextSieveBits for delay-only work of at least 2^42 numbers whose
// records end 16 bits or more below it; for work in whole units (from there on), the width
// a coordinator gives such units by default (UnitSieveBits with kWideUnitClassSieveBits:
// delay+class units of at least kWideClassUnitNumbers; kWideUnitDelaySieveBits: units of
// either kind of at least kWideDelayUnitNumbers); else DefaultSieveBits.
int SieveBitsForRun(Backend resolved, Kinds kinds, u128 complete_below, u128 first_begin, u128 numbers,
                    u128 unit_size);

// The search tables: from a sieve file (collatz-sieve) when `sieve_file` is not empty
// (its width wins), else a generated sieve of `sieve_bits`; core's default step and tail
// tables, or `delay`'s when given (tables of several widths share them), then without
// `cpu_offsets` without the mod-9 offset table (SearchTables::FromSieve).
Status BuildSearchTables(const std::string& sieve_file, int sieve_bits, std::shared_ptr<const SearchTables>* out,
                         std::shared_ptr<const FastDelay> delay = nullptr, bool cpu_offsets = true);

// Tables for a GPU engine with a sieve of `sieve_bits` built on the device, sharing `delay`
// (step and tail tables) when given. They lack the host's mod-9 offset table, which only CPU
// engines read (SearchTables::WithCpuOffsets adds it). FailedPrecondition without CUDA;
// Corruption when the sieve the device built fails its check (core/sieve_check.h).
constexpr int kMinGpuBuiltSieveBits = 23;  // from here on seconds on the host
constexpr int kMaxGpuBuiltSieveBits = 30;
static_assert(kMaxUnitSieveBits <= kMaxGpuBuiltSieveBits, "every unit width can be built on a GPU");
// Whether a `resolved` backend builds its tables with BuildGpuSearchTables: on the GPU, no
// sieve file, a width from kMinGpuBuiltSieveBits to kMaxGpuBuiltSieveBits.
bool BuildsSieveOnGpu(Backend resolved, const std::string& sieve_file, int sieve_bits);
Status BuildGpuSearchTables(int device, int sieve_bits, std::shared_ptr<const FastDelay> delay,
                            std::shared_ptr<const SearchTables>* out);

// Builds the engine for a resolved backend. threads: CPU threads (0 = all cores);
// gpu_device: the CUDA device of a kGpu engine; gpu_own_table_bits: B of the GPU engine's
// own record table for units leased without one (docs/FLOOR.md; -1: the engine's default,
// 0: none). FailedPrecondition for kGpu in a build without CUDA.
Status MakeEngine(Backend resolved, std::shared_ptr<const SearchTables> tables, int threads,
                  std::unique_ptr<SearchEngine>* out, int gpu_device = 0, int gpu_own_table_bits = -1);

// The own table's B for a GPU engine that will search about `numbers` numbers: its searches
// cost once what a deeper table saves on every unit without a table (H100 at 2^66, 2^44
// numbers, session 17: B = 42 / 43 / 44 take 0.78 / 1.14 / 2.24 s and give 1.115 / 1.160 /
// 1.211e12 numbers/s; session 14: 46 took 9.6 s for 1.30e12), so each pays from about
// 2^43.2 / 2^44.8 / 2^46.9 numbers on: 42 below 2^43, 43 below 2^45, 44 below 2^47, 46
// from there (a worker daemon).
int OwnTableBitsForWork(u128 numbers);
constexpr int kDaemonOwnTableBits = 46;

}  // namespace collatz::engines
