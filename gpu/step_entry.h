// The GPU step table's entry (StepEntry), shared by the search kernels and the tail fill, and
// the host builder of such a table from core's StepTable. Plain structs: nvcc and the host
// compiler both include it.
#pragma once

#include <cstdint>
#include <vector>

namespace collatz::gpu {

// Step-table entry: S T-steps take 2^S h + i to pow3 * h + c, spending `steps` = S + p.
// two_mod_3: 1 when every value the step makes is 2 (mod 3) (p >= 1 and c = 2 (mod 3), since
// pow3 * h + c = c (mod 3) then); the group walk's check then also bounds through the
// smaller predecessor (2v - 1) / 3 (LaunchParams::walk_stop, gpu/search_kernels.h).
struct StepEntry {
  uint32_t c;
  uint32_t pow3;
  uint32_t steps;
  uint32_t two_mod_3;
};
inline constexpr uint32_t StepMakesTwoMod3(uint32_t p, uint64_t c) { return p >= 1 && c % 3 == 2 ? 1 : 0; }
// The class of v = 3^p x + c that the walk's check bounds through smaller predecessors
// (BuildWalkStopTable): bit 0 v = 2 (mod 3) (p >= 1); 2 v = 4 (mod 9), 3 v = 8 (mod 9) (p >= 2).
inline constexpr uint32_t StepValueClass(uint32_t p, uint64_t c) {
  return StepMakesTwoMod3(p, c) | (p >= 2 && (c % 9 == 4 || c % 9 == 8) ? 2u : 0u);
}

// The 2^bits entries of the step table of that width (core/step_table.h).
std::vector<StepEntry> MakeStepEntries(int bits);

}  // namespace collatz::gpu
