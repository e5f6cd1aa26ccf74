// The k-bit join sieve built on the GPU: a radix sort of every candidate residue's (p, c) key
// (all 2^k residues up to 20 bits, above that the lifts of the survivors 5 bits below:
// gpu/sieve_kernels.h) gives the same sieve as Sieve::Generate, its CPU twin, in a fraction
// of the time (wide sieves for units without a record table near them: docs/PERFORMANCE.md).
#pragma once

#include <memory>

#include "core/delay.h"
#include "core/sieve.h"
#include "core/status.h"
#include "core/unit_search.h"
#include "gpu/device_sieve.h"

namespace collatz {

// Builds the sieve of `bits` (1 .. gpu::kMaxDeviceSieveBits) on the current device;
// *on_device, if asked for, keeps its survivors there. Unavailable when the device lacks the
// memory (about 33 bytes a candidate for a moment).
Status BuildSieveOnDevice(int bits, std::shared_ptr<const Sieve>* out,
                          std::shared_ptr<DeviceSieve>* on_device = nullptr);

// Search tables for the GPU engine with such a sieve, built on `device`: `delay` (the step
// and tail tables) shared when given, else core's defaults; without the host's mod-9 offset
// table (only the CPU engine reads it; SearchTables::WithCpuOffsets adds it), with the device's
// copy of the sieve (SearchTables::device_sieve) for the engine's entries. The sieve is
// checked first (core/sieve_check.h: CheckBuiltSieve; H200 host: 0.04 / 0.22 / 0.76 s at 25 /
// 28 / 30 bits, the build itself 0.02 / 0.30 / 1.04 s); a mismatch with Sieve::Generate's
// is an error (Corruption) and no tables are made.
Status BuildDeviceSearchTables(int device, int sieve_bits, std::shared_ptr<const FastDelay> delay,
                               std::shared_ptr<const SearchTables>* out);

}  // namespace collatz
