// Host side of the join map: the CPU twin and the device build (gpu/join_map_kernels.cu).
#include "gpu/join_map.h"

#include <algorithm>
#include <numeric>

#include "core/sieve.h"
#include "core/step_table.h"
#include "core/u128.h"
#include "gpu/join_map_kernels.h"
#include "gpu/sort_buffers.h"

namespace collatz {
namespace {

Status CheckLevels(const std::vector<uint64_t>& odd_residues, int k, int L) {
  if (k < 1 || L <= k || L > gpu::kMaxJoinBits) return Status::InvalidArgument("join map needs k < L <= 34");
  if (odd_residues.empty()) return Status::InvalidArgument("join map needs sieve survivors");
  for (size_t j = 0; j < odd_residues.size(); ++j) {
    if ((odd_residues[j] & 1) == 0 || (odd_residues[j] >> k) != 0 || (j > 0 && odd_residues[j] <= odd_residues[j - 1])) {
      return Status::InvalidArgument("join map needs ascending odd residues below 2^k");
    }
  }
  return Status::Ok();
}

}  // namespace

Status BuildJoinMapOnHost(const std::vector<uint64_t>& odd_residues, int k, int L, std::vector<uint8_t>* map,
                          int h_mod9) {
  STATUS_TRY(CheckLevels(odd_residues, k, L));
  if (h_mod9 > 8) return Status::InvalidArgument("join map variant must be -1 or H mod 9");
  const unsigned pow2_mod9 = static_cast<unsigned>(Pow2(static_cast<unsigned>(L)) % 9);
  // Every lift in ascending order with its (p, c) after L T-steps.
  std::vector<std::pair<uint64_t, uint64_t>> lifts;
  lifts.reserve(odd_residues.size() << (L - k));
  for (uint64_t b = 0; b < (uint64_t{1} << (L - k)); ++b) {
    for (const uint64_t low : odd_residues) {
      const uint64_t r = low + (b << k);
      if (h_mod9 >= 0 &&
          !OddNumberIsComputed(static_cast<unsigned>((pow2_mod9 * static_cast<unsigned>(h_mod9) + r % 9) % 9),
                               Kinds::kDelay, 9)) {
        lifts.emplace_back(gpu::kJoinUnexaminedKey | lifts.size(), r);  // a run of its own
        continue;
      }
      uint32_t p = 0;
      uint64_t c = 0;
      TStepsOfResidue(r, L, &p, &c);
      lifts.emplace_back(uint64_t{p} << gpu::kJoinKeyCBits | c, r);
    }
  }
  std::stable_sort(lifts.begin(), lifts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  map->assign(size_t{1} << (L - 1), 0);
  for (size_t i = 0; i < lifts.size();) {
    size_t end = i + 1;
    while (end < lifts.size() && lifts[end].first == lifts[i].first) ++end;
    if (end - i > 255) return Status::Unavailable("join map run longer than 255");
    (*map)[lifts[i].second >> 1] = static_cast<uint8_t>(end - i);
    i = end;
  }
  return Status::Ok();
}

namespace {

// Builds `variants` maps (1: one map of every lift; gpu::kJoinDelayVariants: the delay-only
// variants) into one allocation of variants 2^(L - 1) bytes, from one sort of every lift.
Status BuildMaps(const std::vector<uint64_t>& odd_residues, int k, int L, int variants, DeviceArray<uint8_t>* map) {
  STATUS_TRY(CheckLevels(odd_residues, k, L));
  const uint64_t count = static_cast<uint64_t>(odd_residues.size()) << (L - k);
  if (count > static_cast<uint64_t>(INT32_MAX)) return Status::Unavailable("join map: too many lifts for one sort");
  if (k > 32) return Status::InvalidArgument("join map needs k <= 32");
  if (variants != 1 && variants != gpu::kJoinDelayVariants) return Status::InvalidArgument("join map variants");
  std::vector<uint32_t> low(odd_residues.begin(), odd_residues.end());
  KeyValueSortBuffers sort;
  uint64_t** keys = sort.keys;
  uint32_t** indices = sort.values;
  size_t temp_bytes = 0;
  int sorted = 0;
  CUDA_TRY(gpu::SortJoinKeys(nullptr, &temp_bytes, keys, indices, count, &sorted, nullptr));
  const size_t one_map = size_t{1} << (L - 1);
  const size_t map_bytes = one_map * static_cast<size_t>(variants);
  const size_t need = KeyValueSortBuffers::Bytes(count, temp_bytes) + map_bytes + low.size() * 4;
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  // Leave a quarter of the free memory (at least 1 GiB) to the search itself.
  if (need + std::max<size_t>(free_bytes / 4, size_t{1} << 30) > free_bytes) {
    return Status::Unavailable("join map: " + std::to_string(need >> 20) + " MiB needed, " +
                               std::to_string(free_bytes >> 20) + " MiB free");
  }
  DeviceArray<uint32_t> low_device;
  DeviceArray<int> failed;
  STATUS_TRY(low_device.Upload(low));
  STATUS_TRY(sort.Allocate(count, temp_bytes));
  STATUS_TRY(failed.Allocate(1));
  STATUS_TRY(map->Allocate(map_bytes));
  CUDA_TRY(cudaMemset(map->get(), 0, map_bytes));
  CUDA_TRY(cudaMemset(failed.get(), 0, sizeof(int)));
  const uint32_t low_count = static_cast<uint32_t>(low.size());
  // One sort of every lift serves every variant: a variant's runs are the full runs'
  // members it examines.
  CUDA_TRY(gpu::LaunchJoinKeys(low_device.get(), low_count, k, L, count, keys[0], indices[0], failed.get(), nullptr));
  CUDA_TRY(gpu::SortJoinKeys(sort.temp.get(), &temp_bytes, keys, indices, count, &sorted, nullptr));
  if (variants == 1) {
    CUDA_TRY(gpu::LaunchMarkJoinRuns(low_device.get(), low_count, k, keys[sorted], indices[sorted], count, map->get(),
                                     failed.get(), nullptr));
  } else {
    CUDA_TRY(gpu::LaunchMarkDelayJoinRuns(low_device.get(), low_count, k, L, keys[sorted], indices[sorted], count,
                                          map->get(), one_map, failed.get(), nullptr));
  }
  CUDA_TRY(cudaDeviceSynchronize());
  int host_failed = 0;
  CUDA_TRY(cudaMemcpy(&host_failed, failed.get(), sizeof(int), cudaMemcpyDeviceToHost));
  if (host_failed != 0) {
    map->Free();
    return Status::Unavailable("join map: a key did not fit or a run is longer than 255");
  }
  return Status::Ok();
}

}  // namespace

Status BuildJoinMap(const std::vector<uint64_t>& odd_residues, int k, int L, DeviceArray<uint8_t>* map) {
  return BuildMaps(odd_residues, k, L, 1, map);
}

Status BuildDelayJoinMaps(const std::vector<uint64_t>& odd_residues, int k, int L, DeviceArray<uint8_t>* maps) {
  return BuildMaps(odd_residues, k, L, gpu::kJoinDelayVariants, maps);
}

}  // namespace collatz
