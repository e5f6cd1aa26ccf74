// Which GPUs this process can use: the CUDA runtime's devices (CUDA_VISIBLE_DEVICES
// applies, so indices are the visible ones), and --gpus selection by index or UUID.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace collatz::worker {

struct GpuInfo {
  int index = 0;          // CUDA runtime device index (after CUDA_VISIBLE_DEVICES)
  std::string model;      // "NVIDIA H100 80GB HBM3"
  std::string uuid;       // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it
  uint64_t memory_bytes = 0;
  int compute_major = 0, compute_minor = 0;
};

// Whether this binary was built with the CUDA engine.
bool BuildHasGpu();

// The visible devices and the CUDA driver version ("13.0"); empty, "" without a GPU or
// driver. Never fails hard: a machine without a GPU simply has none.
std::vector<GpuInfo> DiscoverGpus(std::string* driver_version);

// Parses --gpus: "all", or a comma-separated list of indices and/or UUIDs (a UUID may be
// given with or without "GPU-", and by a unique prefix). InvalidArgument names the entry
// that matches nothing, or twice.
Status SelectGpus(const std::string& selection, const std::vector<GpuInfo>& available, std::vector<GpuInfo>* out);

// "GPU-" + the 16 bytes in nvidia-smi's 8-4-4-4-12 grouping.
std::string FormatGpuUuid(const unsigned char bytes[16]);

}  // namespace collatz::worker
