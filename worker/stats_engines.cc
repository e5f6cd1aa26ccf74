#include "worker/stats_engines.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <mutex>

#if COLLATZ_WORKER_WITH_GPU_STATS
#include "gpu/gpu_stats.h"
#endif

namespace collatz::worker {

namespace {

// Runs `one` over batch-aligned chunks of about `chunk_numbers`, appending the batches.
template <typename Fn>
Status ComputeInChunks(u128 from, u128 to, uint32_t batch, u128 chunk_numbers, std::vector<BatchStats>* out,
                       std::atomic<uint64_t>* done, const std::atomic<bool>* cancel, Fn one) {
  Status st = ValidateStatsRange(from, to, batch);
  if (!st.ok()) return st;
  const u128 chunk = std::max<u128>(1, chunk_numbers / batch) * batch;
  out->clear();
  out->reserve(static_cast<size_t>((to - from) / batch));
  std::vector<BatchStats> part;
  for (u128 at = from; at < to;) {
    if (cancel != nullptr && cancel->load()) return Status::Unavailable("cancelled");
    const u128 next = to - at > chunk ? at + chunk : to;
    if (!(st = one(at, next, &part)).ok()) return st;
    if (static_cast<u128>(part.size()) != (next - at) / batch) return Status::Internal("engine returned a wrong batch count");
    out->insert(out->end(), part.begin(), part.end());
    if (done != nullptr) done->fetch_add(static_cast<uint64_t>(next - at));
    at = next;
  }
  return Status::Ok();
}

class CpuStatsEngine : public StatsEngine {
 public:
  CpuStatsEngine(std::shared_ptr<const FastDelay> delay, int threads, u128 chunk_numbers)
      : delay_(std::move(delay)), threads_(threads), chunk_numbers_(chunk_numbers) {}
  Status Compute(u128 from, u128 to, uint32_t batch, std::vector<BatchStats>* out, std::atomic<uint64_t>* done,
                 const std::atomic<bool>* cancel) override {
    return ComputeInChunks(from, to, batch, chunk_numbers_, out, done, cancel,
                           [&](u128 a, u128 b, std::vector<BatchStats>* part) {
                             return ComputeBatchStats(*delay_, a, b, batch, threads_, part);
                           });
  }
  std::string Describe() const override {
    return "cpu stats (" + (threads_ == 0 ? std::string("all cores") : std::to_string(threads_) + " threads") + ")";
  }

 private:
  std::shared_ptr<const FastDelay> delay_;
  int threads_;
  u128 chunk_numbers_;
};

#if COLLATZ_WORKER_WITH_GPU_STATS
class GpuStatsEngine : public StatsEngine {
 public:
  GpuStatsEngine(int device, std::shared_ptr<const FastDelay> delay, int cpu_threads)
      : device_(device), cpu_(std::move(delay), cpu_threads, u128{1} << 24) {}
  Status Compute(u128 from, u128 to, uint32_t batch, std::vector<BatchStats>* out, std::atomic<uint64_t>* done,
                 const std::atomic<bool>* cancel) override {
    GpuStats* gpu = Gpu();
    if (gpu == nullptr) return cpu_.Compute(from, to, batch, out, done, cancel);
    if (Status bs = gpu->CheckBatch(batch); !bs.ok()) {
      spdlog::warn("gpu{} stats: {}; this unit runs on the CPU", device_, bs.message());
      return cpu_.Compute(from, to, batch, out, done, cancel);
    }
    return ComputeInChunks(from, to, batch, u128{1} << 32, out, done, cancel,
                           [&](u128 a, u128 b, std::vector<BatchStats>* part) { return gpu->Compute(a, b, batch, part); });
  }
  std::string Describe() const override {
    std::lock_guard<std::mutex> lock(mu_);
    if (gpu_ != nullptr) return gpu_->Describe();
    return failed_ ? "gpu" + std::to_string(device_) + " stats unavailable, " + cpu_.Describe()
                   : "gpu" + std::to_string(device_) + " stats (not started)";
  }

 private:
  // The engine, created at the first unit (its device tables are large); nullptr after a failure.
  GpuStats* Gpu() {
    std::lock_guard<std::mutex> lock(mu_);
    if (gpu_ == nullptr && !failed_) {
      GpuStatsOptions options;
      options.device = device_;
      Status st = GpuStats::Create(options, &gpu_);
      if (st.ok()) st = KnownAnswerCheck();
      if (!st.ok()) {
        failed_ = true;
        gpu_.reset();
        spdlog::error("gpu{} stats engine cannot start ({}); stats units of this lane run on the CPU", device_,
                      st.message());
      } else {
        spdlog::info("gpu{} stats engine ready: {}", device_, gpu_->Describe());
      }
    }
    return gpu_.get();
  }

  // The GPU's batches of a small range above 2^32 equal the CPU's (the server audits every
  // result too; this keeps a broken device from being flagged for it).
  Status KnownAnswerCheck() {
    const u128 from = Pow2(40), to = Pow2(40) + (u128{1} << 16);
    std::vector<BatchStats> gpu, cpu;
    Status st = gpu_->Compute(from, to, 1024, &gpu);
    if (!st.ok()) return st;
    if (!(st = cpu_.Compute(from, to, 1024, &cpu, nullptr, nullptr)).ok()) return st;
    if (gpu != cpu) return Status::Internal("known-answer check: GPU batches differ from the CPU's on [2^40, 2^40+2^16)");
    return Status::Ok();
  }

  int device_;
  CpuStatsEngine cpu_;
  mutable std::mutex mu_;
  std::unique_ptr<GpuStats> gpu_;
  bool failed_ = false;
};
#endif

}  // namespace

std::unique_ptr<StatsEngine> MakeCpuStatsEngine(std::shared_ptr<const FastDelay> delay, int threads,
                                                u128 chunk_numbers) {
  return std::make_unique<CpuStatsEngine>(std::move(delay), threads, chunk_numbers);
}

Status MakeGpuStatsEngine(int device, std::shared_ptr<const FastDelay> delay, int cpu_threads,
                          std::unique_ptr<StatsEngine>* out) {
#if COLLATZ_WORKER_WITH_GPU_STATS
  *out = std::make_unique<GpuStatsEngine>(device, std::move(delay), cpu_threads);
  return Status::Ok();
#else
  (void)device;
  (void)delay;
  (void)cpu_threads;
  (void)out;
  return Status::FailedPrecondition("this build has no GPU stats engine");
#endif
}

bool BuildHasGpuStats() { return COLLATZ_WORKER_WITH_GPU_STATS != 0; }

}  // namespace collatz::worker
