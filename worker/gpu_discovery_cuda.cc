// GPU discovery through the CUDA runtime (linked statically). Plain C++: no kernels.
#include <cuda_runtime_api.h>

#include "worker/gpu_discovery.h"

namespace collatz::worker {

bool BuildHasGpu() { return true; }

std::vector<GpuInfo> DiscoverGpus(std::string* driver_version) {
  driver_version->clear();
  std::vector<GpuInfo> gpus;
  int driver = 0;
  if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0) {
    *driver_version = "cuda " + std::to_string(driver / 1000) + "." + std::to_string((driver % 1000) / 10);
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return gpus;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) {
      cudaGetLastError();
      continue;
    }
    GpuInfo g;
    g.index = i;
    g.model = prop.name;
    g.uuid = FormatGpuUuid(reinterpret_cast<const unsigned char*>(prop.uuid.bytes));
    g.memory_bytes = prop.totalGlobalMem;
    g.compute_major = prop.major;
    g.compute_minor = prop.minor;
    gpus.push_back(g);
  }
  return gpus;
}

}  // namespace collatz::worker
