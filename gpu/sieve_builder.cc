#include "gpu/sieve_builder.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "core/sieve_check.h"
#include "core/step_table.h"
#include "core/tail_table.h"
#include "gpu/cuda_memory.h"
#include "gpu/sieve_kernels.h"
#include "gpu/sort_buffers.h"

namespace collatz {
namespace {

// Sieves up to this width take one sort of every residue; wider ones sort the lifts of the
// survivors kLiftBits below (about a sixth of 2^k: 0.19 of the residues survive at 25 bits).
constexpr int kDirectBits = 20;
constexpr int kLiftBits = 5;

// The survivors among `candidates` at level k (odd ones only with odd_only), ascending, into
// *survivors (allocated here); the scratch is freed on return.
Status SelectSurvivors(const gpu::SieveCandidates& candidates, int k, bool odd_only, DeviceArray<uint64_t>* survivors,
                       uint32_t* survivor_count) {
  const uint64_t count = candidates.count;
  KeyValueSortBuffers sort;
  size_t sort_bytes = 0, select_bytes = 0;
  int sorted = 0;
  CUDA_TRY(gpu::SortSieveKeys(nullptr, &sort_bytes, sort.keys, sort.values, count, k, &sorted, nullptr));
  CUDA_TRY(gpu::SelectSieveSurvivors(nullptr, &select_bytes, candidates, nullptr, nullptr, nullptr, nullptr));
  const size_t temp_bytes = std::max(sort_bytes, select_bytes);
  const size_t need = KeyValueSortBuffers::Bytes(count, temp_bytes) + count;
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (need + (size_t{1} << 30) > free_bytes) {
    return Status::Unavailable("device sieve: " + std::to_string(need >> 20) + " MiB needed, " +
                               std::to_string(free_bytes >> 20) + " MiB free");
  }
  DeviceArray<uint32_t> selected_count;
  DeviceArray<uint8_t> flags;
  STATUS_TRY(sort.Allocate(count, temp_bytes));
  STATUS_TRY(flags.Allocate(count));
  STATUS_TRY(selected_count.Allocate(1));
  uint64_t** keys = sort.keys;
  uint32_t** values = sort.values;
  CUDA_TRY(gpu::LaunchSieveKeys(candidates, k, keys[0], values[0], nullptr));
  size_t bytes = temp_bytes;
  CUDA_TRY(gpu::SortSieveKeys(sort.temp.get(), &bytes, keys, values, count, k, &sorted, nullptr));
  CUDA_TRY(gpu::LaunchMarkSieveSurvivors(candidates, keys[sorted], values[sorted], odd_only, flags.get(), nullptr));
  // The survivors into the other key buffer (both are free once the runs are marked).
  uint64_t* found = keys[1 - sorted];
  bytes = temp_bytes;
  CUDA_TRY(
      gpu::SelectSieveSurvivors(sort.temp.get(), &bytes, candidates, flags.get(), found, selected_count.get(), nullptr));
  uint32_t n = 0;
  CUDA_TRY(cudaMemcpy(&n, selected_count.get(), sizeof n, cudaMemcpyDeviceToHost));
  STATUS_TRY(survivors->Allocate(n));
  CUDA_TRY(cudaMemcpy(survivors->get(), found, n * sizeof(uint64_t), cudaMemcpyDeviceToDevice));
  *survivor_count = n;
  return Status::Ok();
}

}  // namespace

Status BuildSieveOnDevice(int bits, std::shared_ptr<const Sieve>* out, std::shared_ptr<DeviceSieve>* on_device) {
  if (bits < 1 || bits > gpu::kMaxDeviceSieveBits) {
    return Status::InvalidArgument("device sieve bits must be in 1.." + std::to_string(gpu::kMaxDeviceSieveBits));
  }
  auto device = std::make_shared<DeviceSieve>();
  CUDA_TRY(cudaGetDevice(&device->device));
  device->bits = bits;
  gpu::SieveCandidates all;
  if (bits <= kDirectBits) {
    all.count = uint64_t{1} << bits;
    STATUS_TRY(SelectSurvivors(all, bits, /*odd_only=*/true, &device->residues, &device->count));
  } else {
    // Every survivor (odd and even) of level m, then the odd survivors among their lifts.
    const int m = bits - kLiftBits;
    all.count = uint64_t{1} << m;
    DeviceArray<uint64_t> level_m;
    uint32_t level_m_count = 0;
    STATUS_TRY(SelectSurvivors(all, m, /*odd_only=*/false, &level_m, &level_m_count));
    gpu::SieveCandidates lifts;
    lifts.base = level_m.get();
    lifts.base_count = level_m_count;
    lifts.m = m;
    lifts.count = uint64_t{level_m_count} << kLiftBits;
    STATUS_TRY(SelectSurvivors(lifts, bits, /*odd_only=*/true, &device->residues, &device->count));
  }
  const uint32_t n = device->count;
  STATUS_TRY(device->c.Allocate(n));
  STATUS_TRY(device->p.Allocate(n));
  CUDA_TRY(gpu::LaunchSieveSteps(device->residues.get(), n, bits, device->c.get(), device->p.get(), nullptr));
  CUDA_TRY(cudaDeviceSynchronize());
  std::vector<uint64_t> host_residues(n), host_c(n);
  std::vector<uint8_t> host_p(n);
  if (n > 0) {
    CUDA_TRY(cudaMemcpy(host_residues.data(), device->residues.get(), n * sizeof(uint64_t), cudaMemcpyDeviceToHost));
    CUDA_TRY(cudaMemcpy(host_c.data(), device->c.get(), n * sizeof(uint64_t), cudaMemcpyDeviceToHost));
    CUDA_TRY(cudaMemcpy(host_p.data(), device->p.get(), n, cudaMemcpyDeviceToHost));
  }
  STATUS_TRY(Sieve::FromSteps(bits, std::move(host_residues), std::move(host_c), std::move(host_p), out));
  if (on_device != nullptr) *on_device = std::move(device);
  return Status::Ok();
}

Status BuildDeviceSearchTables(int device, int sieve_bits, std::shared_ptr<const FastDelay> delay,
                               std::shared_ptr<const SearchTables>* out) {
  CUDA_TRY(cudaSetDevice(device));
  auto tables = std::make_shared<SearchTables>();
  std::shared_ptr<DeviceSieve> on_device;
  STATUS_TRY(BuildSieveOnDevice(sieve_bits, &tables->sieve, &on_device));
  // Every GPU-built sieve is checked against Sieve::Generate's before its tables are used
  // (core/sieve_check.h: its fingerprint, and random residues against the definition).
  STATUS_TRY(CheckBuiltSieve(*tables->sieve, "GPU-built sieve (device " + std::to_string(device) + ")"));
  tables->device_sieve = std::move(on_device);
  tables->delay = delay != nullptr ? std::move(delay)
                                   : std::make_shared<FastDelay>(std::make_shared<StepTable>(kDefaultStepBits),
                                                                 std::make_shared<TailTable>(kDefaultTailBits));
  *out = std::move(tables);
  return Status::Ok();
}

}  // namespace collatz
