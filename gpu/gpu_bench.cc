// gpu_bench: numbers per second of the GPU engine (every N of the range counted) next to
// the plain one-thread-per-number baseline, timed in the same run. The unit is leased as
// a frontier search would be: the published delay records below --at are imported as
// trusted (floor, open holes and record table from ComputeLeaseContext).
//
//   gpu_bench --at 2^60 --numbers 2^40 --kinds delay [--sieve-bits 19 [--host-sieve]] [--step-bits 19]
//             [--tail-bits 24] [--block-threads 256] [--no-et] [--baseline-numbers 2^28]
//             [--verify-numbers 2^24] [--repeat 3] [--records path/delay_records.csv]
//             [--global-steps] [--no-queue] [--queue-occupancy 1280] [--queue-block-threads 256] [--queue-columns 64]
//             [--low-occupancy]
//             [--bound-sub-bits 6] [--positions-per-launch N] [--no-class-members] [--class-plain]
//             [--walk-rounds 12] [--walk-step-bits 12] [--walk-round-steps 2] [--join-map-bits 32]
//             [--context trusted|floor|none] [--full-delay-tail-bits 32] [--no-delay-join-map]
//             [--self-record-bits 40] [--group-bits 16 (delay-only and class units)]
//             [--shallow-group-bits 14 (units whose table ends far below)] [--unchecked-group-bits 13] [--group-min-members 16]
//             [--deep-group-min-members 256 (class units too)]
//             [--group-chunk-members 512] [--no-group-class-checks] [--no-group-ancestor-checks]
//             [--no-group-half-checks] [--group-split-min 8 (0: no split)]
//             [--group-a2-max-odd-steps L (walking groups with more odd steps in k + G walk from k)]
//             [--narrow-walk-max-bits 76 (0: the three-limb pair step everywhere)]
//             [--walk-check-bits 6 (T-steps the two-step walk's check looks ahead: 2 .. 8)]
//             [--step-model 2^20 [--model-group-bits 16] [--model-only [--model-closed-below D]]]
//             [--points F (known points, n,delay: as collatzctl import --points stores them)]
// --context: trusted (the default) as above; floor: the same floor and open holes (the delays
// of numbers below --at, recomputed, bound them without trust) but no record table, so no
// early termination (a unit leased on an empty database); none: floor 0, no holes, no table.
// --step-model S: a host model of the walk's work (gpu/roofline.sh): S examined numbers of
// the unit, sampled evenly, each followed T-step by T-step until the exact early-termination
// test (core/early_termination.h CanStopInClass: the record table and the predecessor bound
// of v's class mod 9) first lets it stop, or it reaches the tail (v < 2^24). It prints how
// many stop within the sieve's k T-steps, within k + G (G: --model-group-bits, the residue
// groups' depth), and, for the rest ("walks"), their mean T-steps and two-step rounds of 24
// T-steps beyond k + G. The GPU decides whole groups by their last member and checks a walk
// once a round, so this counts the work a number needs, not what the kernel spends on it;
// beside it, the walks by the round whose check (once every 24 T-steps, as the GPU's) stops
// them, the share a first-round filter would stop before any round (FirstRoundFilterStops;
// docs/PERFORMANCE.md, lever 105), and the rounds a walk with a check every 12, 24, 26, 28, 36
// or 48 T-steps (rounds of one to four 12-bit table steps, lever 107; two of 13 or 14 bits,
// lever 111), and with each 24-T-step check looking 0 to 12 T-steps ahead, beside the check of
// v mod 4's even steps (the walk's before session 41; --walk-check-bits, lever 112).
// --model-only: the model alone, on the host (no CUDA device needed). --model-closed-below D
// (with --model-only alone, so that no measured figure rests on it): the model of the same unit
// as if the open classes below D had members below it (e.g. from imported class records), to
// price what closing them would save; the unit's own holes are printed beside. --points F:
// the unit as a database holding those known points would lease it (core/known_points.h: they
// raise the floor and close classes below --at; every delay recomputed), model and search alike.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/bench_unit.h"
#include "core/cpu_engine.h"
#include "core/early_termination.h"
#include "core/records_csv.h"
#include "core/step_table.h"
#include "core/tail_table.h"
#include "core/unit_search.h"
#include "gpu/gpu_baseline.h"
#include "gpu/gpu_engine.h"
#include "gpu/sieve_builder.h"

namespace collatz {
namespace {

struct Args {
  std::string at = "2^60", numbers = "2^36", kinds = "delay";
  int sieve_bits = 19;
  bool host_sieve = false;
  GpuEngineOptions gpu;
  std::string baseline_numbers = "2^28";
  std::string verify_numbers = "0";
  int repeat = 3;
  std::string records;
  std::string context = "trusted";
  BenchUnitOptions unit;
  std::string step_model = "0";
  int model_group_bits = 16;
  bool model_only = false;
  uint32_t model_closed_below = 0;  // what-if: classes below it counted closed (0: none)
  std::string points;               // known points CSV (n,delay), as collatzctl import --points stores them
};

int Fail(const std::string& what) {
  std::fprintf(stderr, "gpu_bench: %s\n", what.c_str());
  return 1;
}

double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The group walk's first-round filter (gpu/kernels/group_kernel.cu) for a member at v after
// s steps, entering its walk: with P the odd T-steps among its next 24 (from v mod 2^24), the
// round takes v to 3^P (v >> 24) + C < 3^P ((v >> 24) + 1) after s + 24 + P steps, which
// stops if that bound does (with v's group's spread: its last member is at most 2^-12 above).
bool FirstRoundFilterStops(const EarlyTermination& et, uint32_t s, u128 v) {
  uint32_t odd = 0;
  uint64_t c = 0;
  TStepsOfResidue(static_cast<uint64_t>(v & (Pow2(24) - 1)), 24, &odd, &c);
  const u128 h = v >> 24, bound = h + (h >> 12) + 1;
  return bound <= kU128Max / kPow3[odd] && et.CanStop(s + 24 + odd, bound * kPow3[odd]);
}

// Bit i of a bit set of 64-bit words (the step model's T-steps beyond k + G).
bool BitAt(const uint64_t* bits, uint64_t i) { return ((bits[i / 64] >> (i % 64)) & 1) != 0; }
void SetBitAt(uint64_t* bits, uint64_t i) { bits[i / 64] |= uint64_t{1} << (i % 64); }

// The host model of --step-model (see the top of the file).
void RunStepModel(const Sieve& sieve, const UnitSpec& spec, u128 sample, int group_bits) {
  const EarlyTermination et(spec, true);
  const int k = sieve.bits();
  const std::vector<uint64_t>& residues = sieve.residues();
  const u128 numbers = spec.end - spec.begin;
  const u128 tail = Pow2(24);
  constexpr uint64_t kMaxSteps = 100000;
  uint64_t examined = 0, within_k = 0, within_kg = 0, walks = 0, tail_ends = 0, overflows = 0, max_steps = 0;
  double steps_all = 0, steps_walks = 0, rounds_walks = 0;
  std::vector<uint64_t> walk_stop_at(25, 0);  // walks by T-steps beyond k + G to their first stop (24: more)
  // The GPU walk checks once a round of 24 T-steps: walks by the round whose check stops them
  // (8: more), and those the first-round filter stops before any round (FirstRoundFilterStops).
  std::vector<uint64_t> round_stops(9, 0);
  uint64_t filtered = 0;
  double rounds_unfiltered = 0;
  // Walks checked every R T-steps beyond k + G instead, R = 12, 24, 26, 28, 36, 48 (a round of
  // one to four 12-bit table steps, or two of 13 or 14 bits): rounds a walk, from which T-steps of its first
  // kStopWindow beyond k + G the exact test lets it stop (a walk that none does counts the
  // rounds to its first stop at a multiple of 24 beyond the window, whatever R).
  constexpr int kStopWindow = 192;
  const int kRoundTSteps[6] = {12, 24, 26, 28, 36, 48};
  double rounds_by_r[6] = {0, 0, 0, 0, 0, 0};
  // Rounds a walk if each round's check (every 24 T-steps) also looked L T-steps ahead (a
  // check table by v mod 2^L: every path of the next L T-steps), L = 0, 2, 4, 6, 8, 12.
  const int kLookahead[6] = {0, 2, 4, 6, 8, 12};
  double rounds_by_lookahead[6] = {0, 0, 0, 0, 0, 0};
  double rounds_today_sum = 0;
  uint64_t stop_bits[kStopWindow / 64];
  uint64_t odd_bits[kStopWindow / 64];  // the value after T-step k + G + 1 + i is odd
  uint64_t state = 0x243F6A8885A308D3ull;
  const auto t0 = std::chrono::steady_clock::now();
  // Evenly spread candidates (a random point in each of `sample` slices of the unit, then
  // the first examined number from it), so that every part of the unit is represented.
  const u128 slice = std::max<u128>(numbers / std::max<u128>(sample, 1), 1);
  for (u128 i = 0; i < sample; ++i) {
    u128 n = spec.begin + i * slice + (slice > 1 ? SplitMix64(&state) % slice : 0);
    bool found = false;
    for (int tries = 0; tries < (1 << 20) && n < spec.end; ++tries, ++n) {
      if ((n & 1) == 0) continue;
      if (spec.kinds == Kinds::kDelay && DelayOnlySkipsMod9(static_cast<unsigned>(n % 9))) continue;
      const uint64_t r = static_cast<uint64_t>(n & (Pow2(k) - 1));
      if (!std::binary_search(residues.begin(), residues.end(), r)) continue;
      found = true;
      break;
    }
    if (!found) continue;
    ++examined;
    u128 v = n;
    uint32_t s = 0;  // Collatz steps (an odd T-step is two)
    uint64_t t = 0;  // T-steps
    const uint64_t kg = static_cast<uint64_t>(k + group_bits);
    uint64_t first_stop = 0;  // beyond k + G: the first T-step whose exact check stops it
    bool filter_stops = false;
    std::fill(std::begin(stop_bits), std::end(stop_bits), 0);
    std::fill(std::begin(odd_bits), std::end(odd_bits), 0);
    auto can_stop = [&]() {
      return v >= 5 && et.enabled() && et.CanStopInClass(s, v, ValueClassOfResidue9(static_cast<unsigned>(v % 9)));
    };
    for (;;) {
      if (t == kg) filter_stops = et.enabled() && FirstRoundFilterStops(et, s, v);
      if (t > kg && t - kg <= kStopWindow && can_stop()) {
        SetBitAt(stop_bits, t - kg - 1);
      }
      if (t > kg && t - kg <= kStopWindow && (v & 1) != 0) SetBitAt(odd_bits, t - kg - 1);
      if (t > kg && t - kg >= kStopWindow && (t - kg) % 24 == 0 && can_stop()) break;
      if (v & 1) {
        if (v > (kU128Max - 1) / 3) {
          ++overflows;
          break;
        }
        v = (3 * v + 1) / 2;
        s += 2;
      } else {
        v >>= 1;
        s += 1;
      }
      ++t;
      if (v < tail) {
        if (first_stop == 0) ++tail_ends;  // a walk followed past its stop is not a tail end
        break;
      }
      if (first_stop == 0 && can_stop()) {
        if (t <= kg) break;
        first_stop = t;  // the walk goes on to its round's check
      }
      if (t >= kMaxSteps) break;
    }
    const uint64_t t_stopped = t;  // the end of the walk's last round, or its tail or overflow
    if (t > kg && first_stop != 0) t = first_stop;
    max_steps = std::max(max_steps, t);
    steps_all += static_cast<double>(t);
    if (t <= static_cast<uint64_t>(k)) {
      ++within_k;
    } else if (t <= static_cast<uint64_t>(k + group_bits)) {
      ++within_kg;
    } else {
      ++walks;
      steps_walks += static_cast<double>(t);
      rounds_walks += static_cast<double>((t - (k + group_bits) + 23) / 24);
      ++walk_stop_at[std::min<uint64_t>(t - (k + group_bits), 24)];
      // The rounds of R T-steps until a round's check stops the walk.
      auto rounds_of = [&](uint64_t r) {
        for (uint64_t j = 1; j * r <= kStopWindow; ++j) {
          if (BitAt(stop_bits, j * r - 1)) return j;
        }
        return (t_stopped - kg + r - 1) / r;
      };
      const uint64_t rounds = rounds_of(24);
      for (int r = 0; r < 6; ++r) rounds_by_r[r] += static_cast<double>(rounds_of(kRoundTSteps[r]));
      auto rounds_ahead = [&](uint64_t ahead) {
        for (uint64_t j = 1; 24 * j + ahead <= kStopWindow; ++j) {
          for (uint64_t at = 24 * j - 1; at <= 24 * j - 1 + ahead; ++at) {
            if (BitAt(stop_bits, at)) return j;
          }
        }
        return (t_stopped - kg + 23) / 24;
      };
      for (int r = 0; r < 6; ++r) rounds_by_lookahead[r] += static_cast<double>(rounds_ahead(kLookahead[r]));
      // Today's check: v, then v / 2 and v / 4 where v mod 4 says those steps are even.
      auto rounds_today = [&]() {
        for (uint64_t j = 1; 24 * j + 2 <= kStopWindow; ++j) {
          const uint64_t at = 24 * j - 1;
          if (BitAt(stop_bits, at) ||
              (!BitAt(odd_bits, at) && (BitAt(stop_bits, at + 1) || (!BitAt(odd_bits, at + 1) && BitAt(stop_bits, at + 2))))) {
            return j;
          }
        }
        return (t_stopped - kg + 23) / 24;
      };
      rounds_today_sum += static_cast<double>(rounds_today());
      ++round_stops[std::min<uint64_t>(rounds, 8)];
      if (filter_stops) {
        ++filtered;
      } else {
        rounds_unfiltered += rounds;
      }
    }
  }
  const double e = static_cast<double>(std::max<uint64_t>(examined, 1)), w = static_cast<double>(std::max<uint64_t>(walks, 1));
  std::printf("step model: %lu examined numbers sampled over the unit (%.2f s on the host; k = %d, G = %d, floor %u, "
              "%zu known records complete below %s): T-steps to the first exact stop (or v < 2^24) mean %.2f, max %lu; "
              "within k %.2f%%, within k + G %.2f%% more; walks (beyond k + G) %.2f%%: mean %.2f T-steps from N, "
              "%.2f rounds of 24 T-steps beyond k + G; walk T-steps beyond k + G per examined number %.3f; "
              "tail ends %lu, 128-bit overflows %lu\n",
              static_cast<unsigned long>(examined), Seconds(t0, std::chrono::steady_clock::now()), k, group_bits,
              spec.floor, spec.known_records.size(), ToDecimal(spec.records_complete_below).c_str(), steps_all / e,
              static_cast<unsigned long>(max_steps), 100.0 * within_k / e, 100.0 * within_kg / e, 100.0 * walks / e,
              steps_walks / w, rounds_walks / w, (steps_walks - static_cast<double>(walks) * (k + group_bits)) / e,
              static_cast<unsigned long>(tail_ends), static_cast<unsigned long>(overflows));
  // Where the walks stop: the share of them stopped within j T-steps beyond k + G (a deeper
  // decision by sub-groups would spare those walks' rounds).
  std::printf("step model: walks stopped within j T-steps beyond k + G:");
  uint64_t within = 0;
  for (int j = 1; j <= 24; ++j) {
    within += walk_stop_at[j];
    if (j <= 8 || j % 4 == 0) std::printf(" %d: %.1f%%", j, 100.0 * static_cast<double>(within) / w);
  }
  std::printf("\n");
  double rounds_all = 0;
  std::printf("step model: walks by the round of 24 T-steps whose check stops them:");
  for (int j = 1; j <= 8; ++j) {
    rounds_all += static_cast<double>(j) * static_cast<double>(round_stops[j]);
    std::printf(" %d%s: %.1f%%", j, j == 8 ? "+" : "", 100.0 * static_cast<double>(round_stops[j]) / w);
  }
  std::printf("; rounds a walk %.3f; the first-round filter stops %.1f%% of the walks, leaving %.3f rounds a walk\n",
              rounds_all / w, 100.0 * static_cast<double>(filtered) / w, rounds_unfiltered / w);
  std::printf("step model: rounds a walk with a check every");
  for (int r = 0; r < 6; ++r) std::printf(" %d T-steps %.3f%s", kRoundTSteps[r], rounds_by_r[r] / w, r < 5 ? ";" : "\n");
  std::printf("step model: rounds a walk with today's check (v mod 4's even steps) %.3f; with each check looking ahead", rounds_today_sum / w);
  for (int r = 0; r < 6; ++r) std::printf(" %d T-steps %.3f%s", kLookahead[r], rounds_by_lookahead[r] / w, r < 5 ? ";" : "\n");
}

int Main(int argc, char** argv) {
  Args a;
  const char* env = std::getenv("COLLATZ_SHARED_DATA");
  a.records = std::string(env != nullptr ? env : COLLATZ_SHARED_DATA) + "/delay_records.csv";
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "gpu_bench: %s needs a value\n", key.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (key == "--at") a.at = value();
    else if (key == "--numbers") a.numbers = value();
    else if (key == "--kinds") a.kinds = value();
    else if (key == "--sieve-bits") a.sieve_bits = std::stoi(value());
    else if (key == "--host-sieve") a.host_sieve = true;
    else if (key == "--step-bits") a.gpu.step_bits = std::stoi(value());
    else if (key == "--tail-bits") a.gpu.tail_bits = std::stoi(value());
    else if (key == "--full-delay-tail-bits") a.gpu.full_delay_tail_bits = std::stoi(value());
    else if (key == "--no-delay-join-map") a.gpu.delay_join_map = false;
    else if (key == "--self-record-bits") a.gpu.self_record_bits = std::stoi(value());
    else if (key == "--block-threads") a.gpu.block_threads = std::stoi(value());
    else if (key == "--blocks-per-sm") a.gpu.blocks_per_sm = std::stoi(value());
    else if (key == "--positions-per-launch") a.gpu.positions_per_launch = std::stoull(value());
    else if (key == "--no-et") a.gpu.early_termination = false;
    else if (key == "--global-steps") a.gpu.shared_step_table = false;
    else if (key == "--full-occupancy") a.gpu.full_occupancy = true;
    else if (key == "--low-occupancy") a.gpu.full_occupancy = false;
    else if (key == "--no-queue") a.gpu.walk_queue = false;
    else if (key == "--queue-occupancy") a.gpu.queue_threads_per_sm = std::stoi(value());
    else if (key == "--queue-block-threads") a.gpu.queue_block_threads = std::stoi(value());
    else if (key == "--queue-columns") a.gpu.queue_column_cycles = std::stoi(value());
    else if (key == "--no-groups") a.gpu.residue_groups = false;
    else if (key == "--class-plain") a.gpu.class_walk_queue = false;
    else if (key == "--group-bits") a.gpu.group_bits = a.gpu.class_group_bits = std::stoi(value());
    else if (key == "--shallow-group-bits") a.gpu.shallow_group_bits = std::stoi(value());
    else if (key == "--unchecked-group-bits") a.gpu.unchecked_group_bits = std::stoi(value());
    else if (key == "--deep-group-min-members") a.gpu.deep_group_min_members = a.gpu.class_deep_group_min_members = std::stoi(value());
    else if (key == "--group-min-members") a.gpu.group_min_members = a.gpu.class_group_min_members = std::stoi(value());
    else if (key == "--no-group-class-checks") a.gpu.group_class_checks = false;
    else if (key == "--no-group-ancestor-checks") a.gpu.group_ancestor_checks = false;
    else if (key == "--no-group-half-checks") a.gpu.group_half_checks = false;
    else if (key == "--group-split-min") a.gpu.group_tail_split_min = std::stoi(value());
    else if (key == "--group-a2-max-odd-steps") a.gpu.group_a2_max_odd_steps = std::stoi(value());
    else if (key == "--group-chunk-members") a.gpu.group_chunk_members = std::stoi(value());
    else if (key == "--narrow-walk-max-bits") a.gpu.narrow_walk_max_bits = std::stoi(value());
    else if (key == "--walk-check-bits") a.gpu.walk_check_bits = std::stoi(value());
    else if (key == "--walk-rounds") a.gpu.group_walk_rounds = std::stoi(value());
    else if (key == "--walk-step-bits") a.gpu.group_walk_step_bits = std::stoi(value());
    else if (key == "--walk-round-steps") a.gpu.group_walk_round_steps = std::stoi(value());
    else if (key == "--join-map-bits") a.gpu.join_map_bits = std::stoi(value());
    else if (key == "--bound-sub-bits") a.gpu.bound_sub_bits = std::stoi(value());
    else if (key == "--baseline-numbers") a.baseline_numbers = value();
    else if (key == "--verify-numbers") a.verify_numbers = value();
    else if (key == "--repeat") a.repeat = std::stoi(value());
    else if (key == "--records") a.records = value();
    else if (key == "--no-class-members") a.unit.close_holes_by_members = false;
    else if (key == "--points") a.points = value();
    else if (key == "--context") a.context = value();
    else if (key == "--step-model") a.step_model = value();
    else if (key == "--model-group-bits") a.model_group_bits = std::stoi(value());
    else if (key == "--model-only") a.model_only = true;
    else if (key == "--model-closed-below") a.model_closed_below = static_cast<uint32_t>(std::stoul(value()));
    else return Fail("unknown argument " + key);
  }
  u128 at = 0, numbers = 0, baseline_numbers = 0, verify_numbers = 0, step_model = 0;
  for (auto [text, out] : {std::pair{&a.at, &at}, std::pair{&a.numbers, &numbers},
                           std::pair{&a.baseline_numbers, &baseline_numbers}, std::pair{&a.verify_numbers, &verify_numbers},
                           std::pair{&a.step_model, &step_model}}) {
    Status st = ParseU128(*text, out);
    if (!st.ok()) return Fail(*text + ": " + st.ToString());
  }
  if (!a.points.empty()) {
    Status st = ReadRecordsCsv(a.points, RecordCsvKind::kDelay, &a.unit.known_points);
    if (!st.ok()) return Fail(st.ToString());
  }
  Kinds kinds;
  if (a.kinds == "delay") kinds = Kinds::kDelay;
  else if (a.kinds == "delay,class" || a.kinds == "class,delay") kinds = Kinds::kDelayAndClass;
  else return Fail("--kinds must be delay or delay,class");
  if (a.model_only) {
    if (step_model == 0) return Fail("--model-only needs --step-model");
    std::shared_ptr<const SearchTables> tables;
    Status st = SearchTables::Build(a.sieve_bits, 19, 20, &tables);
    if (!st.ok()) return Fail(st.ToString());
    const std::string dir = a.records.substr(0, a.records.find_last_of('/') + 1);
    BenchUnit bench;
    st = LoadBenchUnit(a.records, dir + "class_records_below_2p28.csv", at, numbers, kinds, &bench, a.unit);
    if (!st.ok()) return Fail(st.ToString());
    if (a.context != "trusted") return Fail("--model-only models the trusted context only");
    std::vector<uint32_t>& holes = bench.spec.open_holes;
    std::printf("step model: %zu open classes in the unit (%s%s)", holes.size(), holes.empty() ? "none" : "smallest ",
                holes.empty() ? "" : std::to_string(holes.front()).c_str());
    if (!a.points.empty()) {
      std::printf("; %zu known points from %s closed %zu", a.unit.known_points.size(), a.points.c_str(),
                  bench.holes_closed_by_points);
    }
    if (a.model_closed_below > 0) {
      holes.erase(std::remove_if(holes.begin(), holes.end(), [&](uint32_t h) { return h < a.model_closed_below; }),
                  holes.end());
      std::printf("; what-if: the %zu at or above %u stay open, the rest counted closed", holes.size(), a.model_closed_below);
    }
    std::printf("\n");
    RunStepModel(*tables->sieve, bench.spec, step_model, a.model_group_bits);
    return 0;
  }
  if (a.model_closed_below > 0) return Fail("--model-closed-below is a what-if of the host model: it needs --model-only");
  if (GpuDeviceCount() == 0) return Fail("no CUDA device");

  // Wide sieves are built on the device, as collatzctl builds them (--host-sieve: on the
  // host); their time is the sieve's alone (the context and the host's delay tables first).
  const bool device_sieve = a.sieve_bits > 22 && !a.host_sieve;
  std::shared_ptr<const FastDelay> delay;
  if (device_sieve) {
    delay = std::make_shared<FastDelay>(std::make_shared<StepTable>(19), std::make_shared<TailTable>(20));
    WarmGpuContext(a.gpu.device);
  }
  auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<const SearchTables> tables;
  Status st;
  if (device_sieve) {
    st = BuildDeviceSearchTables(a.gpu.device, a.sieve_bits, delay, &tables);
  } else {
    st = SearchTables::Build(a.sieve_bits, 19, 20, &tables);
  }
  if (!st.ok()) return Fail(st.ToString());
  const double sieve_seconds = Seconds(t0, std::chrono::steady_clock::now());
  std::unique_ptr<SearchEngine> engine;
  st = MakeGpuEngine(tables, a.gpu, &engine);
  if (!st.ok()) return Fail(st.ToString());
  auto t1 = std::chrono::steady_clock::now();

  // The unit a frontier lease would get: the published delay records below --at and our
  // exhaustive class records (below 2^28, next to the delay file) imported as trusted.
  const std::string dir = a.records.substr(0, a.records.find_last_of('/') + 1);
  BenchUnit bench;
  st = LoadBenchUnit(a.records, dir + "class_records_below_2p28.csv", at, numbers, kinds, &bench, a.unit);
  if (!st.ok()) return Fail(st.ToString());
  if (a.context == "floor" || a.context == "none") {
    bench.spec.known_records.clear();
    bench.spec.records_complete_below = 0;
    if (a.context == "none") {
      bench.spec.floor = 0;
      bench.spec.open_holes.clear();
    }
  } else if (a.context != "trusted") {
    return Fail("--context must be trusted, floor or none");
  }
  const UnitSpec& spec = bench.spec;
  std::printf("%s; sieve %d bits (%zu odd survivors) built on the %s in %.3f s, tables+engine %.2f s (engine: %s)\n",
              engine->Describe().c_str(), a.sieve_bits, tables->sieve->size(),
              device_sieve ? "device" : "host", sieve_seconds, Seconds(t0, t1),
              engine->SetupNote().c_str());
  std::printf("unit [%s, %s) kinds %s floor %u open holes %zu (%zu closed by members) records %zu (complete below %s)\n",
              ToDecimal(spec.begin).c_str(), ToDecimal(spec.end).c_str(), a.kinds.c_str(), spec.floor,
              spec.open_holes.size(), bench.holes_closed_by_members, spec.known_records.size(),
              ToDecimal(spec.records_complete_below).c_str());
  if (!a.points.empty()) {
    std::printf("known points: %zu from %s, closing %zu classes below --at before the member search\n",
                a.unit.known_points.size(), a.points.c_str(), bench.holes_closed_by_points);
  }
  if (step_model > 0) RunStepModel(*tables->sieve, spec, step_model, a.model_group_bits);

  if (verify_numbers > 0) {
    UnitSpec small = spec;
    small.end = spec.begin + verify_numbers;
    CpuEngine cpu(SearchTables::WithCpuOffsets(tables), CpuEngineOptions{});
    UnitResult want, got;
    auto v0 = std::chrono::steady_clock::now();
    st = cpu.Search(small, &want);
    if (!st.ok()) return Fail(st.ToString());
    auto v1 = std::chrono::steady_clock::now();
    st = engine->Search(small, &got);
    if (!st.ok()) return Fail(st.ToString());
    std::printf("verify [%s, +%s): cpu %.2f s, gpu vs cpu %s; %s\n", ToDecimal(small.begin).c_str(),
                ToDecimal(verify_numbers).c_str(), Seconds(v0, v1), got == want ? "IDENTICAL" : "DIFFERENT",
                DescribeUnitResult(got).substr(0, 300).c_str());
    if (!(got == want)) {
      std::printf("cpu: %s\n", DescribeUnitResult(want).c_str());
      return 1;
    }
  }

  // The engine's one-time tables for this unit (own record table, join map), a warm-up,
  // then the timed repeats.
  {
    st = engine->Prepare(spec);
    if (!st.ok()) return Fail(st.ToString());
    UnitSpec warm = spec;
    warm.end = spec.begin + std::min<u128>(numbers, Pow2(30));
    UnitResult r;
    st = engine->Search(warm, &r);
    if (!st.ok()) return Fail(st.ToString());
  }
  std::vector<double> walls, kernels;
  UnitResult result;
  GpuSearchStats stats;
  for (int i = 0; i < std::max(1, a.repeat); ++i) {
    UnitResult r;
    auto s0 = std::chrono::steady_clock::now();
    st = engine->Search(spec, &r);
    auto s1 = std::chrono::steady_clock::now();
    if (!st.ok()) return Fail(st.ToString());
    if (i > 0 && !(r == result)) return Fail("repeat gave a different result");
    result = r;
    stats = LastGpuSearchStats(*engine);
    walls.push_back(Seconds(s0, s1));
    kernels.push_back(stats.kernel_seconds);
  }
  std::sort(walls.begin(), walls.end());
  std::sort(kernels.begin(), kernels.end());
  const double wall = walls[walls.size() / 2], kernel = kernels[kernels.size() / 2];
  const double n = static_cast<double>(numbers);
  std::printf("result: %s\n", DescribeUnitResult(result).substr(0, 600).c_str());
  std::printf("setup %.4f s (host, before the first launch; the unit's tables %s)\n", stats.setup_seconds,
              stats.unit_tables_reused ? "kept from the warm-up search" : "built");
  std::printf("launches %lu (groups %lu, split %lu), host-finished %lu, ladder entries %lu, computed %lu (%.2f%% of N)\n",
              static_cast<unsigned long>(stats.launches), static_cast<unsigned long>(stats.group_launches),
              static_cast<unsigned long>(stats.split_launches),
              static_cast<unsigned long>(stats.host_finished), static_cast<unsigned long>(stats.ladder_entries),
              static_cast<unsigned long>(result.candidates), 100.0 * result.candidates / n);
  if (stats.self_record_bits != 0) {
    std::printf("engine's own record table below 2^%d (its searches took %.2f s, once)\n", stats.self_record_bits,
                stats.self_records_seconds);
  }
  if (stats.join_map_bits != 0) {
    std::printf("join map %d bits (built in %.2f s): %lu walking groups skipped\n", stats.join_map_bits,
                stats.join_map_seconds, static_cast<unsigned long>(stats.join_skipped_groups));
  } else if (!stats.join_map_unavailable.empty()) {
    std::printf("join map unavailable: %s\n", stats.join_map_unavailable.c_str());
  }
  if (stats.group_launches != 0) {
    std::printf("residue groups of %d bits stopped inside their k + G shared steps: %lu; halved one step later: %lu; "
                "tail splits: %lu; walked from k: %lu\n",
                stats.group_bits,
                static_cast<unsigned long>(stats.step_stopped_groups),
                static_cast<unsigned long>(stats.half_stopped_groups), static_cast<unsigned long>(stats.tail_splits),
                static_cast<unsigned long>(stats.shallow_walk_groups));
  }

  double base_rate = 0;
  if (baseline_numbers > 0) {
    UnitSpec b = spec;
    b.end = spec.begin + baseline_numbers;
    double seconds = 0;
    uint64_t count = 0;
    GpuBaselineResult detail;
    st = RunGpuBaseline(b, &seconds, &count, &detail, a.gpu.device);  // warm-up
    if (st.ok()) st = RunGpuBaseline(b, &seconds, &count, &detail, a.gpu.device);
    if (!st.ok()) return Fail(st.ToString());
    base_rate = count / seconds;
    std::printf("baseline: %lu numbers in %.3f s = %.3e numbers/s (max delay %u, overflowed %lu)\n",
                static_cast<unsigned long>(count), seconds, base_rate, detail.max_delay,
                static_cast<unsigned long>(detail.overflowed));
  }
  std::printf("SUMMARY context=%s at=%s numbers=%s kinds=%s sieve=%d step=%d tail=%d threads=%d smem=%d occ=%d queue=%d/%d/%d/%d et=%d sub=%d: "
              "%.3e numbers/s (median wall %.3f s of %d; summed launch events %.3f s); baseline %.3e numbers/s; "
              "speedup x%.0f\n",
              a.context.c_str(), a.at.c_str(), a.numbers.c_str(), a.kinds.c_str(), a.sieve_bits, a.gpu.step_bits, stats.tail_bits,
              a.gpu.block_threads, (a.gpu.shared_step_table && a.gpu.step_bits <= 13) ? 1 : 0, a.gpu.full_occupancy ? 1 : 0, a.gpu.walk_queue ? 1 : 0, a.gpu.queue_block_threads, a.gpu.queue_threads_per_sm, a.gpu.queue_column_cycles, a.gpu.early_termination ? 1 : 0, a.gpu.bound_sub_bits,
              n / wall, wall, static_cast<int>(walls.size()), kernel, base_rate, base_rate > 0 ? n / wall / base_rate : 0.0);
  return 0;
}

}  // namespace
}  // namespace collatz

int main(int argc, char** argv) {
  collatz::LimitCudaHardwareQueues();
  return collatz::Main(argc, argv);
}
