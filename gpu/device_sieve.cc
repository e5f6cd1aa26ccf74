#include "gpu/device_sieve.h"

#include <cstdint>

namespace collatz {

Status DeviceSieve::Upload(const Sieve& sieve) {
  if (sieve.size() > static_cast<size_t>(INT32_MAX)) return Status::InvalidArgument("sieve too large for the device");
  CUDA_TRY(cudaGetDevice(&device));
  bits = sieve.bits();
  count = static_cast<uint32_t>(sieve.size());
  STATUS_TRY(residues.Upload(sieve.residues()));
  STATUS_TRY(c.Upload(sieve.c()));
  STATUS_TRY(p.Upload(sieve.p()));
  return Status::Ok();
}

}  // namespace collatz
