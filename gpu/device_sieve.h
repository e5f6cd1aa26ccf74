// A sieve's survivors in device memory: residue, c and p after k T-steps (core/sieve.h), from
// which the engine builds its sieve entries (gpu/sieve_cycle.h). The sieve builder
// (gpu/sieve_builder.h) leaves one behind with the tables it builds, so that the engine does
// not upload what the device already holds.
#pragma once

#include <cstdint>

#include "core/sieve.h"
#include "core/status.h"
#include "gpu/cuda_memory.h"

namespace collatz {

struct DeviceSieve {
  int device = 0;
  int bits = 0;
  uint32_t count = 0;
  DeviceArray<uint64_t> residues, c;
  DeviceArray<uint8_t> p;
  // A copy of `sieve` on the current device.
  Status Upload(const Sieve& sieve);
};

}  // namespace collatz
