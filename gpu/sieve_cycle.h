// The GPU engine's sieve-offset entries of one cycle of `modulus` consecutive blocks h
// (gpu/search_kernels.h, SieveEntry), built on the device from the sieve's survivors, and the
// host's count of a variant's entries below a residue (a unit's first and last positions).
// Variant r (h = r mod modulus) holds the survivors whose residue class mod `modulus` it
// keeps (core/sieve.h, OffsetTable: the mod-9 rule of delay-only searches; modulus 1: all).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/sieve.h"
#include "core/status.h"
#include "gpu/cuda_memory.h"
#include "gpu/device_sieve.h"
#include "gpu/search_kernels.h"

namespace collatz {

class SieveCycle {
 public:
  // The host half (no CUDA call): each variant's classes, its entries' start, the counts
  // VariantEntriesBelow reads (on all cores). modulus 1 or 9.
  Status Plan(std::shared_ptr<const Sieve> sieve, unsigned modulus);
  // The device half: the entries of every variant, one after the other.
  Status BuildEntries(const DeviceSieve& sieve);

  unsigned modulus() const { return modulus_; }
  uint64_t len() const { return len_; }  // entries per cycle
  const gpu::SieveEntry* entries() const { return entries_.get(); }
  // The entries of variant r below residue `low` (< 2^k), counted from the variant's start.
  uint64_t VariantEntriesBelow(unsigned r, uint64_t low) const;
  uint64_t VariantStart(unsigned r) const { return prefix_[r]; }

 private:
  // Survivors between two checkpoints of class_before_.
  static constexpr int kCheckpointBits = 10;
  std::shared_ptr<const Sieve> sieve_;
  unsigned modulus_ = 1;
  uint64_t len_ = 0;
  std::vector<uint64_t> prefix_;        // start of variant r in the cycle
  std::vector<uint32_t> kept_classes_;  // variant r: bit m for the residue classes m it keeps
  std::vector<uint32_t> class_before_;  // [checkpoint * modulus + m]: survivors of class m before it
  DeviceArray<gpu::SieveEntry> entries_;
};

}  // namespace collatz
