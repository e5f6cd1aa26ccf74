#include "cli/unit_plan.h"

#include <algorithm>

#include "core/cpu_engine.h"
#include "engines/unit_size.h"

namespace collatz::cli {

std::vector<std::pair<u128, u128>> CoveredIntervals(const std::vector<TrustedImport>& imports,
                                                    const std::vector<FinishedUnit>& units, Kinds kinds) {
  std::vector<std::pair<u128, u128>> out;
  for (const TrustedImport& imp : imports) {
    if (imp.complete_below > 1 && (kinds == Kinds::kDelay || ImportCoversClasses(imp))) {
      out.push_back({1, imp.complete_below});
    }
  }
  for (const FinishedUnit& u : units) {
    if (kinds == Kinds::kDelay || u.kinds == Kinds::kDelayAndClass) out.push_back({u.begin, u.end});
  }
  return out;
}

std::vector<PlannedUnit> PlanUnits(u128 from, u128 to, std::vector<std::pair<u128, u128>> covered, u128 unit_size) {
  std::vector<PlannedUnit> out;
  if (from >= to || unit_size == 0) return out;
  std::sort(covered.begin(), covered.end());
  u128 pos = from;
  auto emit_gap = [&](u128 gap_begin, u128 gap_end) {
    u128 x = gap_begin;
    while (x < gap_end) {
      u128 to_cut = unit_size - x % unit_size;  // distance to the next multiple, no overflow
      if (x < unit_size) to_cut = FirstUnitCut(x, unit_size) - x;
      const u128 end = to_cut >= gap_end - x ? gap_end : x + to_cut;
      out.push_back({x, end});
      x = end;
    }
  };
  for (const auto& [b, e] : covered) {
    if (e <= pos) continue;
    if (b >= to) break;
    if (b > pos) emit_gap(pos, b);
    pos = std::max(pos, e);
    if (pos >= to) break;
  }
  if (pos < to) emit_gap(pos, to);
  return out;
}

u128 DefaultUnitSize(u128 range, bool gpu, unsigned cpu_threads, Kinds kinds) {
  // A GPU unit pays a fixed cost (the last launches drain, the database stores the unit):
  // about 0.07 s on an H100, so 2^44 numbers at 2^66 in 16 units of 2^40 ran 4.9e12 numbers/s
  // against the bench's 7.0e12; in 8 units of 2^41 the cost halves. Larger units also take
  // deeper residue groups (2^44 numbers after import --published at 2^66: one unit, 15-bit
  // groups, 7.3e12 like the bench; two units of 2^43, 14 bits: 6.1e12), so one unit up to
  // 2^54: from 2^48 on delay-only units take a wide sieve (30 bits since session 33), and each
  // doubling deepens their groups of about 455 members (227 before session 40) by a bit (engines::kWideUnitDelaySieveBits;
  // the campaign point above the published bound, H200: units of 2^51 / 2^52 / 2^54 4.19 /
  // 4.26 / 4.47e13 numbers/s through the server or collatzctl run, session 36), which take
  // 400 s on an H200 at 2^54: an interrupted run loses at most that. Progress comes from
  // inside a unit. Delay+class units stop at 2^52 (engines::kMaxDefaultClassUnitNumbers, a
  // coordinator's class cap too): at 2^66 about 15 minutes on an H200.
  // A CPU unit gives each thread the engine's entry-stop chunks (the entry stop pays only in
  // chunks that large: core/cpu_engine.h), 2^30 numbers a thread: 2^66, 2^32 numbers, 2
  // threads: 9.8e8 numbers/s in units of 2^28, 1.21e9 in 2^30, 1.30e9 in 2^32.
  const u128 cpu_least = static_cast<u128>(CpuEngineOptions{}.EntryStopChunkNumbers(kDefaultSieveBits)) *
                         CpuEngineOptions::kChunksPerThread * std::max(1u, cpu_threads);
  const u128 least = gpu ? Pow2(32) : cpu_least;
  const int hi_bits = !gpu ? 40 : kinds == Kinds::kDelayAndClass ? engines::kMaxDefaultClassUnitBits : 54;
  const u128 target = range / (gpu ? 1 : 8);
  int bits = 0;
  while (bits < hi_bits && (Pow2(bits) < least || Pow2(bits) < target)) ++bits;
  return Pow2(bits);
}

}  // namespace collatz::cli
