#include "gpu/gpu_baseline.h"

#include <cuda_runtime.h>

#include <string>

#include "gpu/baseline_kernel.h"
#include "gpu/cuda_memory.h"

namespace collatz {

Status RunGpuBaseline(const UnitSpec& spec, double* seconds, uint64_t* numbers, GpuBaselineResult* detail,
                      int device) {
  if (spec.end <= spec.begin || spec.begin < 1) return Status::InvalidArgument("empty baseline range");
  if (spec.end - spec.begin > Pow2(40)) return Status::InvalidArgument("baseline range above 2^40 numbers");
  const uint64_t count = static_cast<uint64_t>(spec.end - spec.begin);
  CUDA_TRY(cudaSetDevice(device));
  gpu::BaselineTotals* totals = nullptr;
  CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(&totals), sizeof(gpu::BaselineTotals)));
  cudaEvent_t start = nullptr, stop = nullptr;
  auto run = [&]() -> Status {
    CUDA_TRY(cudaEventCreate(&start));
    CUDA_TRY(cudaEventCreate(&stop));
    CUDA_TRY(cudaMemset(totals, 0, sizeof(gpu::BaselineTotals)));
    CUDA_TRY(cudaEventRecord(start, nullptr));
    CUDA_TRY(gpu::LaunchBaseline(Lo64(spec.begin), Hi64(spec.begin), count, totals, nullptr));
    CUDA_TRY(cudaEventRecord(stop, nullptr));
    CUDA_TRY(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
    gpu::BaselineTotals host{};
    CUDA_TRY(cudaMemcpy(&host, totals, sizeof(host), cudaMemcpyDeviceToHost));
    *seconds = ms / 1e3;
    *numbers = count;
    if (detail != nullptr) {
      detail->seconds = *seconds;
      detail->numbers = count;
      detail->max_delay = host.max_delay;
      detail->delay_sum = host.delay_sum;
      detail->overflowed = host.overflowed;
    }
    return Status::Ok();
  };
  Status st = run();
  if (start != nullptr) cudaEventDestroy(start);
  if (stop != nullptr) cudaEventDestroy(stop);
  cudaFree(totals);
  return st;
}

}  // namespace collatz
