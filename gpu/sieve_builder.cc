#include "gpu/sieve_builder.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/step_table.h"
#include "core/tail_table.h"
#include "gpu/cuda_memory.h"
#include "gpu/sieve_kernels.h"

namespace collatz {

Status BuildSieveOnDevice(int bits, std::shared_ptr<const Sieve>* out, std::shared_ptr<DeviceSieve>* on_device) {
  if (bits < 1 || bits > gpu::kMaxDeviceSieveBits) {
    return Status::InvalidArgument("device sieve bits must be in 1.." + std::to_string(gpu::kMaxDeviceSieveBits));
  }
  const size_t count = size_t{1} << bits;
  uint64_t* keys[2] = {nullptr, nullptr};
  uint32_t* residues[2] = {nullptr, nullptr};
  size_t sort_bytes = 0, select_bytes = 0;
  int sorted = 0;
  CUDA_TRY(gpu::SortSieveKeys(nullptr, &sort_bytes, keys, residues, bits, &sorted, nullptr));
  CUDA_TRY(gpu::SelectSieveSurvivors(nullptr, &select_bytes, nullptr, bits, nullptr, nullptr, nullptr));
  const size_t temp_bytes = std::max(sort_bytes, select_bytes);
  const size_t need = count * 2 * (sizeof(uint64_t) + sizeof(uint32_t)) + count + temp_bytes;
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (need + (size_t{1} << 30) > free_bytes) {
    return Status::Unavailable("device sieve: " + std::to_string(need >> 20) + " MiB needed, " +
                               std::to_string(free_bytes >> 20) + " MiB free");
  }
  DeviceArray<uint64_t> key_a, key_b;
  DeviceArray<uint32_t> residue_a, residue_b, survivor_count;
  DeviceArray<uint8_t> flags;
  DeviceArray<unsigned char> temp;
  STATUS_TRY(key_a.Allocate(count));
  STATUS_TRY(key_b.Allocate(count));
  STATUS_TRY(residue_a.Allocate(count));
  STATUS_TRY(residue_b.Allocate(count));
  STATUS_TRY(flags.Allocate(count));
  STATUS_TRY(temp.Allocate(temp_bytes));
  STATUS_TRY(survivor_count.Allocate(1));
  keys[0] = key_a.get();
  keys[1] = key_b.get();
  residues[0] = residue_a.get();
  residues[1] = residue_b.get();
  CUDA_TRY(gpu::LaunchSieveKeys(bits, keys[0], residues[0], nullptr));
  size_t bytes = temp_bytes;
  CUDA_TRY(gpu::SortSieveKeys(temp.get(), &bytes, keys, residues, bits, &sorted, nullptr));
  CUDA_TRY(gpu::LaunchMarkSieveSurvivors(keys[sorted], residues[sorted], bits, flags.get(), nullptr));
  // The survivors into the other key buffer (both are free once the runs are marked).
  uint64_t* survivors = keys[1 - sorted];
  bytes = temp_bytes;
  CUDA_TRY(gpu::SelectSieveSurvivors(temp.get(), &bytes, flags.get(), bits, survivors, survivor_count.get(), nullptr));
  uint32_t n = 0;
  CUDA_TRY(cudaMemcpy(&n, survivor_count.get(), sizeof n, cudaMemcpyDeviceToHost));
  auto device = std::make_shared<DeviceSieve>();
  CUDA_TRY(cudaGetDevice(&device->device));
  device->bits = bits;
  device->count = n;
  STATUS_TRY(device->residues.Allocate(n));
  STATUS_TRY(device->c.Allocate(n));
  STATUS_TRY(device->p.Allocate(n));
  CUDA_TRY(cudaMemcpy(device->residues.get(), survivors, n * sizeof(uint64_t), cudaMemcpyDeviceToDevice));
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
  tables->device_sieve = std::move(on_device);
  tables->delay = delay != nullptr ? std::move(delay)
                                   : std::make_shared<FastDelay>(std::make_shared<StepTable>(kDefaultStepBits),
                                                                 std::make_shared<TailTable>(kDefaultTailBits));
  *out = std::move(tables);
  return Status::Ok();
}

}  // namespace collatz
