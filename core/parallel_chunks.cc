#include "core/parallel_chunks.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace collatz {

void ParallelChunks(size_t n, int chunks, const std::function<void(int chunk, size_t begin, size_t end)>& fn) {
  if (chunks < 1) chunks = 1;
  auto bound = [&](int c) { return n / static_cast<size_t>(chunks) * static_cast<size_t>(c) +
                                   std::min(n % static_cast<size_t>(chunks), static_cast<size_t>(c)); };
  std::vector<std::thread> pool;
  for (int c = 1; c < chunks; ++c) pool.emplace_back([&fn, &bound, c] { fn(c, bound(c), bound(c + 1)); });
  fn(0, bound(0), bound(1));
  for (auto& t : pool) t.join();
}

}  // namespace collatz
