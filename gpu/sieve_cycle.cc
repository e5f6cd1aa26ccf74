#include "gpu/sieve_cycle.h"

#include <algorithm>
#include <string>

#include "core/parallel_tasks.h"
#include "core/thread_count.h"
#include "core/u128.h"
#include "gpu/sieve_kernels.h"

namespace collatz {

Status SieveCycle::Plan(std::shared_ptr<const Sieve> sieve, unsigned modulus) {
  if (modulus != 1 && modulus != 9) return Status::InvalidArgument("sieve cycle modulus must be 1 or 9");
  sieve_ = std::move(sieve);
  modulus_ = modulus;
  const std::vector<uint64_t>& residues = sieve_->residues();
  const unsigned block_mod = static_cast<unsigned>(Pow2(static_cast<unsigned>(sieve_->bits())) % modulus);
  kept_classes_.assign(modulus, 0);
  for (unsigned r = 0; r < modulus; ++r) {
    for (unsigned m = 0; m < modulus; ++m) {
      // N = 2^k h + i = block_mod r + m (mod modulus): the rule OffsetTable applies.
      if (OddNumberIsComputed((block_mod * r + m) % modulus, Kinds::kDelay, modulus)) kept_classes_[r] |= 1u << m;
    }
  }
  // Counts per class before every checkpoint: each thread counts its checkpoints' spans,
  // then the spans are summed in order. modulus 1 needs none (a variant is every survivor).
  const size_t checkpoints = (residues.size() >> kCheckpointBits) + 1;
  std::vector<uint64_t> per_class(modulus, 0);
  if (modulus == 1) {
    per_class[0] = residues.size();
    class_before_.clear();
  } else {
    class_before_.assign(checkpoints * modulus, 0);
    const int threads = residues.size() >= (size_t{1} << 20) ? ResolveThreadCount(0) : 1;
    ParallelChunks(checkpoints, threads, [&](int, size_t first, size_t end) {
      for (size_t cp = first; cp < end; ++cp) {
        // The span after checkpoint cp is counted into cp + 1's row (summed below).
        const size_t lo = cp << kCheckpointBits, hi = std::min(residues.size(), (cp + 1) << kCheckpointBits);
        uint32_t counts[9] = {};
        for (size_t j = lo; j < hi; ++j) ++counts[residues[j] % modulus];
        if (cp + 1 < checkpoints) {
          for (unsigned m = 0; m < modulus; ++m) class_before_[(cp + 1) * modulus + m] = counts[m];
        } else {
          for (unsigned m = 0; m < modulus; ++m) per_class[m] = counts[m];  // the last span
        }
      }
    });
    for (size_t cp = 1; cp < checkpoints; ++cp) {
      for (unsigned m = 0; m < modulus; ++m) class_before_[cp * modulus + m] += class_before_[(cp - 1) * modulus + m];
    }
    for (unsigned m = 0; m < modulus; ++m) per_class[m] += class_before_[(checkpoints - 1) * modulus + m];
  }
  prefix_.assign(modulus + 1, 0);
  for (unsigned r = 0; r < modulus; ++r) {
    uint64_t n = 0;
    for (unsigned m = 0; m < modulus; ++m) {
      if ((kept_classes_[r] >> m) & 1) n += per_class[m];
    }
    prefix_[r + 1] = prefix_[r] + n;
  }
  len_ = prefix_[modulus];
  return Status::Ok();
}

Status SieveCycle::BuildEntries(const DeviceSieve& sieve) {
  if (sieve.bits != sieve_->bits() || sieve.count != sieve_->size()) {
    return Status::InvalidArgument("sieve cycle: the device sieve is not the planned one");
  }
  STATUS_TRY(entries_.Allocate(len_));
  DeviceArray<uint32_t> selected, selected_count;
  DeviceArray<unsigned char> temp;
  STATUS_TRY(selected.Allocate(sieve.count));
  STATUS_TRY(selected_count.Allocate(1));
  size_t temp_bytes = 0;
  CUDA_TRY(gpu::SelectVariant(nullptr, &temp_bytes, sieve.residues.get(), sieve.count, modulus_, 0, nullptr, nullptr,
                              nullptr));
  STATUS_TRY(temp.Allocate(temp_bytes));
  for (unsigned r = 0; r < modulus_; ++r) {
    size_t bytes = temp_bytes;
    CUDA_TRY(gpu::SelectVariant(temp.get(), &bytes, sieve.residues.get(), sieve.count, modulus_, kept_classes_[r],
                                selected.get(), selected_count.get(), nullptr));
    uint32_t n = 0;
    CUDA_TRY(cudaMemcpy(&n, selected_count.get(), sizeof n, cudaMemcpyDeviceToHost));
    if (n != prefix_[r + 1] - prefix_[r]) return Status::Internal("sieve cycle: a variant's entries do not count up");
    CUDA_TRY(gpu::LaunchFillSieveEntries(sieve.residues.get(), sieve.c.get(), sieve.p.get(), selected.get(), n,
                                         sieve.bits, r, entries_.get() + prefix_[r], nullptr));
  }
  CUDA_TRY(cudaDeviceSynchronize());
  return Status::Ok();
}

uint64_t SieveCycle::VariantEntriesBelow(unsigned r, uint64_t low) const {
  const std::vector<uint64_t>& residues = sieve_->residues();
  const size_t below = static_cast<size_t>(std::lower_bound(residues.begin(), residues.end(), low) - residues.begin());
  if (modulus_ == 1) return below;
  const size_t checkpoint = below >> kCheckpointBits;
  uint64_t per_class[9];
  for (unsigned m = 0; m < modulus_; ++m) per_class[m] = class_before_[checkpoint * modulus_ + m];
  for (size_t j = checkpoint << kCheckpointBits; j < below; ++j) ++per_class[residues[j] % modulus_];
  uint64_t n = 0;
  for (unsigned m = 0; m < modulus_; ++m) {
    if ((kept_classes_[r] >> m) & 1) n += per_class[m];
  }
  return n;
}

}  // namespace collatz
