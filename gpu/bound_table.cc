#include "gpu/bound_table.h"

#include <algorithm>

#include "core/early_termination.h"

namespace collatz {

std::vector<uint16_t> BuildBoundTable(const UnitSpec& spec, int sub_bits) {
  std::vector<uint16_t> bound(static_cast<size_t>(129) << sub_bits, EarlyTermination::kNoBound);
  const u128 complete = spec.records_complete_below;
  const auto& records = spec.known_records;
  if (!(complete > 1 && !records.empty() && records.front().n == 1)) return bound;
  auto max_delay_at_most = [&](u128 x) -> uint32_t {
    auto it = std::upper_bound(records.begin(), records.end(), x, [](u128 v, const Record& r) { return v < r.n; });
    return it == records.begin() ? 0 : std::prev(it)->delay;
  };
  for (unsigned b = 1; b <= 128; ++b) {
    for (unsigned j = 0; j < (1u << sub_bits); ++j) {
      u128 last;  // the largest value of the bucket
      if (b - 1 >= static_cast<unsigned>(sub_bits)) {
        last = (Pow2(b - 1) - 1) + static_cast<u128>(j + 1) * Pow2(b - 1 - sub_bits);
      } else {
        last = (b == 128) ? kU128Max : Pow2(b) - 1;
      }
      if (last >= complete) continue;
      const uint32_t r = max_delay_at_most(last);
      if (r < EarlyTermination::kNoBound) bound[(static_cast<size_t>(b) << sub_bits) | j] = static_cast<uint16_t>(r);
    }
  }
  return bound;
}

}  // namespace collatz
