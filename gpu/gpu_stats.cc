#include "gpu/gpu_stats.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <random>
#include <unordered_map>

#include <sys/mman.h>

#include <thread>

#include <cuda_runtime.h>

#include "core/delay.h"
#include "core/step_table.h"
#include "core/tail_table.h"
#include "gpu/cuda_memory.h"
#include "gpu/fill_tail.h"
#include "gpu/stats_kernel.h"
#include "core/thread_count.h"

namespace collatz {
namespace {

using gpu::StatsBatchOut;
using gpu::StatsFinishEntry;
using gpu::StatsParams;

constexpr uint64_t kMaxLaunchBatches = uint64_t{1} << 22;  // 64 MiB of results per launch
constexpr uint32_t kFinishCapacity = uint32_t{1} << 16;
constexpr int kHostTailBits = 16;  // the device tail grows from this many bits built on the host
constexpr int kSlots = 3;
#ifdef MADV_POPULATE_WRITE
constexpr int kMadvPopulateWrite = MADV_POPULATE_WRITE;
#else
constexpr int kMadvPopulateWrite = 23;  // Linux 5.14; older kernels refuse it (EINVAL) and nothing is done
#endif
constexpr int kMaxTailBits = 34;   // 32 GiB of 2-byte delays
constexpr int kAutoTailBits = 34;  // tail_bits = 0: at most this (the fastest measured, docs/PERFORMANCE.md)          // launches in flight: one computing, results of others coming back or handed over

// One launch in flight: its results come back into pinned memory (on the copy stream, so the
// next kernel starts at once) while the host hands over an earlier one.
struct Slot {
  DeviceArray<StatsBatchOut> out;
  PinnedArray<StatsBatchOut> host_out;
  DeviceArray<StatsFinishEntry> finish;
  DeviceArray<unsigned int> finish_count;
  DeviceArray<unsigned long long> counted;
  PinnedArray<unsigned int> host_finish_count;
  PinnedArray<unsigned long long> host_counted;
  cudaEvent_t start = nullptr, stop = nullptr, copied = nullptr;
  bool busy = false;
  u128 from = 0, to = 0;  // the launch's numbers
};

}  // namespace

struct GpuStats::Impl {
  GpuStatsOptions options;
  std::string device_name;
  int sms = 0;
  int grid_blocks = 0;
  cudaStream_t stream = nullptr;       // kernels
  cudaStream_t copy_stream = nullptr;  // results back to the host
  DeviceArray<uint16_t> tail;
  DeviceArray<uint32_t> steps;
  DeviceArray<uint4> global_steps;
  DeviceArray<uint4> survivors;
  DeviceArray<uint32_t> rep;
  DeviceArray<uint16_t> rep16;  // when survivor_count <= 65535
  DeviceArray<int> failed;
  uint32_t survivor_count = 0;
  std::vector<uint32_t> survivor_residue;  // host: residue of each survivor
  std::vector<uint32_t> member_begin;      // host CSR: residues of survivor s are
  std::vector<uint32_t> members;           //   members[member_begin[s] .. member_begin[s + 1])
  std::shared_ptr<const FastDelay> fast;   // host: overflow finishing and fallback
  Slot slots[kSlots];

  ~Impl() {
    for (Slot& s : slots) {
      if (s.start != nullptr) cudaEventDestroy(s.start);
      if (s.stop != nullptr) cudaEventDestroy(s.stop);
      if (s.copied != nullptr) cudaEventDestroy(s.copied);
    }
    if (stream != nullptr) cudaStreamDestroy(stream);
    if (copy_stream != nullptr) cudaStreamDestroy(copy_stream);
  }

  Status Build();
  int Mode() const {
    return options.refill ? gpu::kStatsModeRefill : options.pairs ? gpu::kStatsModePairs : gpu::kStatsModeStride;
  }
  int Variant() const {
    if (Mode() != gpu::kStatsModeStride) return gpu::kStatsFastReduce;
    return (options.prefetch_tail ? gpu::kStatsPrefetchTail : 0) | (options.fast_steps ? gpu::kStatsFast64 : 0) |
           (options.fast_reduce ? gpu::kStatsFastReduce : 0);
  }
  Status Enqueue(Slot& slot, u128 from, u128 to, uint32_t batch);
  Status Finish(Slot& slot, uint32_t batch, const GpuStats::Sink& sink, GpuStatsTimings* t);
};

Status GpuStats::Impl::Build() {
  const GpuStatsOptions& o = options;
  if (o.sieve_bits < 5 || o.sieve_bits > gpu::kStatsMaxSieveBits) {
    return Status::InvalidArgument("GPU stats: sieve bits must be in 5..20");
  }
  if (o.step_bits < 1 || o.step_bits > gpu::kStatsMaxStepBits) {
    return Status::InvalidArgument("GPU stats: step bits must be in 1..20");
  }
  const int min_tail_bits = std::max({o.sieve_bits, o.step_bits, kHostTailBits});
  if (o.tail_bits != 0 && (o.tail_bits < min_tail_bits || o.tail_bits > kMaxTailBits)) {
    return Status::InvalidArgument("GPU stats: tail bits must be 0 (automatic) or in max(16, sieve bits, step bits)..34");
  }
  if (o.block_threads != 256 && o.block_threads != 512 && o.block_threads != 1024) {
    return Status::InvalidArgument("GPU stats: block threads must be 256, 512 or 1024");
  }
  if (!gpu::StatsVariantAvailable(Mode(), Variant())) {
    return Status::InvalidArgument("GPU stats: prefetch_tail and fast_steps need fast_reduce");
  }
  CUDA_TRY(cudaSetDevice(o.device));
  cudaDeviceProp prop;
  CUDA_TRY(cudaGetDeviceProperties(&prop, o.device));
  device_name = prop.name;
  sms = prop.multiProcessorCount;
  CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CUDA_TRY(cudaStreamCreateWithFlags(&copy_stream, cudaStreamNonBlocking));
  // The tail takes 2^(T+1) bytes: automatic T is the largest up to kAutoTailBits whose table
  // fits in half the free device memory; an explicit T must leave 1 GiB free.
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (options.tail_bits == 0) {
    int t = kAutoTailBits;
    while (t > min_tail_bits && (size_t{2} << t) > free_bytes / 2) --t;
    options.tail_bits = t;
  } else if ((size_t{2} << o.tail_bits) + (size_t{1} << 30) > free_bytes) {
    return Status::InvalidArgument("GPU stats: a " + std::to_string(o.tail_bits) + "-bit tail needs " +
                                   std::to_string((size_t{2} << o.tail_bits) >> 20) + " MiB of device memory, " +
                                   std::to_string(free_bytes >> 20) + " MiB are free");
  }

  // Step tables: c | p << 26 for shared memory, {c, 3^p, 4 (S + p), 0} in global memory (one
  // 16-byte load per step).
  const int packed_bits = std::min(o.step_bits, gpu::kStatsMaxSharedStepBits);
  const StepTable packed_table(packed_bits);
  std::vector<uint32_t> packed(size_t{1} << packed_bits);
  for (size_t i = 0; i < packed.size(); ++i) packed[i] = packed_table.c(i) | (packed_table.p(i) << 26);
  STATUS_TRY(steps.Allocate(packed.size()));
  CUDA_TRY(cudaMemcpy(steps.get(), packed.data(), packed.size() * 4, cudaMemcpyHostToDevice));
  if (o.step_bits > gpu::kStatsMaxSharedStepBits) {
    const StepTable wide(o.step_bits);
    std::vector<uint4> entries(size_t{1} << o.step_bits);
    for (size_t i = 0; i < entries.size(); ++i) {
      entries[i] = uint4{wide.c(i), static_cast<unsigned>(kPow3[wide.p(i)]), 4 * (static_cast<unsigned>(o.step_bits) + wide.p(i)), 0};
    }
    STATUS_TRY(global_steps.Upload(entries));
  }

  // Join groups of all residues i < 2^k (evens included): equal (p, c) after k T-steps. A group
  // is walked from its smallest residue; groups are numbered in ascending residue.
  const uint32_t K = uint32_t{1} << o.sieve_bits;
  std::vector<uint32_t> rep_host(K);
  std::vector<uint4> surv_host;  // {c, 3^p, k + p, 0}
  std::unordered_map<uint64_t, uint32_t> group;
  group.reserve(K);
  for (uint32_t i = 0; i < K; ++i) {
    uint32_t p = 0;
    uint64_t c = 0;
    TStepsOfResidue(i, o.sieve_bits, &p, &c);
    const auto [it, inserted] = group.emplace((static_cast<uint64_t>(p) << 32) | c, static_cast<uint32_t>(surv_host.size()));
    if (inserted) {
      surv_host.push_back(uint4{static_cast<unsigned>(c), static_cast<unsigned>(kPow3[p]),
                                static_cast<unsigned>(o.sieve_bits) + p, 0});
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
  STATUS_TRY(survivors.Upload(surv_host));
  STATUS_TRY(rep.Upload(rep_host));
  if (survivor_count <= 0xFFFF) {
    const std::vector<uint16_t> narrow(rep_host.begin(), rep_host.end());
    STATUS_TRY(rep16.Upload(narrow));
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
  // The search engine's tail fill (gpu/fill_tail.h) walks with its own step table entries.
  DeviceArray<gpu::StepEntry> fill_steps;
  STATUS_TRY(fill_steps.Upload(gpu::MakeStepEntries(packed_bits)));
  // cudaMemcpy from pageable memory may return before its data reaches the device, and the
  // kernels run on non-blocking streams, which do not wait for the legacy stream: without
  // this, the tail could be grown from base entries not yet copied (seen on an H100: the
  // spot check below failed once).
  CUDA_TRY(cudaDeviceSynchronize());
  CUDA_TRY(gpu::LaunchFillTail(fill_steps.get(), packed_bits, tail.get(), kHostTailBits, o.tail_bits, failed.get(),
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
  CUDA_TRY(gpu::StatsBlocksPerSm(o.block_threads, Mode(), Variant(), o.step_bits, survivor_count, &per_sm));
  if (per_sm < 1) return Status::Internal("GPU stats: the kernel does not fit on an SM with this configuration");
  grid_blocks = per_sm * sms;

  for (Slot& s : slots) {
    STATUS_TRY(s.out.Allocate(kMaxLaunchBatches));
    STATUS_TRY(s.host_out.Allocate(kMaxLaunchBatches));
    STATUS_TRY(s.finish.Allocate(kFinishCapacity));
    STATUS_TRY(s.finish_count.Allocate(1));
    STATUS_TRY(s.counted.Allocate(1));
    STATUS_TRY(s.host_finish_count.Allocate(1));
    STATUS_TRY(s.host_counted.Allocate(1));
    CUDA_TRY(cudaEventCreate(&s.start));
    CUDA_TRY(cudaEventCreate(&s.stop));
    CUDA_TRY(cudaEventCreateWithFlags(&s.copied, cudaEventDisableTiming));
  }
  return Status::Ok();
}

Status GpuStats::Impl::Enqueue(Slot& slot, u128 from, u128 to, uint32_t batch) {
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
  p.counted = slot.counted.get();
  p.finish = slot.finish.get();
  p.finish_count = slot.finish_count.get();
  p.finish_capacity = kFinishCapacity;
  p.safe_hi = gpu::StatsSafeHigh(options.step_bits);
  const int grid = static_cast<int>(std::min<uint64_t>(grid_blocks, p.blocks));
  CUDA_TRY(cudaMemsetAsync(slot.finish_count.get(), 0, sizeof(unsigned int), stream));
  CUDA_TRY(cudaMemsetAsync(slot.counted.get(), 0, sizeof(unsigned long long), stream));
  CUDA_TRY(cudaEventRecord(slot.start, stream));
  CUDA_TRY(gpu::LaunchStats(p, options.block_threads, Mode(), Variant(), grid, stream));
  CUDA_TRY(cudaEventRecord(slot.stop, stream));
  // The copies go on their own stream, so the next kernel does not wait for them.
  CUDA_TRY(cudaStreamWaitEvent(copy_stream, slot.stop, 0));
  const size_t batches = static_cast<size_t>(p.numbers >> p.batch_bits);
  CUDA_TRY(cudaMemcpyAsync(slot.host_out.get(), slot.out.get(), batches * sizeof(StatsBatchOut),
                           cudaMemcpyDeviceToHost, copy_stream));
  CUDA_TRY(cudaMemcpyAsync(slot.host_finish_count.get(), slot.finish_count.get(), sizeof(unsigned int),
                           cudaMemcpyDeviceToHost, copy_stream));
  CUDA_TRY(cudaMemcpyAsync(slot.host_counted.get(), slot.counted.get(), sizeof(unsigned long long),
                           cudaMemcpyDeviceToHost, copy_stream));
  CUDA_TRY(cudaEventRecord(slot.copied, copy_stream));
  slot.busy = true;
  slot.from = from;
  slot.to = to;
  return Status::Ok();
}

Status GpuStats::Impl::Finish(Slot& slot, uint32_t batch, const GpuStats::Sink& sink, GpuStatsTimings* t) {
  slot.busy = false;
  CUDA_TRY(cudaEventSynchronize(slot.copied));  // not the streams: later launches may already run
  float ms = 0;
  CUDA_TRY(cudaEventElapsedTime(&ms, slot.start, slot.stop));
  t->kernel_seconds += ms / 1e3;
  const size_t batches = static_cast<size_t>((slot.to - slot.from) / batch);
  const unsigned int finish_count = *slot.host_finish_count.get();
  if (finish_count > kFinishCapacity) {
    // Too many walks left 128 bits for the list: redo this launch exactly on the CPU.
    std::vector<BatchStats> cpu;
    STATUS_TRY(ComputeBatchStats(*fast, slot.from, slot.to, batch, 0, &cpu));
    ++t->launches_redone;
    return sink(slot.from, cpu.data(), cpu.size());
  }
  // The kernel writes BatchStats' layout (a batch with count 0 has min 0xFFFF, max 0, which
  // AddDelay overwrites with its first delay), so the results are used where they are.
  static_assert(sizeof(StatsBatchOut) == sizeof(BatchStats) && offsetof(StatsBatchOut, max) == offsetof(BatchStats, max) &&
                offsetof(StatsBatchOut, count) == offsetof(BatchStats, count) &&
                offsetof(StatsBatchOut, sum) == offsetof(BatchStats, sum));
  BatchStats* res = reinterpret_cast<BatchStats*>(slot.host_out.get());
  uint64_t host_counted = 0;
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
        if (n < slot.from || n >= slot.to || n == 0) continue;
        AddDelay(&res[static_cast<size_t>((n - slot.from) / batch)], d);
        ++host_counted;
      }
    }
    t->host_finished += finish_count;
  }
  // Every number of the launch is counted exactly once (N = 0 never): the kernel's total plus
  // the host's. Batch by batch it is checked where the host added delays and at N = 0.
  const uint64_t expected = static_cast<uint64_t>(slot.to - slot.from) - (slot.from == 0 ? 1 : 0);
  if (*slot.host_counted.get() + host_counted != expected) {
    return Status::Internal("GPU stats: the launch at " + ToDecimal(slot.from) + " counted " +
                            std::to_string(*slot.host_counted.get()) + " + " + std::to_string(host_counted) +
                            " numbers, expected " + std::to_string(expected));
  }
  for (size_t b = 0; b < batches; ++b) {
    if (finish_count == 0 && b > 0) break;
    const u128 start = slot.from + static_cast<u128>(b) * batch;
    if (res[b].count != BatchCount(start, batch)) {
      return Status::Internal("GPU stats: batch at " + ToDecimal(start) + " counted " + std::to_string(res[b].count) +
                              " numbers, expected " + std::to_string(BatchCount(start, batch)));
    }
  }
  return sink(slot.from, res, batches);
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

Status GpuStats::ComputeStream(u128 from, u128 to, uint32_t batch, const Sink& sink, GpuStatsTimings* timings) {
  const auto t0 = std::chrono::steady_clock::now();
  for (Slot& slot : impl_->slots) {  // launches left by a call that failed half way
    if (slot.busy) CUDA_TRY(cudaEventSynchronize(slot.copied));
    slot.busy = false;
  }
  STATUS_TRY(ValidateStatsRange(from, to, batch));
  STATUS_TRY(CheckBatch(batch));
  GpuStatsTimings local;
  GpuStatsTimings* t = timings != nullptr ? timings : &local;
  *t = GpuStatsTimings{};
  // Launches of whole rounds of the persistent grid (every CTA takes the same number of
  // blocks), up to launch_numbers and 2^22 batches.
  const int k = impl_->options.sieve_bits;
  const uint64_t max_numbers = std::min<uint64_t>(impl_->options.launch_numbers, kMaxLaunchBatches * batch);
  const uint64_t round_numbers = static_cast<uint64_t>(impl_->grid_blocks) << k;
  const uint64_t launch_numbers =
      max_numbers >= round_numbers ? max_numbers / round_numbers * round_numbers : std::max<uint64_t>(batch, max_numbers / batch * batch);
  size_t index = 0;
  for (u128 pos = from; pos < to; ++index) {
    const u128 end = to - pos > launch_numbers ? pos + launch_numbers : to;
    Slot& slot = impl_->slots[index % kSlots];
    if (slot.busy) STATUS_TRY(impl_->Finish(slot, batch, sink, t));
    STATUS_TRY(impl_->Enqueue(slot, pos, end, batch));
    pos = end;
  }
  for (size_t i = 0; i < kSlots; ++i) {
    Slot& slot = impl_->slots[(index + i) % kSlots];  // the oldest launch first
    if (slot.busy) STATUS_TRY(impl_->Finish(slot, batch, sink, t));
  }
  t->total_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return Status::Ok();
}

Status GpuStats::Compute(u128 from, u128 to, uint32_t batch, std::vector<BatchStats>* out, GpuStatsTimings* timings) {
  STATUS_TRY(ValidateStatsRange(from, to, batch));
  STATUS_TRY(CheckBatch(batch));
  const u128 total_batches = (to - from) / batch;
  if (total_batches > (u128{1} << 40)) return Status::InvalidArgument("range too large: more than 2^40 batches");
  const size_t n = static_cast<size_t>(total_batches);
  // Results are appended launch by launch as they come back: the vector's pages are first
  // touched by that copy (no zero-fill pass), in huge pages where the kernel gives them.
  out->clear();
  out->reserve(n);
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(out->data()) + 4095) & ~uintptr_t{4095};
  const uintptr_t end = reinterpret_cast<uintptr_t>(out->data() + n);
  std::vector<std::thread> faulters;
  if (end > begin + (uintptr_t{256} << 20)) {
    // Large results: huge pages where the kernel gives them, and helper threads that map the
    // pages ahead of the copies (a single thread first-touching the pages cannot keep up with
    // the GPU; the copies themselves can).
    madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
    const uintptr_t chunk = uintptr_t{32} << 20;
    const size_t chunks = (end - begin + chunk - 1) / chunk;
    const size_t threads = std::clamp<size_t>(static_cast<size_t>(ResolveThreadCount(0)) / 2, 1, 8);
    for (size_t t = 0; t < std::min(threads, chunks); ++t) {
      faulters.emplace_back([=] {
        for (size_t c = t; c < chunks; c += threads) {
          const uintptr_t a = begin + c * chunk;
          if (madvise(reinterpret_cast<void*>(a), std::min(chunk, end - a), kMadvPopulateWrite) != 0) return;
        }
      });
    }
  }
  const Status st = ComputeStream(
      from, to, batch,
      [out](u128, const BatchStats* batches, size_t count) {
        out->insert(out->end(), batches, batches + count);
        return Status::Ok();
      },
      timings);
  for (std::thread& t : faulters) t.join();
  if (!st.ok()) out->clear();
  return st;
}

std::string GpuStats::Describe() const {
  const GpuStatsOptions& o = impl_->options;
  return "gpu " + std::to_string(o.device) + " (" + impl_->device_name + "), k=" + std::to_string(o.sieve_bits) +
         " (" + std::to_string(impl_->survivor_count) + " groups), S=" + std::to_string(o.step_bits) +
         ", T=" + std::to_string(o.tail_bits) + ", " + std::to_string(o.block_threads) + " threads x " +
         std::to_string(impl_->grid_blocks) + " blocks" +
         (o.refill ? ", lane refill"
          : o.pairs ? ", two walks per thread"
                    : std::string(o.prefetch_tail ? ", prefetch" : "") + (o.fast_steps ? ", 64-bit steps" : "") +
                          (o.fast_reduce ? ", fast reduce" : "")) +
         "";
}

uint32_t GpuStats::survivor_count() const { return impl_->survivor_count; }

}  // namespace collatz
