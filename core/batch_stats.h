// Batch statistics of delays (issue 6): for every batch of B consecutive N, batch b
// covering [b*B, (b+1)*B), the minimum, maximum, count and exact sum of delay(N) over
// EVERY N of the batch (no sieve, no mod rule). N = 0 is not counted, so the batch that
// starts at 0 holds B-1 numbers.
//
// Ranges are batch aligned: `from` and `to` must be multiples of B (from < to), so every
// batch is whole and a range's batches are exactly the batches of its sub-ranges.
#pragma once

#include <cstdint>
#include <vector>

#include "core/delay.h"
#include "core/status.h"
#include "core/u128.h"

namespace collatz {

constexpr uint32_t kDefaultStatsBatch = 1024;
constexpr uint32_t kMinStatsBatch = 2;
constexpr uint32_t kMaxStatsBatch = uint32_t{1} << 24;  // sum < 2^24 * 65535 < 2^64

struct BatchStats {
  uint16_t min = 0;
  uint16_t max = 0;
  uint32_t count = 0;  // numbers counted: B, or B-1 for the batch starting at 0
  uint64_t sum = 0;    // exact sum of their delays
  bool operator==(const BatchStats& o) const {
    return min == o.min && max == o.max && count == o.count && sum == o.sum;
  }
};

// Checks batch size and alignment: B in [kMinStatsBatch, kMaxStatsBatch], from and to
// multiples of B, from < to. The message says what is wrong.
Status ValidateStatsRange(u128 from, u128 to, uint32_t batch);

// Numbers counted in the batch starting at `batch_start`.
inline uint32_t BatchCount(u128 batch_start, uint32_t batch) { return batch_start == 0 ? batch - 1 : batch; }

// Folds one delay into a batch (count starts at 0; min/max are taken from the first delay).
inline void AddDelay(BatchStats* s, uint32_t d) {
  const uint16_t d16 = static_cast<uint16_t>(d);
  if (s->count == 0 || d16 < s->min) s->min = d16;
  if (s->count == 0 || d16 > s->max) s->max = d16;
  ++s->count;
  s->sum += d;
}

// All batches of [from, to) with FastDelay on `threads` threads (0: all cores).
// out->size() == (to - from) / batch afterwards.
Status ComputeBatchStats(const FastDelay& delay, u128 from, u128 to, uint32_t batch, int threads,
                         std::vector<BatchStats>* out);

// The plain version for tests: SlowDelay for every N, one thread.
Status ComputeBatchStatsSlow(u128 from, u128 to, uint32_t batch, std::vector<BatchStats>* out);

}  // namespace collatz
