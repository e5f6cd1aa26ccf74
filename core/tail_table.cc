#include "core/tail_table.h"

#include <algorithm>
#include <stdexcept>
#include <thread>

#include "core/thread_count.h"
#include "core/u128.h"

namespace collatz {

TailTable::TailTable(int bits, int threads) : bits_(bits) {
  if (bits < 1 || bits > kMaxBits) throw std::invalid_argument("tail table bits must be in 1..32");
  const uint64_t size = uint64_t{1} << bits;
  delays_.assign(size, 0);
  // Build in blocks [lo, 2 lo): every number in a block falls below lo within finitely many
  // steps, into an already finished block, so blocks are independent and run in parallel.
  if (size > 1) delays_[1] = 0;
  threads = ResolveThreadCount(threads);
  for (uint64_t lo = 2; lo < size; lo *= 2) {
    const uint64_t hi = std::min(size, 2 * lo);
    const uint64_t count = hi - lo;
    const int workers = count < (uint64_t{1} << 16) ? 1 : threads;
    auto work = [&](uint64_t from, uint64_t to) {
      for (uint64_t n = from; n < to; ++n) {
        u128 x = n;
        uint32_t steps = 0;
        while (x >= lo) {  // below lo every delay is known
          x = (x & 1) ? 3 * x + 1 : x / 2;
          ++steps;
        }
        const uint32_t d = steps + delays_[static_cast<uint64_t>(x)];
        if (d > 0xFFFF) throw std::overflow_error("delay does not fit 16 bits");
        delays_[n] = static_cast<uint16_t>(d);
      }
    };
    if (workers == 1) {
      work(lo, hi);
    } else {
      std::vector<std::thread> pool;
      const uint64_t per = (count + workers - 1) / workers;
      for (int t = 0; t < workers; ++t) {
        const uint64_t from = lo + per * t, to = std::min(hi, from + per);
        if (from < to) pool.emplace_back(work, from, to);
      }
      for (auto& th : pool) th.join();
    }
  }
}

}  // namespace collatz
