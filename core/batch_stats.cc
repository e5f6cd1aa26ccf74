#include "core/batch_stats.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "core/thread_count.h"

namespace collatz {

Status ValidateStatsRange(u128 from, u128 to, uint32_t batch) {
  if (batch < kMinStatsBatch || batch > kMaxStatsBatch) {
    return Status::InvalidArgument("batch size must be between " + std::to_string(kMinStatsBatch) + " and " +
                                   std::to_string(kMaxStatsBatch) + ", got " + std::to_string(batch));
  }
  if (from % batch != 0) {
    return Status::InvalidArgument("range start " + ToDecimal(from) + " is not a multiple of the batch size " +
                                   std::to_string(batch));
  }
  if (to % batch != 0) {
    return Status::InvalidArgument("range end " + ToDecimal(to) + " is not a multiple of the batch size " +
                                   std::to_string(batch));
  }
  if (from >= to) return Status::InvalidArgument("empty range: start " + ToDecimal(from) + " >= end " + ToDecimal(to));
  return Status::Ok();
}

namespace {

template <typename DelayFn>
BatchStats OneBatch(u128 start, uint32_t batch, const DelayFn& delay) {
  BatchStats s;
  for (uint32_t j = start == 0 ? 1 : 0; j < batch; ++j) AddDelay(&s, delay(start + j));
  return s;
}

Status CheckedBatchCount(u128 from, u128 to, uint32_t batch, size_t* count) {
  Status st = ValidateStatsRange(from, to, batch);
  if (!st.ok()) return st;
  const u128 n = (to - from) / batch;
  if (n > (u128{1} << 40)) return Status::InvalidArgument("range too large: more than 2^40 batches");
  *count = static_cast<size_t>(n);
  return Status::Ok();
}

}  // namespace

Status ComputeBatchStats(const FastDelay& delay, u128 from, u128 to, uint32_t batch, int threads,
                         std::vector<BatchStats>* out) {
  size_t batches = 0;
  Status st = CheckedBatchCount(from, to, batch, &batches);
  if (!st.ok()) return st;
  out->assign(batches, BatchStats{});
  threads = ResolveThreadCount(threads);
  // Chunks of whole batches handed out dynamically: delays vary, so static splits idle.
  const size_t per_chunk = std::max<size_t>(1, (size_t{1} << 16) / batch);
  const size_t chunks = (batches + per_chunk - 1) / per_chunk;
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::string failure;
  std::mutex failure_mu;
  auto fast = [&delay](u128 n) { return delay.Delay(n); };
  auto worker = [&]() {
    try {
      for (size_t c; !failed.load() && (c = next.fetch_add(1)) < chunks;) {
        const size_t end = std::min(batches, (c + 1) * per_chunk);
        for (size_t b = c * per_chunk; b < end; ++b) (*out)[b] = OneBatch(from + static_cast<u128>(b) * batch, batch, fast);
      }
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(failure_mu);
      failure = e.what();
      failed = true;
    }
  };
  const int n_threads = static_cast<int>(std::min<size_t>(static_cast<size_t>(threads), chunks));
  if (n_threads <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < n_threads; ++t) pool.emplace_back(worker);
    for (auto& th : pool) th.join();
  }
  if (failed) return Status::Internal("batch statistics failed: " + failure);
  return Status::Ok();
}

Status ComputeBatchStatsSlow(u128 from, u128 to, uint32_t batch, std::vector<BatchStats>* out) {
  size_t batches = 0;
  Status st = CheckedBatchCount(from, to, batch, &batches);
  if (!st.ok()) return st;
  out->clear();
  out->reserve(batches);
  auto slow = [](u128 n) { return SlowDelay(n); };
  for (size_t b = 0; b < batches; ++b) out->push_back(OneBatch(from + static_cast<u128>(b) * batch, batch, slow));
  return Status::Ok();
}

}  // namespace collatz
