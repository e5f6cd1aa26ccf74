#include "worker/engines.h"

#include "core/cpu_engine.h"
#include "core/sieve_file.h"

#if COLLATZ_WORKER_WITH_GPU
#include "gpu/gpu_engine.h"
#endif

namespace collatz::worker {

Status BuildSearchTables(const std::string& sieve_file, int sieve_bits, std::shared_ptr<const SearchTables>* out) {
  if (sieve_file.empty()) return SearchTables::Build(sieve_bits, kDefaultStepBits, kDefaultTailBits, out);
  std::shared_ptr<const Sieve> sieve;
  Status st = LoadSieveFile(sieve_file, &sieve);
  if (!st.ok()) return st;
  return SearchTables::FromSieve(std::move(sieve), kDefaultStepBits, kDefaultTailBits, out);
}

Status MakeCpuSearchEngine(std::shared_ptr<const SearchTables> tables, int threads, std::unique_ptr<SearchEngine>* out) {
  CpuEngineOptions options;
  options.threads = threads;
  out->reset(new CpuEngine(std::move(tables), options));
  return Status::Ok();
}

Status MakeGpuSearchEngine(std::shared_ptr<const SearchTables> tables, int device, std::unique_ptr<SearchEngine>* out) {
#if COLLATZ_WORKER_WITH_GPU
  GpuEngineOptions options;
  options.device = device;
  return MakeGpuEngine(std::move(tables), options, out);
#else
  (void)tables;
  (void)device;
  (void)out;
  return Status::FailedPrecondition("this build has no CUDA engine");
#endif
}

}  // namespace collatz::worker
