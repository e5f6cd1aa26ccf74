// GPU discovery in a build without CUDA: no devices.
#include "worker/gpu_discovery.h"

namespace collatz::worker {

bool BuildHasGpu() { return false; }

std::vector<GpuInfo> DiscoverGpus(std::string* driver_version) {
  driver_version->clear();
  return {};
}

}  // namespace collatz::worker
