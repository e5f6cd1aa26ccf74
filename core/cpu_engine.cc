#include "core/cpu_engine.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "core/early_termination.h"
#include "core/thread_count.h"

namespace collatz {

CpuEngine::CpuEngine(std::shared_ptr<const SearchTables> tables, CpuEngineOptions options)
    : tables_(std::move(tables)), options_(options) {
  threads_ = ResolveThreadCount(options_.threads);
}

std::string CpuEngine::Describe() const {
  return "cpu (" + std::to_string(threads_) + " threads, " + std::to_string(tables_->sieve->bits()) + "-bit sieve)";
}

Status CpuEngine::Search(const UnitSpec& spec, UnitResult* result, const ProgressFn& progress,
                         const std::atomic<bool>* cancel) {
  Status st = ValidateUnitSpec(spec);
  if (!st.ok()) return st;
  if (spec.kinds == Kinds::kDelay && tables_->delay_offsets == nullptr) {
    return Status::FailedPrecondition("CPU engine: these search tables have no mod-9 offset table (GPU tables)");
  }
  const EarlyTermination et(spec);
  const u128 total = spec.end - spec.begin;
  // Enough chunks for load balance, few enough that their results stay small.
  u128 chunk = options_.chunk_numbers;
  if (spec.kinds == Kinds::kDelay && et.enabled()) {
    const u128 balanced = total / (static_cast<u128>(threads_) * CpuEngineOptions::kChunksPerThread);
    chunk = std::max<u128>(chunk, std::min<u128>(options_.EntryStopChunkNumbers(tables_->sieve->bits()), balanced));
  }
  chunk = std::max<u128>(chunk, total / (static_cast<u128>(threads_) * 256) + 1);
  const u128 chunks128 = (total + chunk - 1) / chunk;
  if (chunks128 > (u128{1} << 24)) return Status::InvalidArgument("unit too large for the CPU engine");
  const size_t chunks = static_cast<size_t>(chunks128);

  std::vector<UnitResult> parts(chunks);
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> done{0};
  std::atomic<bool> failed{false};
  std::string failure;
  std::mutex failure_mu;
  int finished_workers = 0;
  std::mutex finished_mu;
  std::condition_variable finished_cv;
  auto worker = [&]() {
    try {
      for (size_t i; (i = next.fetch_add(1)) < chunks;) {
        if ((cancel != nullptr && cancel->load()) || failed.load()) break;
        const u128 from = spec.begin + chunk * i;
        const u128 to = std::min<u128>(spec.end, from + chunk);
        parts[i] = SearchRange(*tables_, spec, et, from, to, &done, cancel, nullptr, options_.entry_stop_min_blocks);
      }
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(failure_mu);
      failure = e.what();
      failed = true;
    }
    {
      // Wake the reporting thread at once, so a short unit does not wait out its interval.
      std::lock_guard<std::mutex> lock(finished_mu);
      ++finished_workers;
    }
    finished_cv.notify_one();
  };
  std::vector<std::thread> pool;
  const int n_threads = static_cast<int>(std::min<size_t>(threads_, chunks));
  for (int t = 0; t < n_threads; ++t) pool.emplace_back(worker);
  if (progress) {
    const uint64_t total64 = total > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(total);
    std::unique_lock<std::mutex> lock(finished_mu);
    while (finished_workers < n_threads) {
      lock.unlock();
      progress(done.load(), total64);
      lock.lock();
      finished_cv.wait_for(lock, std::chrono::milliseconds(200), [&] { return finished_workers == n_threads; });
    }
  }
  for (auto& th : pool) th.join();
  if (failed) return Status::Internal("CPU engine failed: " + failure);
  if (cancel != nullptr && cancel->load()) return Status::Unavailable("search cancelled");
  if (progress) {
    progress(static_cast<uint64_t>(std::min<u128>(total, UINT64_MAX)), static_cast<uint64_t>(std::min<u128>(total, UINT64_MAX)));
  }
  UnitResultCombiner combiner(spec.floor);
  for (const UnitResult& part : parts) combiner.Add(part);
  *result = combiner.Finish();
  return Status::Ok();
}

}  // namespace collatz
