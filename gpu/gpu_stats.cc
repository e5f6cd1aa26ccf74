#include "gpu/gpu_stats.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <random>
#include <unordered_map>

#include <cuda_runtime.h>

#include "core/delay.h"
#include "core/step_table.h"
#include "core/tail_table.h"
#include "gpu/cuda_memory.h"
#include "gpu/stats_kernel.h"

namespace collatz {
namespace {

using gpu::StatsBatchOut;
using gpu::StatsFinishEntry;
using gpu::StatsParams;

constexpr uint64_t kMaxLaunchBatches = uint64_t{1} << 22;  // 64 MiB of results per launch
constexpr uint32_t kFinishCapacity = uint32_t{1} << 16;
constexpr int kHostTailBits = 16;  // the device tail grows from this many bits built on the host

// One launch in flight: its results come back into pinned memory while the next one runs.
struct Slot {
  DeviceArray<StatsBatchOut> out;
  PinnedArray<StatsBatchOut> host_out;
  DeviceArray<StatsFinishEntry> finish;
  DeviceArray<unsigned int> finish_count;
  PinnedArray<unsigned int> host_finish_count;
  cudaEvent_t start = nullptr, stop = nullptr, copied = nullptr;
  bool busy = false;
  u128 from = 0, to = 0;  // the launch's numbers
  size_t first_batch = 0;  // index of its first batch in the result
};

}  // namespace

struct GpuStats::Impl {
  GpuStatsOptions options;
  std::string device_name;
  int sms = 0;
  int grid_blocks = 0;
  cudaStream_t stream = nullptr;
  DeviceArray<uint16_t> tail;
  DeviceArray<uint32_t> steps;
  DeviceArray<uint2> global_steps;
  DeviceArray<uint2> survivors;
  DeviceArray<uint32_t> rep;
  DeviceArray<uint16_t> rep16;  // when survivor_count <= 65535
  DeviceArray<int> failed;
  uint32_t survivor_count = 0;
  std::vector<uint32_t> survivor_residue;  // host: residue of each survivor
  std::vector<uint32_t> member_begin;      // host CSR: residues of survivor s are
  std::vector<uint32_t> members;           //   members[member_begin[s] .. member_begin[s + 1])
  std::shared_ptr<const FastDelay> fast;   // host: overflow finishing and fallback
  Slot slots[2];

  ~Impl() {
    for (Slot& s : slots) {
      if (s.start != nullptr) cudaEventDestroy(s.start);
      if (s.stop != nullptr) cudaEventDestroy(s.stop);
      if (s.copied != nullptr) cudaEventDestroy(s.copied);
    }
    if (stream != nullptr) cudaStreamDestroy(stream);
  }

  Status Build();
  int Mode() const {
    return options.refill ? gpu::kStatsModeRefill : options.pairs ? gpu::kStatsModePairs : gpu::kStatsModeStride;
  }
  Status Enqueue(Slot& slot, u128 from, u128 to, uint32_t batch, size_t first_batch);
  Status Finish(Slot& slot, uint32_t batch, std::vector<BatchStats>* out, GpuStatsTimings* t);
};

Status GpuStats::Impl::Build() {
  const GpuStatsOptions& o = options;
  if (o.sieve_bits < 5 || o.sieve_bits > gpu::kStatsMaxSieveBits) {
    return Status::InvalidArgument("GPU stats: sieve bits must be in 5..20");
  }
  if (o.step_bits < 1 || o.step_bits > gpu::kStatsMaxStepBits) {
    return Status::InvalidArgument("GPU stats: step bits must be in 1..20");
  }
  if (o.tail_bits < std::max({o.sieve_bits, o.step_bits, kHostTailBits}) || o.tail_bits > 32) {
    return Status::InvalidArgument("GPU stats: tail bits must be in max(16, sieve bits, step bits)..32");
  }
  if (o.block_threads != 256 && o.block_threads != 512 && o.block_threads != 1024) {
    return Status::InvalidArgument("GPU stats: block threads must be 256, 512 or 1024");
  }
  CUDA_TRY(cudaSetDevice(o.device));
  cudaDeviceProp prop;
  CUDA_TRY(cudaGetDeviceProperties(&prop, o.device));
  device_name = prop.name;
  sms = prop.multiProcessorCount;
  CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  // Step tables: c | p << 26 for shared memory (and for filling the tail), {c, p} in global memory.
  const int packed_bits = std::min(o.step_bits, gpu::kStatsMaxSharedStepBits);
  const StepTable packed_table(packed_bits);
  std::vector<uint32_t> packed(size_t{1} << packed_bits);
  for (size_t i = 0; i < packed.size(); ++i) packed[i] = packed_table.c(i) | (packed_table.p(i) << 26);
  STATUS_TRY(steps.Allocate(packed.size()));
  CUDA_TRY(cudaMemcpy(steps.get(), packed.data(), packed.size() * 4, cudaMemcpyHostToDevice));
  if (o.step_bits > gpu::kStatsMaxSharedStepBits) {
    const StepTable wide(o.step_bits);
    std::vector<uint2> entries(size_t{1} << o.step_bits);
    for (size_t i = 0; i < entries.size(); ++i) entries[i] = uint2{wide.c(i), wide.p(i)};
    STATUS_TRY(global_steps.Allocate(entries.size()));
    CUDA_TRY(cudaMemcpy(global_steps.get(), entries.data(), entries.size() * sizeof(uint2), cudaMemcpyHostToDevice));
  }

  // Join groups of all residues i < 2^k (evens included): equal (p, c) after k T-steps.
  const uint32_t K = uint32_t{1} << o.sieve_bits;
  std::vector<uint32_t> rep_host(K);
  std::vector<uint2> surv_host;
  std::unordered_map<uint64_t, uint32_t> group;
  group.reserve(K);
  for (uint32_t i = 0; i < K; ++i) {
    uint32_t p = 0;
    uint64_t c = 0;
    TStepsOfResidue(i, o.sieve_bits, &p, &c);
    const auto [it, inserted] = group.emplace((static_cast<uint64_t>(p) << 32) | c, static_cast<uint32_t>(surv_host.size()));
    if (inserted) {
      surv_host.push_back(uint2{static_cast<unsigned>(c), p});
      survivor_residue.push_back(i);
    }
    rep_host[i] = it->second;
  }
  survivor_count = static_cast<uint32_t>(surv_host.size());
  member_begin.assign(survivor_count + 1, 0);
  for (uint32_t i = 0; i < K; ++i) ++member_begin[rep_host[i] + 1];
  for (uint32_t s = 0; s < survivor_count; ++s) member_begin[s + 1] += member_begin[s];
  members.assign(K, 0);
  {
    std::vector<uint32_t> fill(member_begin.begin(), member_begin.end() - 1);
    for (uint32_t i = 0; i < K; ++i) members[fill[rep_host[i]]++] = i;
  }
  STATUS_TRY(survivors.Allocate(survivor_count));
  CUDA_TRY(cudaMemcpy(survivors.get(), surv_host.data(), survivor_count * sizeof(uint2), cudaMemcpyHostToDevice));
  STATUS_TRY(rep.Allocate(K));
  CUDA_TRY(cudaMemcpy(rep.get(), rep_host.data(), K * sizeof(uint32_t), cudaMemcpyHostToDevice));
  if (survivor_count <= 0xFFFF) {
    const std::vector<uint16_t> narrow(rep_host.begin(), rep_host.end());
    STATUS_TRY(rep16.Allocate(K));
    CUDA_TRY(cudaMemcpy(rep16.get(), narrow.data(), K * sizeof(uint16_t), cudaMemcpyHostToDevice));
  }

  // Tail: 2^16 exact delays from the host, the rest filled on the device.
  fast = std::make_shared<const FastDelay>(std::make_shared<const StepTable>(16),
                                           std::make_shared<const TailTable>(20));
  const size_t tail_size = size_t{1} << o.tail_bits;
  STATUS_TRY(tail.Allocate(tail_size));
  std::vector<uint16_t> base(fast->tail().delays().begin(), fast->tail().delays().begin() + (size_t{1} << kHostTailBits));
  CUDA_TRY(cudaMemcpy(tail.get(), base.data(), base.size() * 2, cudaMemcpyHostToDevice));
  STATUS_TRY(failed.Allocate(1));
  CUDA_TRY(cudaMemset(failed.get(), 0, sizeof(int)));
  CUDA_TRY(gpu::LaunchStatsFillTail(steps.get(), packed_bits, tail.get(), kHostTailBits, o.tail_bits, failed.get(),
                                    stream));
  CUDA_TRY(cudaStreamSynchronize(stream));
  int failed_host = 0;
  CUDA_TRY(cudaMemcpy(&failed_host, failed.get(), sizeof(int), cudaMemcpyDeviceToHost));
  if (failed_host != 0) return Status::Internal("GPU stats: building the device tail table failed");
  // Spot check of the device tail against the host (a cheap guard against a bad build).
  std::mt19937_64 rng(static_cast<uint64_t>(o.tail_bits) * 7919);
  for (int t = 0; t < 256; ++t) {
    const uint64_t n = (uint64_t{1} << kHostTailBits) + rng() % (tail_size - (uint64_t{1} << kHostTailBits));
    uint16_t d = 0;
    CUDA_TRY(cudaMemcpy(&d, tail.get() + n, 2, cudaMemcpyDeviceToHost));
    if (d != fast->Delay(n)) {
      return Status::Internal("GPU stats: device tail table wrong at " + std::to_string(n) + ": " + std::to_string(d) +
                              " != " + std::to_string(fast->Delay(n)));
    }
  }

  const size_t shared = gpu::StatsSharedBytes(o.step_bits, survivor_count);
  if (shared > prop.sharedMemPerBlockOptin) {
    return Status::InvalidArgument("GPU stats: k = " + std::to_string(o.sieve_bits) + " needs " +
                                   std::to_string(shared) + " bytes of shared memory, the device has " +
                                   std::to_string(prop.sharedMemPerBlockOptin));
  }
  int per_sm = 0;
  CUDA_TRY(gpu::StatsBlocksPerSm(o.block_threads, Mode(), o.step_bits, survivor_count, &per_sm));
  if (per_sm < 1) return Status::Internal("GPU stats: the kernel does not fit on an SM with this configuration");
  grid_blocks = per_sm * sms;

  for (Slot& s : slots) {
    STATUS_TRY(s.out.Allocate(kMaxLaunchBatches));
    STATUS_TRY(s.host_out.Allocate(kMaxLaunchBatches));
    STATUS_TRY(s.finish.Allocate(kFinishCapacity));
    STATUS_TRY(s.finish_count.Allocate(1));
    STATUS_TRY(s.host_finish_count.Allocate(1));
    CUDA_TRY(cudaEventCreate(&s.start));
    CUDA_TRY(cudaEventCreate(&s.stop));
    CUDA_TRY(cudaEventCreateWithFlags(&s.copied, cudaEventDisableTiming));
  }
  return Status::Ok();
}

Status GpuStats::Impl::Enqueue(Slot& slot, u128 from, u128 to, uint32_t batch, size_t first_batch) {
  const int k = options.sieve_bits;
  StatsParams p;
  p.tail = tail.get();
  p.tail_bits = options.tail_bits;
  p.steps = steps.get();
  p.global_steps = global_steps.get();
  p.step_bits = options.step_bits;
  p.survivors = survivors.get();
  p.rep = rep.get();
  p.rep16 = rep16.get();
  p.survivor_count = survivor_count;
  p.sieve_bits = k;
  const u128 first_h = from >> k;
  p.first_h_lo = Lo64(first_h);
  p.first_h_hi = Hi64(first_h);
  p.begin_offset = static_cast<uint64_t>(from & ((u128{1} << k) - 1));
  p.numbers = static_cast<uint64_t>(to - from);
  p.blocks = (p.begin_offset + p.numbers + (uint64_t{1} << k) - 1) >> k;
  p.batch_bits = __builtin_ctz(batch);
  p.out = slot.out.get();
  p.finish = slot.finish.get();
  p.finish_count = slot.finish_count.get();
  p.finish_capacity = kFinishCapacity;
  const int grid = static_cast<int>(std::min<uint64_t>(grid_blocks, p.blocks));
  CUDA_TRY(cudaMemsetAsync(slot.finish_count.get(), 0, sizeof(unsigned int), stream));
  CUDA_TRY(cudaEventRecord(slot.start, stream));
  CUDA_TRY(gpu::LaunchStats(p, options.block_threads, Mode(), grid, stream));
  CUDA_TRY(cudaEventRecord(slot.stop, stream));
  const size_t batches = static_cast<size_t>(p.numbers >> p.batch_bits);
  CUDA_TRY(cudaMemcpyAsync(slot.host_out.get(), slot.out.get(), batches * sizeof(StatsBatchOut),
                           cudaMemcpyDeviceToHost, stream));
  CUDA_TRY(cudaMemcpyAsync(slot.host_finish_count.get(), slot.finish_count.get(), sizeof(unsigned int),
                           cudaMemcpyDeviceToHost, stream));
  CUDA_TRY(cudaEventRecord(slot.copied, stream));
  slot.busy = true;
  slot.from = from;
  slot.to = to;
  slot.first_batch = first_batch;
  return Status::Ok();
}

Status GpuStats::Impl::Finish(Slot& slot, uint32_t batch, std::vector<BatchStats>* out, GpuStatsTimings* t) {
  slot.busy = false;
  CUDA_TRY(cudaEventSynchronize(slot.copied));  // not the stream: the next launch may already run
  float ms = 0;
  CUDA_TRY(cudaEventElapsedTime(&ms, slot.start, slot.stop));
  if (t != nullptr) t->kernel_seconds += ms / 1e3;
  const size_t batches = static_cast<size_t>((slot.to - slot.from) / batch);
  BatchStats* dst = out->data() + slot.first_batch;
  const unsigned int finish_count = *slot.host_finish_count.get();
  if (finish_count > kFinishCapacity) {
    // Too many walks left 128 bits for the list: redo this launch exactly on the CPU.
    std::vector<BatchStats> cpu;
    STATUS_TRY(ComputeBatchStats(*fast, slot.from, slot.to, batch, 0, &cpu));
    std::copy(cpu.begin(), cpu.end(), dst);
    if (t != nullptr) ++t->launches_redone;
    return Status::Ok();
  }
  // The kernel writes BatchStats' layout (a batch with count 0 has min 0xFFFF, max 0, which
  // AddDelay overwrites with its first delay), so the results are copied as they are.
  static_assert(sizeof(StatsBatchOut) == sizeof(BatchStats) && offsetof(StatsBatchOut, max) == offsetof(BatchStats, max) &&
                offsetof(StatsBatchOut, count) == offsetof(BatchStats, count) &&
                offsetof(StatsBatchOut, sum) == offsetof(BatchStats, sum));
  std::memcpy(static_cast<void*>(dst), slot.host_out.get(), batches * sizeof(BatchStats));
  if (finish_count > 0) {
    std::vector<StatsFinishEntry> entries(finish_count);
    CUDA_TRY(cudaMemcpy(entries.data(), slot.finish.get(), finish_count * sizeof(StatsFinishEntry),
                        cudaMemcpyDeviceToHost));
    const int k = options.sieve_bits;
    for (const StatsFinishEntry& e : entries) {
      const u128 block_start = MakeU128(e.h_hi, e.h_lo) << k;
      const uint32_t d = fast->Delay(block_start + survivor_residue[e.survivor]);
      for (uint32_t m = member_begin[e.survivor]; m < member_begin[e.survivor + 1]; ++m) {
        const u128 n = block_start + members[m];
        if (n < slot.from || n >= slot.to) continue;
        AddDelay(&dst[static_cast<size_t>((n - slot.from) / batch)], d);
      }
    }
    if (t != nullptr) t->host_finished += finish_count;
  }
  for (size_t b = 0; b < batches; ++b) {
    if (dst[b].count == batch && (b != 0 || slot.from != 0)) continue;  // the common case, cheaply
    const u128 start = slot.from + static_cast<u128>(b) * batch;
    if (dst[b].count != BatchCount(start, batch)) {
      return Status::Internal("GPU stats: batch at " + ToDecimal(start) + " counted " + std::to_string(dst[b].count) +
                              " numbers, expected " + std::to_string(BatchCount(start, batch)));
    }
  }
  return Status::Ok();
}

GpuStats::GpuStats(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GpuStats::~GpuStats() = default;

bool GpuStats::DeviceAvailable() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

Status GpuStats::Create(const GpuStatsOptions& options, std::unique_ptr<GpuStats>* out) {
  if (!DeviceAvailable()) return Status::FailedPrecondition("no CUDA device");
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  STATUS_TRY(impl->Build());
  out->reset(new GpuStats(std::move(impl)));
  return Status::Ok();
}

Status GpuStats::CheckBatch(uint32_t batch) const {
  const uint32_t K = uint32_t{1} << impl_->options.sieve_bits;
  if (batch < 32 || batch > K || (batch & (batch - 1)) != 0) {
    return Status::InvalidArgument("the GPU backend needs a power-of-two batch size between 32 and " +
                                   std::to_string(K) + ", got " + std::to_string(batch));
  }
  return Status::Ok();
}

Status GpuStats::Compute(u128 from, u128 to, uint32_t batch, std::vector<BatchStats>* out, GpuStatsTimings* timings) {
  const auto t0 = std::chrono::steady_clock::now();
  for (Slot& slot : impl_->slots) {  // launches left by a call that failed half way
    if (slot.busy) CUDA_TRY(cudaEventSynchronize(slot.copied));
    slot.busy = false;
  }
  STATUS_TRY(ValidateStatsRange(from, to, batch));
  STATUS_TRY(CheckBatch(batch));
  const u128 total_batches = (to - from) / batch;
  if (total_batches > (u128{1} << 40)) return Status::InvalidArgument("range too large: more than 2^40 batches");
  out->assign(static_cast<size_t>(total_batches), BatchStats{});
  GpuStatsTimings local;
  GpuStatsTimings* t = timings != nullptr ? timings : &local;
  *t = GpuStatsTimings{};
  const uint64_t launch_batches =
      std::max<uint64_t>(1, std::min<uint64_t>(kMaxLaunchBatches, impl_->options.launch_numbers / batch));
  const u128 launch_numbers = static_cast<u128>(launch_batches) * batch;
  size_t index = 0;
  size_t first_batch = 0;
  for (u128 pos = from; pos < to; ++index) {
    const u128 end = to - pos > launch_numbers ? pos + launch_numbers : to;
    Slot& slot = impl_->slots[index % 2];
    if (slot.busy) STATUS_TRY(impl_->Finish(slot, batch, out, t));
    STATUS_TRY(impl_->Enqueue(slot, pos, end, batch, first_batch));
    first_batch += static_cast<size_t>((end - pos) / batch);
    pos = end;
  }
  for (size_t i = 0; i < 2; ++i) {
    Slot& slot = impl_->slots[(index + i) % 2];  // the older launch first
    if (slot.busy) STATUS_TRY(impl_->Finish(slot, batch, out, t));
  }
  t->total_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return Status::Ok();
}

std::string GpuStats::Describe() const {
  const GpuStatsOptions& o = impl_->options;
  return "gpu " + std::to_string(o.device) + " (" + impl_->device_name + "), k=" + std::to_string(o.sieve_bits) +
         " (" + std::to_string(impl_->survivor_count) + " groups), S=" + std::to_string(o.step_bits) +
         ", T=" + std::to_string(o.tail_bits) + ", " + std::to_string(o.block_threads) + " threads x " +
         std::to_string(impl_->grid_blocks) + " blocks" + (o.refill ? ", lane refill" : o.pairs ? ", two walks per thread" : "");
}

uint32_t GpuStats::survivor_count() const { return impl_->survivor_count; }

}  // namespace collatz
