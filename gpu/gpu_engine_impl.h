// The GPU engine's class (gpu/gpu_engine.h makes it: MakeGpuEngine), shared by the files
// that define it, one concern each: gpu_engine.cc (device tables, Init, the factory),
// gpu_engine_search.cc (planning a unit's launches, SearchUnit), gpu_engine_launch.cc
// (enqueueing a launch and turning its raw output into a UnitResult), gpu_engine_self_records.cc
// (the engine's own record table). Private to gpu/: nothing else includes it.
#pragma once

#include "gpu/gpu_engine.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/ancestor_bounds.h"
#include "core/delay.h"
#include "core/early_termination.h"
#include "core/first_unit_cuts.h"
#include "core/merge.h"
#include "core/step_table.h"
#include "gpu/bound_table.h"
#include "gpu/cuda_memory.h"
#include "gpu/device_sieve.h"
#include "gpu/fill_tail.h"
#include "gpu/join_map.h"
#include "gpu/join_map_kernels.h"
#include "gpu/search_kernels.h"
#include "gpu/sieve_cycle.h"
#include "gpu/stop_tables.h"

namespace collatz::gpu_engine_internal {

using gpu::Accumulators;
using gpu::HostFinishEntry;
using gpu::LadderEntry;
using gpu::LaunchParams;
using gpu::SieveEntry;
using gpu::StepEntry;

// One launch: positions [pos_begin, pos_end) counted from the start of cycle `cycle0`
// (sieved), or of the first-block pattern sequence (first block).
struct Job {
  bool sieved = false;
  u128 cycle0 = 0;
  uint64_t pos_begin = 0, pos_end = 0;
  uint32_t ladder_floor = 0;  // emit ladder entries only above this (>= the unit's floor)
  // Residue-group launch: entries [entry0, entry0 + entries) over `cycles` whole cycles
  // from cycle0; positions [0, entries * cycles).
  bool group = false;
  int group_bits = 0;
  int walk_round_steps = 1;
  // The join map serves this launch (LaunchParams::join_map): the unit's group launches, and
  // its sieved-position launches beside them (the partial cycles at its ends).
  bool join = false;
  uint32_t entry0 = 0, entries = 0;
  uint32_t cycles = 0;
};

// Sum of two results over interleaved sets of N: tallies add, the ladders are merged by N
// and filtered again (an entry at or below the delay of a smaller N is off), and each
// class keeps the smaller minimum.
UnitResult MergeInterleaved(UnitResult a, const UnitResult& b, uint32_t floor);

struct Slot {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  DeviceArray<Accumulators> acc;
  PinnedArray<Accumulators> host_acc;
  DeviceArray<LadderEntry> ladder;
  DeviceArray<HostFinishEntry> host_finish;
  DeviceArray<unsigned long long> class_min;
  DeviceArray<uint8_t> entry_stops;  // residue-group launches: LaunchParams::entry_stops
  DeviceArray<uint8_t> group_skip;   // and LaunchParams::group_skip
  PinnedArray<unsigned long long> host_class_min;
  bool busy = false;
  Job job;
};

class GpuEngine : public SearchEngine {
 public:
  GpuEngine(std::shared_ptr<const SearchTables> tables, const GpuEngineOptions& options)
      : tables_(std::move(tables)), options_(options) {}

  ~GpuEngine() override {
    if (device_set_) cudaSetDevice(options_.device);
    for (Slot& s : slots_) {
      if (s.stream != nullptr) cudaStreamSynchronize(s.stream);
      if (s.start != nullptr) cudaEventDestroy(s.start);
      if (s.stop != nullptr) cudaEventDestroy(s.stop);
      if (s.stream != nullptr) cudaStreamDestroy(s.stream);
    }
  }

  Status Init();
  // Searches the unit; a unit with a floor but no record table complete below
  // 2^self_record_bits is searched with the engine's own table (EnsureSelfRecords).
  Status Search(const UnitSpec& spec, UnitResult* result, const ProgressFn& progress = nullptr,
                const std::atomic<bool>* cancel = nullptr) override;
  std::string LastSearchNote() const override {
    const GpuSearchStats& s = stats_;
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "%s, %llu launches (%llu residue-group, %llu split), tail %d bits, own table %d bits, "
                  "join map skipped %llu groups, %llu stopped inside their shared steps, %llu halved, %llu tail splits, "
                  "%llu walked from k, "
                  "set-up %.3f s, kernels %.3f s",
                  s.full_delay ? "full-delay walk" : "early termination",
                  static_cast<unsigned long long>(s.launches), static_cast<unsigned long long>(s.group_launches),
                  static_cast<unsigned long long>(s.split_launches), s.tail_bits, s.self_record_bits,
                  static_cast<unsigned long long>(s.join_skipped_groups),
                  static_cast<unsigned long long>(s.step_stopped_groups),
                  static_cast<unsigned long long>(s.half_stopped_groups),
                  static_cast<unsigned long long>(s.tail_splits),
                  static_cast<unsigned long long>(s.shallow_walk_groups), s.setup_seconds, s.kernel_seconds);
    return buf;
  }
  std::string SetupNote() const override { return setup_note_; }
  // Builds what a search of `spec` builds on first use (the own record table, the join map).
  Status Prepare(const UnitSpec& spec) override;
  std::string Describe() const override {
    std::string d = "gpu " + std::to_string(options_.device) + " (" + device_name_ + ")";
    if (class_join_.bits != 0) d += ", join map " + std::to_string(class_join_.bits) + " bits";
    if (delay_join_.bits != 0) d += ", delay join maps " + std::to_string(delay_join_.bits) + " bits";
    // The two-step walk's resident blocks an SM: what its block shape and register cap reach.
    if (group_blocks_per_sm_[2] > 0) {
      d += ", two-step walk " + std::to_string(group_blocks_per_sm_[2]) + " x " +
           std::to_string(gpu::kPairWalkBlockThreads) + " threads an SM";
    }
    return d;
  }

  const GpuSearchStats& stats() const { return stats_; }
  bool SharedSteps() const { return options_.shared_step_table && options_.step_bits <= gpu::kMaxSharedStepBits; }
  bool QueueAllowed() const { return options_.walk_queue && !SharedSteps(); }
  // A floor above 0 (the kernel does not filter ladder entries by tile); delay+class units
  // only with class_walk_queue.
  bool Queue() const {
    return QueueAllowed() && spec_.floor > 0 && (spec_.kinds == Kinds::kDelay || ClassesStopEarly());
  }
  // With its smallest open class below 3/4 of the floor a class unit is faster on the plain
  // kernel: at 2^60 with 700 holes from delay 957 up, 9.3e10 plain vs 5.8e10 queued; with
  // 84 holes from 2077 up (floor 2283), 1.8e11 plain vs 8.4e11 queued (H100, lever 37).
  bool ClassesStopEarly() const { return ClassesStopEarly(spec_); }
  bool ClassesStopEarly(const UnitSpec& spec) const {
    return options_.class_walk_queue &&
           (spec.open_holes.empty() || uint64_t{spec.open_holes.front()} * 4 >= uint64_t{spec.floor} * 3);
  }
  // Two table steps a group walk round: the compile-time kPairStepBits shared table, and a tail
  // that every value left walking after a check is beyond, at least 2^(2S).
  bool UsesTwoStepRounds() const {
    return options_.group_walk_round_steps == 2 && options_.group_walk_step_bits == gpu::kPairStepBits &&
           options_.tail_bits >= 2 * gpu::kPairStepBits;
  }
  int GroupBlockThreads(int round_steps) const {
    return round_steps == 2 ? gpu::kPairWalkBlockThreads : options_.queue_block_threads;
  }
  // Whether every member of a residue group of G bits at or above `start` is at least
  // 2^bits after its first k + G T-steps, and h >= 2^G (as the G-bit step needs). After k
  // T-steps N = 2^k h + i is 3^p h + c >= 3^p h (core/sieve.h; p at least the sieve's fewest odd
  // steps), and a T-step at most halves, so 3^p_min h >= 2^(G + bits) suffices. Counting
  // p_min (7 with the 19-bit sieve) instead of none lets units from about 2^33 up take
  // 13-bit groups (and the join map), and from about 2^45 up two-step rounds.
  bool GroupMembersReach(u128 start, int g, int bits) const {
    const u128 h = start >> tables_->sieve->bits();
    if (h < Pow2(static_cast<unsigned>(g))) return false;
    if (g + bits >= 127) return false;
    const u128 pow3 = kPow3[sieve_min_odd_steps_];
    return h >= (Pow2(static_cast<unsigned>(g + bits)) + pow3 - 1) / pow3;
  }
  // The deepest residue groups any unit may take: the step tables Init builds, the rows of
  // the prelude's ancestor table.
  int WidestGroupBits() const {
    return std::max({options_.group_bits, options_.class_group_bits, options_.shallow_group_bits});
  }
  // Whether a group of G bits keeps its arithmetic in range: a member's value after k + G
  // T-steps below 2^128 (N < 2^100 and a T-step at most x3/2: 0.585 (k + G) < 28), and the
  // step between members at depth k, 2^G A1 = 2^G modulus 3^p with p the entry's odd steps,
  // below 2^64. The step after k + G, A2 = modulus 3^(p + p2), may pass 2^64 (k + G > 38):
  // such groups walk from k T-steps (LaunchParams::group_shallow_steps).
  bool GroupFits(int g, unsigned modulus) const {
    if (tables_->sieve->bits() + g > 47) return false;
    u128 a1 = modulus;
    for (int i = 0; i < sieve_max_odd_steps_; ++i) a1 *= 3;
    return (a1 << g) < Pow2(64);
  }
  // No early termination: the unit carries no trusted or covered record table (a provable
  // floor alone), so every number walks to the tail (docs/FLOOR.md).
  bool FullDelay() const { return base_params_.early_stop == 0; }
  int WalkStepBits() const { return options_.group_walk_step_bits > 0 ? options_.group_walk_step_bits : options_.step_bits; }
  // Residue groups need N < 2^100 (no 128-bit overflow in a group's first k + G steps) and
  // a floor above 0 (ladder entries are not filtered by tile). With early termination they
  // need the queue (class units: open classes near the floor); without it every member
  // walks to the tail whatever the open classes, and the groups still share each group's
  // first k + G steps (and the join map skips twins), so they serve every such unit.
  bool Groups() const {
    if (!options_.residue_groups || spec_.end > Pow2(100)) return false;
    return FullDelay() ? QueueAllowed() && spec_.floor > 0 : Queue();
  }

 private:
  // Search for the unit as given.
  Status SearchUnit(const UnitSpec& spec, UnitResult* result, const ProgressFn& progress,
                    const std::atomic<bool>* cancel);
  // The delay records below 2^self_record_bits, from the engine's own searches of [1, 2^20),
  // [2^20, 2^24), ... (cut as a run from 1 is, core/first_unit_cuts.h), each with the floor
  // and record table of the ones before (the first
  // without): complete knowledge of R(v) below 2^B, so a unit leased without a table (a
  // provable floor alone, docs/FLOOR.md) still stops numbers early, exactly. Once per engine.
  // A table built but refused (CheckSelfRecords) stays refused: every later call, and every
  // later Search and Prepare, returns why (the device computed a wrong table).
  Status EnsureSelfRecords();
  // The own table's checks: each record's delay recomputed on the host, and the table equal
  // to the published records below min(2^bits, the published bound) (core/record_table_check.h).
  Status CheckSelfRecords(const std::vector<Record>& records, int bits) const;
  // Fills *tail with the exact delays of every n < 2^bits (host table, then the GPU).
  Status BuildTail(int bits, DeviceArray<uint16_t>* tail);
  // The full-delay tail (options_.full_delay_tail_bits) on first use; *bits 0 if the device
  // cannot hold it (then the unit walks to the common tail: same results, slower).
  Status EnsureFullDelayTail(int* bits);
  // Position of the first computed N >= x in the sieved region, counted from cycle q0.
  u128 SievedPosition(const SieveCycle& cycle, u128 q0, u128 x) const;
  Status Enqueue(Slot& slot, const Job& job);
  Status LaunchTimed(Slot& slot, const Job& job, const char* what,
                     const std::function<cudaError_t()>& launch);
  Status Collect(Slot& slot, const Job& job, UnitResult* part, bool* retry);
  Status RunJobSync(Slot& slot, const Job& job, UnitResult* part);
  Status EnsureCapacity(Slot& slot, uint64_t ladder, uint64_t host_finish);
  // Builds the join map on first use (delay+class searches); false if it cannot serve.
  // The join map (gpu/join_map.h) of a kind's units at level bits (0: not built yet), or why
  // the device could not hold it (then the engine runs without: same results, slower).
  struct JoinMapState {
    DeviceArray<uint8_t> map;  // delay-only: gpu::kJoinDelayVariants maps
    int bits = 0;
    double seconds = 0;
    std::string unavailable;
  };
  JoinMapState& JoinMapOf(Kinds kinds) { return kinds == Kinds::kDelay ? delay_join_ : class_join_; }
  // Builds the kind's join map on first use; *ready false if it cannot serve.
  // group_level: k + G of the unit that asks first (the automatic delay-only level follows it).
  Status EnsureJoinMap(Kinds kinds, int group_level, bool* ready);
  // The residue groups' width for `cycles` whole cycles from `start` (0: none).
  int UnitGroupBits(u128 cycles, u128 start, unsigned modulus, bool classes, bool shallow_table) const;
  // The own record table serves this unit (Search); the unit with it.
  bool UsesSelfRecords(const UnitSpec& spec) const;
  UnitSpec WithSelfRecords(const UnitSpec& spec) const;
  // Its record table ends 16 bits or more below the unit, or it takes the full-delay walk
  // (FullDelay() as SearchUnit sets it).
  bool ShallowTable(const UnitSpec& spec) const;
  // The unit's groups read a join map: delay+class units, and delay-only ones with a shallow table.
  bool JoinKind(const UnitSpec& spec) const;
  // Whether the unit's walks stop early (LaunchParams::early_stop).
  bool EarlyStops(const UnitSpec& spec, const EarlyTermination& et) const;
  struct CyclePlan {
    u128 start, q0;               // the first sieved number's cycle q0
    u128 first, last;             // positions from cycle q0
    u128 full_begin, full_end;    // the whole cycles, from q0
    u128 whole_cycles() const { return full_end > full_begin ? full_end - full_begin : 0; }
  };
  CyclePlan PlanCycles(const SieveCycle& cycle, const UnitSpec& spec) const;
  // Builds the join map if this unit is the first to want it; *join_unit: its groups take it.
  Status PrepareJoinMap(const UnitSpec& spec, bool join_kind, int group_bits, bool* join_unit);
  int JoinMapBits() const;  // the level asked for (options_.join_map_bits, or the automatic one)

  // What a unit's stop, check and bound tables are built from: the spec less its range.
  struct UnitTablesKey {
    Kinds kinds;
    uint32_t floor;
    std::vector<uint32_t> open_holes;
    std::vector<Record> known_records;
    u128 records_complete_below;
    bool operator==(const UnitTablesKey&) const = default;
  };
  static UnitTablesKey UnitTablesKeyOf(const UnitSpec& spec);
  // Builds and uploads those tables (bound_ ... group_walk_check_narrow_ below).
  Status UploadUnitTables(const UnitSpec& spec, const EarlyTermination& et);

  std::shared_ptr<const SearchTables> tables_;
  GpuEngineOptions options_;
  std::string device_name_;
  std::string setup_note_;  // Init's phases and their seconds
  int sm_count_ = 0;
  int sieve_min_odd_steps_ = 0;  // the fewest odd steps among the sieve's first k T-steps
  int sieve_max_odd_steps_ = 0;  // and the most
  int blocks_per_sm_ = 0;
  int queue_blocks_per_sm_ = 0;
  int group_blocks_per_sm_[3] = {0, 0, 0};  // by steps a walk round (1, 2)
  DeviceArray<StepEntry> group_steps_[gpu::kMaxGroupBits + 1];  // the G-bit step tables, G = 5 .. the widest
  DeviceArray<StepEntry> walk_steps_;       // the group walk's shared-memory table, if any
  DeviceArray<StepEntry> steps_;
  DeviceArray<uint16_t> tail_;
  DeviceArray<uint16_t> full_delay_tail_;
  int full_delay_tail_bits_ = 0;        // 0: not built yet
  std::string full_delay_tail_unavailable_;
  DeviceArray<uint16_t> bound_;
  DeviceArray<uint32_t> hole_prefix_;
  DeviceArray<ulonglong2> stop_below_;
  // The residue groups' stop table: stop_below_'s, or in class searches the one for the
  // smallest open class minus 1 (a group stops only when no member can reach an open class).
  DeviceArray<ulonglong2> group_stop_below_;
  uint32_t group_tail_from_ = 0;  // LaunchParams::walk_tail_from of group launches
  uint32_t group_walk_stop_last_ = 0;  // LaunchParams::walk_stop_last
  // The prelude's ancestor thresholds (LaunchParams::ancestor_stop), from group_stop_below_.
  DeviceArray<ulonglong2> group_ancestor_stop_;
  uint32_t group_ancestor_stop_last_ = 0;
  // The group walk's check of a value with e trailing zeros: group_stop_below_[s + e] << e.
  DeviceArray<ulonglong2> group_walk_stop_;
  DeviceArray<ulonglong2> group_walk_check_;  // LaunchParams::walk_check
  DeviceArray<uint64_t> group_walk_check_narrow_;  // LaunchParams::walk_check_narrow
  uint32_t group_tail_from_narrow_ = 0;  // walk_tail_from with it (thresholds below 2^32)
  std::optional<UnitTablesKey> unit_tables_key_;  // the tables on the device now (none: being replaced)
  SieveCycle class_cycle_, delay_cycle_;
  JoinMapState class_join_, delay_join_;
  // EnsureSelfRecords: the records (ascending, from n = 1), complete below 2^self_record_bits_;
  // with a sieve wider than kSelfRecordSieveBits from an engine of that width.
  static constexpr int kSelfRecordSieveBits = kDefaultSieveBits;
  std::vector<Record> self_records_;
  int self_record_bits_ = 0;
  double self_records_seconds_ = 0;
  Status self_records_refused_;  // why the table failed its checks (Ok: it did not)
  bool bootstrapping_ = false;
  Slot slots_[2];
  bool auto_ladder_ = true, auto_finish_ = true;
  uint64_t ladder_cap_ = 0, finish_cap_ = 0;

  // The current search.
  UnitSpec spec_;
  std::vector<bool> is_hole_;
  LaunchParams base_params_;
  GpuSearchStats stats_;
  bool device_set_ = false;
};

}  // namespace collatz::gpu_engine_internal
