#include "gpu/step_entry.h"

#include <cstddef>

#include "core/step_table.h"

namespace collatz::gpu {

std::vector<StepEntry> MakeStepEntries(int bits) {
  const StepTable steps(bits);
  std::vector<StepEntry> entries(size_t{1} << bits);
  for (size_t i = 0; i < entries.size(); ++i) {
    const uint32_t p = steps.p(i);
    entries[i] = StepEntry{steps.c(i), static_cast<uint32_t>(kPow3[p]), static_cast<uint32_t>(bits) + p,
                           StepMakesTwoMod3(p, steps.c(i))};
  }
  return entries;
}

}  // namespace collatz::gpu
