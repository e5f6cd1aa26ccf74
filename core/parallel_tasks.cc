#include "core/parallel_tasks.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace collatz {

void RunTasks(const std::vector<size_t>& order, int threads, const std::function<void(size_t)>& task) {
  std::atomic<size_t> next{0};
  auto work = [&]() {
    for (size_t i; (i = next.fetch_add(1)) < order.size();) task(order[i]);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads && static_cast<size_t>(t) < order.size(); ++t) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
}

std::vector<size_t> LargestFirst(const std::vector<size_t>& sizes) {
  std::vector<size_t> order(sizes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return sizes[a] > sizes[b]; });
  return order;
}

void ParallelChunks(size_t n, int chunks, const std::function<void(int chunk, size_t begin, size_t end)>& fn) {
  if (chunks < 1) chunks = 1;
  const size_t count = static_cast<size_t>(chunks);
  auto bound = [&](size_t c) { return n / count * c + std::min(n % count, c); };
  std::vector<size_t> order(count);
  for (size_t c = 0; c < count; ++c) order[c] = c;
  RunTasks(order, chunks, [&](size_t c) { fn(static_cast<int>(c), bound(c), bound(c + 1)); });
}

}  // namespace collatz
