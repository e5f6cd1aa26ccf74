#include "engines/engine_factory.h"

#include "core/cpu_engine.h"
#include "core/sieve_file.h"

#if COLLATZ_WITH_GPU
#include "gpu/gpu_engine.h"
#include "gpu/sieve_builder.h"
#include "gpu/sieve_kernels.h"
static_assert(collatz::engines::kMaxGpuBuiltSieveBits == collatz::gpu::kMaxDeviceSieveBits);
#endif

namespace collatz::engines {

Status ParseBackendFlag(const std::string& text, Backend* out) {
  if (text == "cpu") *out = Backend::kCpu;
  else if (text == "gpu") *out = Backend::kGpu;
  else if (text == "auto") *out = Backend::kAuto;
  else return Status::InvalidArgument("--backend: \"" + text + "\" is not one of: cpu, gpu, auto");
  return Status::Ok();
}

bool BuildHasCuda() { return COLLATZ_WITH_GPU != 0; }

Status ResolveBackend(Backend requested, Backend* resolved, std::string* note) {
  note->clear();
  if (requested == Backend::kCpu) {
    *resolved = Backend::kCpu;
    return Status::Ok();
  }
#if COLLATZ_WITH_GPU
  const int devices = GpuDeviceCount();
#else
  const int devices = 0;
#endif
  if (requested == Backend::kGpu) {
    if (!BuildHasCuda()) return Status::FailedPrecondition("this build has no CUDA engine (--backend gpu)");
    if (devices == 0) return Status::FailedPrecondition("no CUDA device found (--backend gpu)");
    *resolved = Backend::kGpu;
    return Status::Ok();
  }
  if (devices > 0) {
    *resolved = Backend::kGpu;
    *note = "auto backend: using the GPU";
  } else {
    *resolved = Backend::kCpu;
    *note = BuildHasCuda() ? "auto backend: no CUDA device found, using the CPU"
                           : "auto backend: this build has no CUDA engine, using the CPU";
  }
  return Status::Ok();
}

std::future<void> StartGpuContext(int device) {
#if COLLATZ_WITH_GPU
  return std::async(std::launch::async, [device] { WarmGpuContext(device); });
#else
  (void)device;
  std::promise<void> none;
  none.set_value();
  return none.get_future();
#endif
}

void PrepareProcessForGpu() {
#if COLLATZ_WITH_GPU
  LimitCudaHardwareQueues();
#endif
}

int DefaultSieveBits(Backend) { return kDefaultSieveBits; }

int SieveBitsForRun(Backend resolved, Kinds kinds, u128 complete_below, u128 first_begin, u128 numbers,
                    u128 unit_size) {
  if (resolved != Backend::kGpu) return DefaultSieveBits(resolved);
  const bool far_below = complete_below < (first_begin >> 16);
  if (kinds == Kinds::kDelay && far_below && numbers >= Pow2(42)) return kFloorContextSieveBits;
  // Whole units only: a run from below the unit size starts with smaller cuts. Those get the
  // width a coordinator cuts them with by default.
  const bool whole_units = numbers >= unit_size && first_begin >= unit_size;
  if (whole_units) {
    return UnitSieveBits(kinds, unit_size, DefaultSieveBits(resolved), kWideUnitClassSieveBits, kWideClassUnitNumbers,
                         kWideUnitDelaySieveBits);
  }
  return DefaultSieveBits(resolved);
}

bool BuildsSieveOnGpu(Backend resolved, const std::string& sieve_file, int sieve_bits) {
  return resolved == Backend::kGpu && sieve_file.empty() && sieve_bits >= kMinGpuBuiltSieveBits &&
         sieve_bits <= kMaxGpuBuiltSieveBits;
}

Status BuildGpuSearchTables(int device, int sieve_bits, std::shared_ptr<const FastDelay> delay,
                            std::shared_ptr<const SearchTables>* out) {
#if COLLATZ_WITH_GPU
  return BuildDeviceSearchTables(device, sieve_bits, std::move(delay), out);
#else
  (void)device;
  (void)sieve_bits;
  (void)delay;
  (void)out;
  return Status::FailedPrecondition("this build has no CUDA engine");
#endif
}

Status BuildSearchTables(const std::string& sieve_file, int sieve_bits, std::shared_ptr<const SearchTables>* out,
                         std::shared_ptr<const FastDelay> delay, bool cpu_offsets) {
  if (sieve_file.empty() && delay == nullptr) return SearchTables::Build(sieve_bits, kDefaultStepBits, kDefaultTailBits, out);
  std::shared_ptr<const Sieve> sieve;
  Status st = sieve_file.empty() ? Sieve::Generate(sieve_bits, &sieve) : LoadSieveFile(sieve_file, &sieve);
  if (!st.ok()) return st;
  if (delay != nullptr) return SearchTables::FromSieve(std::move(sieve), std::move(delay), out, cpu_offsets);
  return SearchTables::FromSieve(std::move(sieve), kDefaultStepBits, kDefaultTailBits, out);
}

Status MakeEngine(Backend resolved, std::shared_ptr<const SearchTables> tables, int threads,
                  std::unique_ptr<SearchEngine>* out, int gpu_device, int gpu_own_table_bits) {
  if (resolved == Backend::kGpu) {
#if COLLATZ_WITH_GPU
    GpuEngineOptions options;
    options.device = gpu_device;
    if (gpu_own_table_bits >= 0) options.self_record_bits = gpu_own_table_bits;
    return MakeGpuEngine(std::move(tables), options, out);
#else
    (void)gpu_device;
    (void)gpu_own_table_bits;
    return Status::FailedPrecondition("this build has no CUDA engine");
#endif
  }
  CpuEngineOptions options;
  options.threads = threads;
  out->reset(new CpuEngine(std::move(tables), options));
  return Status::Ok();
}

int OwnTableBitsForWork(u128 numbers) {
  if (numbers < Pow2(43)) return 42;
  if (numbers < Pow2(45)) return 43;
  if (numbers < Pow2(47)) return 44;
  return kDaemonOwnTableBits;
}

}  // namespace collatz::engines
