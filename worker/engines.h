// The search tables (from a sieve file or generated) and the engines the worker runs:
// one CPU engine per process, or one GPU engine per selected device.
#pragma once

#include <memory>
#include <string>

#include "core/search_engine.h"
#include "core/status.h"
#include "core/unit_search.h"

namespace collatz::worker {

// From `sieve_file` when given (its width wins), else a generated `sieve_bits` sieve.
Status BuildSearchTables(const std::string& sieve_file, int sieve_bits, std::shared_ptr<const SearchTables>* out);

Status MakeCpuSearchEngine(std::shared_ptr<const SearchTables> tables, int threads, std::unique_ptr<SearchEngine>* out);
// FailedPrecondition in a build without CUDA.
Status MakeGpuSearchEngine(std::shared_ptr<const SearchTables> tables, int device, std::unique_ptr<SearchEngine>* out);

}  // namespace collatz::worker
