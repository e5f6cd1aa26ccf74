// Host side of the CUDA engine: device tables, launch planning, two streams, and turning
// each launch's raw output (tallies, block-local ladder entries, class-minimum slots,
// numbers to finish on the host) into a UnitResult identical to the CPU engine's.
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

namespace collatz {
namespace {

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
UnitResult MergeInterleaved(UnitResult a, const UnitResult& b, uint32_t floor) {
  std::map<uint32_t, u128> minima;
  for (const Record& r : a.class_minima) minima[r.delay] = r.n;
  for (const Record& r : b.class_minima) {
    auto it = minima.find(r.delay);
    if (it == minima.end() || r.n < it->second) minima[r.delay] = r.n;
  }
  a.class_minima.clear();
  for (const auto& [d, n] : minima) a.class_minima.push_back({n, d});
  a.candidates += b.candidates;
  a.tally_count += b.tally_count;
  a.tally_sum += b.tally_sum;
  a.work_hash += b.work_hash;
  std::vector<Record> all = std::move(a.ladder);
  all.insert(all.end(), b.ladder.begin(), b.ladder.end());
  std::sort(all.begin(), all.end(), [](const Record& x, const Record& y) { return x.n < y.n; });
  a.ladder.clear();
  uint32_t running = floor;
  for (const Record& e : all) {
    if (e.delay > running) {
      a.ladder.push_back(e);
      running = e.delay;
    }
  }
  return a;
}

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
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "%s, %llu launches (%llu residue-group, %llu split), tail %d bits, own table %d bits, "
                  "join map skipped %llu groups, %llu stopped inside their shared steps, %llu halved, "
                  "set-up %.3f s, kernels %.3f s",
                  s.full_delay ? "full-delay walk" : "early termination",
                  static_cast<unsigned long long>(s.launches), static_cast<unsigned long long>(s.group_launches),
                  static_cast<unsigned long long>(s.split_launches), s.tail_bits, s.self_record_bits,
                  static_cast<unsigned long long>(s.join_skipped_groups),
                  static_cast<unsigned long long>(s.step_stopped_groups),
                  static_cast<unsigned long long>(s.half_stopped_groups), s.setup_seconds, s.kernel_seconds);
    return buf;
  }
  std::string SetupNote() const override { return setup_note_; }
  // Builds what a search of `spec` builds on first use (the own record table, the join map).
  Status Prepare(const UnitSpec& spec) override;
  std::string Describe() const override {
    std::string d = "gpu " + std::to_string(options_.device) + " (" + device_name_ + ")";
    if (class_join_.bits != 0) d += ", join map " + std::to_string(class_join_.bits) + " bits";
    if (delay_join_.bits != 0) d += ", delay join maps " + std::to_string(delay_join_.bits) + " bits";
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
  // Two table steps a group walk round: the compile-time 12-bit shared table, and a tail
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
  // T-steps below 2^128 (N < 2^100 and a T-step at most x3/2: 0.585 (k + G) < 28) and the
  // step between members, A2 = modulus 3^(p + p2) with p, p2 the odd steps of the entry and
  // of the G-bit step, below 2^64.
  bool GroupFits(int g, unsigned modulus) const {
    if (tables_->sieve->bits() + g > 47) return false;
    u128 a2 = modulus;
    for (int i = 0; i < sieve_max_odd_steps_ + g; ++i) a2 *= 3;
    return a2 < Pow2(64);
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
  Status EnsureSelfRecords();
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
  DeviceArray<uint64_t> group_steps_[gpu::kMaxGroupBits + 1];  // the G-bit step tables, G = 5 .. the widest (packed)
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
  SieveCycle class_cycle_, delay_cycle_;
  JoinMapState class_join_, delay_join_;
  // EnsureSelfRecords: the records (ascending, from n = 1), complete below 2^self_record_bits_;
  // with a sieve wider than kSelfRecordSieveBits from an engine of that width.
  static constexpr int kSelfRecordSieveBits = kDefaultSieveBits;
  std::vector<Record> self_records_;
  int self_record_bits_ = 0;
  double self_records_seconds_ = 0;
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

Status GpuEngine::BuildTail(int T, DeviceArray<uint16_t>* tail) {
  const TailTable& host_tail = tables_->delay->tail();
  const int base = std::min(T, host_tail.bits());
  STATUS_TRY(tail->Allocate(size_t{1} << T));
  CUDA_TRY(cudaMemcpy(tail->get(), host_tail.delays().data(), (size_t{1} << base) * sizeof(uint16_t),
                      cudaMemcpyHostToDevice));
  if (T > base) {
    if (base < options_.step_bits) return Status::InvalidArgument("host tail table narrower than the step table");
    DeviceArray<int> failed;
    STATUS_TRY(failed.Allocate(1));
    CUDA_TRY(cudaMemset(failed.get(), 0, sizeof(int)));
    CUDA_TRY(gpu::LaunchFillTail(steps_.get(), options_.step_bits, tail->get(), base, T, failed.get(), nullptr));
    CUDA_TRY(cudaDeviceSynchronize());
    int host_failed = 0;
    CUDA_TRY(cudaMemcpy(&host_failed, failed.get(), sizeof(int), cudaMemcpyDeviceToHost));
    if (host_failed != 0) return Status::Internal("tail table construction left 128 bits or 16-bit delays");
  }
  return Status::Ok();
}

Status GpuEngine::EnsureFullDelayTail(int* bits) {
  const int T = options_.full_delay_tail_bits;
  *bits = 0;
  if (T <= options_.tail_bits) return Status::Ok();
  if (full_delay_tail_bits_ == 0 && full_delay_tail_unavailable_.empty()) {
    size_t free_bytes = 0, total_bytes = 0;
    CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
    const size_t need = sizeof(uint16_t) << T;
    // Leave a quarter of the free memory (at least 1 GiB) to the search and the join maps.
    if (need + std::max<size_t>(free_bytes / 4, size_t{1} << 30) > free_bytes) {
      full_delay_tail_unavailable_ = std::to_string(need >> 20) + " MiB needed, " + std::to_string(free_bytes >> 20) +
                                     " MiB free";
      return Status::Ok();
    }
    STATUS_TRY(BuildTail(T, &full_delay_tail_));
    full_delay_tail_bits_ = T;
  }
  *bits = full_delay_tail_bits_;
  return Status::Ok();
}

Status GpuEngine::Init() {
  LimitCudaHardwareQueues();
  const GpuEngineOptions& o = options_;
  if (tables_ == nullptr || tables_->sieve == nullptr || tables_->delay == nullptr) {
    return Status::InvalidArgument("GPU engine needs search tables");
  }
  if (o.step_bits < 1 || o.step_bits > StepTable::kMaxBits) return Status::InvalidArgument("step bits must be in 1..20");
  if (o.tail_bits < o.step_bits || o.tail_bits > TailTable::kMaxBits) {
    return Status::InvalidArgument("tail bits must be in step bits..32");
  }
  if (o.self_record_bits < 0 || o.self_record_bits > 48) return Status::InvalidArgument("self record bits must be in 0..48");
  const std::vector<uint8_t>& odd_steps = tables_->sieve->p();
  sieve_min_odd_steps_ = odd_steps.empty() ? 0 : *std::min_element(odd_steps.begin(), odd_steps.end());
  sieve_max_odd_steps_ = odd_steps.empty() ? 0 : *std::max_element(odd_steps.begin(), odd_steps.end());
  if (o.full_delay_tail_bits != 0 && (o.full_delay_tail_bits < o.tail_bits || o.full_delay_tail_bits > TailTable::kMaxBits)) {
    return Status::InvalidArgument("full-delay tail bits must be 0 or in tail bits..32");
  }
  if (o.queue_column_cycles < 1 || o.queue_column_cycles > 4096) {
    return Status::InvalidArgument("queue column cycles must be in 1..4096");
  }
  for (const int threads : {o.block_threads, o.queue_block_threads}) {
    if (threads != 128 && threads != 256 && threads != 512) {
      return Status::InvalidArgument("threads per block must be 128, 256 or 512");
    }
  }
  if (o.bound_sub_bits < 0 || o.bound_sub_bits > gpu::kMaxBoundSubBits) {
    return Status::InvalidArgument("bound sub-bits must be in 0..8");
  }
  for (const int bits : {o.group_bits, o.class_group_bits, o.shallow_group_bits, o.unchecked_group_bits}) {
    if (bits < 5 || bits > gpu::kMaxGroupBits) {
      return Status::InvalidArgument("group bits must be in 5.." + std::to_string(gpu::kMaxGroupBits));
    }
  }
  if (o.group_walk_step_bits != 0 && (o.group_walk_step_bits < 5 || o.group_walk_step_bits > gpu::kMaxSharedStepBits)) {
    return Status::InvalidArgument("group walk step bits must be 0 or in 5..13");
  }
  if (o.group_walk_rounds < 1 || o.group_walk_rounds > 64) {
    return Status::InvalidArgument("group walk rounds must be in 1..64");
  }
  if (o.join_map_bits < -1 || o.join_map_bits > gpu::kMaxJoinBits) {
    return Status::InvalidArgument("join map bits must be -1 (auto) or in 0..34");
  }
  if (o.group_walk_round_steps != 1 && o.group_walk_round_steps != 2) {
    return Status::InvalidArgument("group walk round steps must be 1 or 2");
  }
  if (o.group_step_check_min_members < 0 || o.deep_group_min_members < 1 || o.class_deep_group_min_members < 1) {
    return Status::InvalidArgument("group member minimums must be positive");
  }
  if (o.group_min_members < 1 || o.group_min_members > 4096 || o.class_group_min_members < 1 ||
      o.class_group_min_members > 4096) {
    return Status::InvalidArgument("group min members must be in 1..4096");
  }
  if (o.narrow_walk_max_bits < 0 || o.narrow_walk_max_bits > 127) {
    return Status::InvalidArgument("narrow_walk_max_bits must be 0 .. 127");
  }
  if (o.group_chunk_members < 1 || o.group_chunk_members > 65535) {
    return Status::InvalidArgument("group chunk members must be in 1..65535");
  }
  if (o.residue_groups && o.queue_block_threads == 512) {
    return Status::InvalidArgument("residue groups run with 128 or 256 queue threads per block");
  }
  if (o.positions_per_launch == 0) return Status::InvalidArgument("positions per launch must be positive");
  // The walk queue keeps a position as a 32-bit offset into its launch.
  if (o.positions_per_launch > (uint64_t{1} << 32)) return Status::InvalidArgument("at most 2^32 positions per launch");
  const int k = tables_->sieve->bits();
  if (k < 1 || k > 40) return Status::InvalidArgument("sieve bits must be in 1..40");

  // The host-side tables are built on a thread while the CUDA context comes up (about 0.1 s
  // each on an H100 host): together they were most of a short run's fixed cost (issue 23).
  struct HostTables {
    std::vector<StepEntry> steps, walk_steps;
    std::vector<std::vector<uint64_t>> group_steps;  // by G
    Status status;
  };
  const bool groups = o.residue_groups && QueueAllowed();
  auto host_tables = std::async(std::launch::async, [this, &o, groups]() {
    HostTables h;
    h.steps = gpu::MakeStepEntries(o.step_bits);
    if (groups) {
      h.group_steps.resize(gpu::kMaxGroupBits + 1);
      for (int g = 5; g <= WidestGroupBits(); ++g) {
        const std::vector<StepEntry> entries = gpu::MakeStepEntries(g);
        h.group_steps[g].resize(entries.size());
        for (size_t i = 0; i < entries.size(); ++i) {
          h.group_steps[g][i] = gpu::PackGroupStep(entries[i].c, entries[i].pow3, entries[i].steps);
        }
      }
      if (o.group_walk_step_bits > 0) h.walk_steps = gpu::MakeStepEntries(o.group_walk_step_bits);
      if (o.group_class_checks && o.group_ancestor_checks) AncestorOptions(0);  // its one-time search (ms)
    }
    // The sieve cycles' host halves (no CUDA call) beside the context's creation.
    h.status = class_cycle_.Plan(tables_->sieve, 1);
    if (h.status.ok()) h.status = delay_cycle_.Plan(tables_->sieve, 9);
    return h;
  });
  // Each phase's seconds go to SetupNote: the fixed cost a short run pays (issue 23).
  auto phase_start = std::chrono::steady_clock::now();
  auto end_phase = [&](const char* name) {
    const auto now = std::chrono::steady_clock::now();
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%s %.3f s", setup_note_.empty() ? "" : ", ", name,
                  std::chrono::duration<double>(now - phase_start).count());
    setup_note_ += buf;
    phase_start = now;
  };
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || o.device < 0 || o.device >= count) {
    cudaGetLastError();
    host_tables.wait();
    return Status::Unavailable("no CUDA device " + std::to_string(o.device));
  }
  CUDA_TRY(cudaSetDevice(o.device));
  device_set_ = true;
  CUDA_TRY(cudaFree(nullptr));  // the context now, so that its cost shows as its own phase
  cudaDeviceProp prop;
  CUDA_TRY(cudaGetDeviceProperties(&prop, o.device));
  device_name_ = prop.name;
  sm_count_ = prop.multiProcessorCount;
  end_phase("context");
  // Resident blocks per SM of the plain kernel and of the walk queue (delay-only units).
  for (const bool queue : {false, true}) {
    int& blocks = queue ? queue_blocks_per_sm_ : blocks_per_sm_;
    blocks = o.blocks_per_sm;
    if (blocks <= 0 && (!queue || QueueAllowed())) {
      CUDA_TRY(gpu::SearchBlocksPerSm(queue ? o.queue_block_threads : o.block_threads, SharedSteps(), o.step_bits, o.full_occupancy, queue,
                                      options_.queue_threads_per_sm, &blocks));
    }
    if (blocks <= 0) blocks = 1;
  }

  if (groups) {
    for (int round_steps = 1; round_steps <= 2; ++round_steps) {
      int& blocks = group_blocks_per_sm_[round_steps];
      blocks = o.blocks_per_sm;
      if (blocks <= 0 && (round_steps == 1 || UsesTwoStepRounds())) {
        CUDA_TRY(gpu::GroupBlocksPerSm(GroupBlockThreads(round_steps), o.queue_threads_per_sm, o.group_walk_step_bits,
                                       round_steps, &blocks));
      }
      if (blocks <= 0) blocks = 1;
    }
  }
  end_phase("occupancy");
  HostTables h = host_tables.get();
  STATUS_TRY(h.status);
  end_phase("host tables");
  STATUS_TRY(steps_.Upload(h.steps));
  for (size_t g = 0; g < h.group_steps.size(); ++g) {
    if (!h.group_steps[g].empty()) STATUS_TRY(group_steps_[g].Upload(h.group_steps[g]));
  }
  if (!h.walk_steps.empty()) STATUS_TRY(walk_steps_.Upload(h.walk_steps));
  {
    // The builder's copy of the sieve if it is on this device (gpu/sieve_builder.h), else an upload.
    const auto built = std::static_pointer_cast<const DeviceSieve>(tables_->device_sieve);
    const bool reuse = built != nullptr && built->device == o.device && built->bits == k &&
                       built->count == tables_->sieve->size();
    DeviceSieve uploaded;
    if (!reuse) STATUS_TRY(uploaded.Upload(*tables_->sieve));
    const DeviceSieve& sieve = reuse ? *built : uploaded;
    STATUS_TRY(class_cycle_.BuildEntries(sieve));
    STATUS_TRY(delay_cycle_.BuildEntries(sieve));
  }
  end_phase("uploads");
  STATUS_TRY(BuildTail(o.tail_bits, &tail_));
  end_phase("tail");
  STATUS_TRY(bound_.Allocate(gpu::kBoundTableSize));

  auto_ladder_ = o.ladder_capacity == 0;
  auto_finish_ = o.host_finish_capacity == 0;
  ladder_cap_ = auto_ladder_ ? (uint64_t{1} << 16) : o.ladder_capacity;
  finish_cap_ = auto_finish_ ? (uint64_t{1} << 14) : o.host_finish_capacity;
  for (Slot& s : slots_) {
    CUDA_TRY(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
    CUDA_TRY(cudaEventCreate(&s.start));
    CUDA_TRY(cudaEventCreate(&s.stop));
    STATUS_TRY(s.acc.Allocate(1));
    STATUS_TRY(s.host_acc.Allocate(1));
    STATUS_TRY(s.ladder.Allocate(ladder_cap_));
    STATUS_TRY(s.host_finish.Allocate(finish_cap_));
    STATUS_TRY(s.class_min.Allocate(gpu::kClassSlots));
    STATUS_TRY(s.host_class_min.Allocate(gpu::kClassSlots));
  }
  CUDA_TRY(cudaDeviceSynchronize());  // the table uploads have landed before any launch
  end_phase("buffers");
  return Status::Ok();
}

u128 GpuEngine::SievedPosition(const SieveCycle& cycle, u128 q0, u128 x) const {
  const int k = tables_->sieve->bits();
  const u128 h = x >> k;
  const u128 q = h / cycle.modulus();
  const unsigned r = static_cast<unsigned>(h % cycle.modulus());
  const uint64_t low = static_cast<uint64_t>(x & (Pow2(static_cast<unsigned>(k)) - 1));
  return (q - q0) * cycle.len() + cycle.VariantStart(r) + cycle.VariantEntriesBelow(r, low);
}

// The deepest automatic level of the delay-only maps (nine variants of 2^(L - 1) bytes).
constexpr int kMaxAutoDelayJoinBits = 33;

int GpuEngine::JoinMapBits() const {
  if (options_.join_map_bits >= 0) return options_.join_map_bits;
  return tables_->sieve->bits() <= 22 ? 32 : gpu::kMaxJoinBits;
}

Status GpuEngine::EnsureJoinMap(Kinds kinds, int group_level, bool* ready) {
  const int k = tables_->sieve->bits();
  JoinMapState& join = JoinMapOf(kinds);
  *ready = false;
  if (join.bits == 0 && join.unavailable.empty()) {
    const auto t0 = std::chrono::steady_clock::now();
    // The level asked for, then (automatic level only) 32 if the device lacks the memory.
    // Delay-only maps come in nine variants (18 GiB at 32 bits, 36 GiB at 33), so their
    // automatic level is the asking unit's k + G, from 32 up to 33: a group reads the map at
    // its own residue mod 2^(k + G), so a map deeper than that serves nothing.
    const bool automatic = options_.join_map_bits < 0;
    const int asked = kinds == Kinds::kDelay && automatic ? std::clamp(group_level, 32, kMaxAutoDelayJoinBits)
                                                          : JoinMapBits();
    for (const int L : {asked, automatic ? 32 : 0}) {
      if (L <= k || join.bits != 0) continue;
      const Status st = kinds == Kinds::kDelay ? BuildDelayJoinMaps(tables_->sieve->residues(), k, L, &join.map)
                                               : BuildJoinMap(tables_->sieve->residues(), k, L, &join.map);
      if (st.code() == Status::Code::kUnavailable) {
        join.unavailable = st.message();
        continue;
      }
      STATUS_TRY(st);
      join.bits = L;
      join.unavailable.clear();
    }
    if (join.bits == 0 && join.unavailable.empty()) join.unavailable = "sieve as deep as the map";
    join.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  *ready = join.bits != 0;
  return Status::Ok();
}

// Residue groups over the whole cycles: G as large as the kind's width allows with
// group_min_members members a group, and every member at least 2^S after its first k + G
// T-steps (GroupMembersReach; S the walk's step width), so that its first walk step needs no
// tail check. Class units want deeper groups (class_group_min_members); where the unit has
// too few cycles for that (wide sieves), groups of group_min_members still beat the walk
// queue alone by far (30-bit sieve, 2^40 numbers at 2^60: 1.90e12 with 32 members against
// 4.3e11 without groups).
int GpuEngine::UnitGroupBits(u128 cycles, u128 start, unsigned modulus, bool classes, bool shallow_table) const {
  if (!Groups() || cycles == 0) return 0;
  const int walk_bits = WalkStepBits();
  int widest = shallow_table ? options_.shallow_group_bits : classes ? options_.class_group_bits : options_.group_bits;
  if (shallow_table && !classes) {
    // Nothing stops inside a shallow unit's shared steps: a deeper group only reaches a
    // deeper join map, so these take the least G whose k + G reaches the deepest automatic
    // map (2^66, 2^44 numbers, H200, 28-bit sieve: G = 8 / 7 / 6 / 5 gave 1.339 / 1.402 /
    // 1.439 / 1.455e12 numbers/s; 19 bits: 14, as before).
    widest = std::min(widest, std::max(5, kMaxAutoDelayJoinBits - tables_->sieve->bits()));
  }
  for (const int min_members : {classes ? options_.class_group_min_members : options_.group_min_members,
                                options_.group_min_members}) {
    for (int g = widest; g >= 5; --g) {
      // Where the table reaches near the unit, groups deeper than unchecked_group_bits pay
      // only with the checks inside their shared steps, so only with many members.
      const int members =
          !shallow_table && g > options_.unchecked_group_bits
              ? std::max(min_members, classes ? options_.class_deep_group_min_members : options_.deep_group_min_members)
              : min_members;
      if (cycles >= static_cast<u128>(members) << g && GroupMembersReach(start, g, walk_bits) && GroupFits(g, modulus)) {
        return g;
      }
    }
  }
  return 0;
}

// The join map serves group launches of units whose bounds are multiples of 2^L (every run
// of twins lies inside; gpu/join_map.h) and whose groups are at least L bits deep. Built at
// the first such unit with groups that starts at a multiple of 2^32, at the level its groups
// read (as far as its bounds are aligned).
Status GpuEngine::PrepareJoinMap(const UnitSpec& spec, bool join_kind, int group_bits, bool* join_unit) {
  *join_unit = false;
  if (!join_kind || group_bits == 0 || JoinMapBits() <= 0) return Status::Ok();
  const u128 trigger = Pow2(static_cast<unsigned>(std::min(JoinMapBits(), 32)));
  if (spec.begin < trigger || spec.begin % trigger != 0) return Status::Ok();
  // The level the groups read, but no deeper than the unit's bounds are aligned (a map of 2^L
  // serves only units on multiples of 2^L).
  int level = tables_->sieve->bits() + group_bits;
  const auto aligned = [&](int bits) {
    const u128 block = Pow2(static_cast<unsigned>(bits));
    return spec.begin % block == 0 && spec.end % block == 0;
  };
  while (level > 32 && !aligned(level)) --level;
  bool ready = false;
  const int k = tables_->sieve->bits();
  STATUS_TRY(EnsureJoinMap(spec.kinds, level, &ready));
  const JoinMapState& join = JoinMapOf(spec.kinds);
  const u128 join_block = Pow2(static_cast<unsigned>(join.bits));
  *join_unit = ready && k + group_bits >= join.bits && spec.begin >= join_block && spec.begin % join_block == 0 &&
               spec.end % join_block == 0;
  return Status::Ok();
}

Status GpuEngine::EnsureCapacity(Slot& slot, uint64_t ladder, uint64_t host_finish) {
  if (ladder > slot.ladder.size()) {
    CUDA_TRY(cudaStreamSynchronize(slot.stream));
    STATUS_TRY(slot.ladder.Allocate(ladder));
  }
  if (host_finish > slot.host_finish.size()) {
    CUDA_TRY(cudaStreamSynchronize(slot.stream));
    STATUS_TRY(slot.host_finish.Allocate(host_finish));
  }
  return Status::Ok();
}

Status GpuEngine::Enqueue(Slot& slot, const Job& job) {
  LaunchParams p = base_params_;
  const uint64_t threads = gpu::kTilePositions;  // positions per tile
  p.ladder_floor = job.ladder_floor;
  p.acc = slot.acc.get();
  p.ladder = slot.ladder.get();
  p.ladder_capacity = static_cast<uint32_t>(std::min<uint64_t>(slot.ladder.size(), 0xFFFFFFFFu));
  p.host_finish = slot.host_finish.get();
  p.host_finish_capacity = static_cast<uint32_t>(std::min<uint64_t>(slot.host_finish.size(), 0xFFFFFFFFu));
  p.class_min = slot.class_min.get();
  p.pos_begin = job.pos_begin;
  p.pos_end = job.pos_end;
  const JoinMapState& join = JoinMapOf(spec_.kinds);
  p.join_map = job.join ? join.map.get() : nullptr;
  p.join_mask = job.join ? (uint64_t{1} << join.bits) - 1 : 0;
  p.join_bits = job.join ? join.bits : 0;
  p.join_delay_variants = job.join && spec_.kinds == Kinds::kDelay ? gpu::kJoinDelayVariants : 0;
  if (job.group) {
    const SieveCycle& cycle = spec_.kinds == Kinds::kDelay ? delay_cycle_ : class_cycle_;
    p.tables.stop_below = group_stop_below_.get();
    const int k = tables_->sieve->bits();
    p.entries = cycle.entries();
    p.cycle_stride = static_cast<uint64_t>(cycle.modulus()) << k;
    p.column_modulus = cycle.modulus();
    // Odd steps until the numbers' differences, 3^odd column_modulus times a power of 2,
    // are multiples of 9 and of 81.
    const uint32_t modulus_threes = cycle.modulus() % 9 == 0 ? 2 : cycle.modulus() % 3 == 0 ? 1 : 0;
    p.group_class_min_odd = options_.group_class_checks ? 2 - modulus_threes : gpu::kNoClassChecks;
    p.group_deep_min_odd = options_.group_class_checks && options_.group_ancestor_checks ? 4 - modulus_threes
                                                                                          : gpu::kNoClassChecks;
    p.ancestor_stop = group_ancestor_stop_.get();
    p.ancestor_stop_last = group_ancestor_stop_last_;
    const u128 base = (job.cycle0 * cycle.modulus()) << k;
    p.base_lo = Lo64(base);
    p.base_hi = Hi64(base);
    p.h_base_lo = Lo64(base >> k);
    p.h_base_hi = Hi64(base >> k);
    p.sieve_bits = k;
    p.group_bits = job.group_bits;
    p.group_steps = group_steps_[job.group_bits].get();
    p.walk_rounds = options_.group_walk_rounds;
    p.walk_step_bits = options_.group_walk_step_bits;
    p.walk_steps = walk_steps_.get();
    p.walk_tail_from = group_tail_from_;
    p.walk_stop = group_walk_stop_.get();
    p.walk_check = group_walk_check_.get();
    p.walk_stop_last = group_walk_stop_last_;
    p.walk_round_steps = job.walk_round_steps;
    p.walk_narrow = options_.narrow_walk_max_bits > 0 && spec_.end <= Pow2(options_.narrow_walk_max_bits) ? 1 : 0;
    p.group_first_entry = job.entry0;
    p.group_entries = job.entries;
    p.group_cycles = job.cycles;
    // The checks inside the shared steps cost G T-steps a group: they pay for groups of many
    // members only (2^60, 2^40 numbers, 28 members: 7.78e12 with, 9.19e12 without).
    p.group_step_checks = base_params_.group_step_checks != 0 &&
                                  (job.cycles >> job.group_bits) >= static_cast<uint32_t>(options_.group_step_check_min_members)
                              ? 1
                              : 0;
    p.group_half_checks = p.group_step_checks != 0 && options_.group_half_checks ? 1 : 0;
    if (slot.entry_stops.size() < job.entries) {
      CUDA_TRY(cudaStreamSynchronize(slot.stream));  // an earlier launch of the slot may still read it
      STATUS_TRY(slot.entry_stops.Allocate(job.entries));
    }
    p.entry_stops = slot.entry_stops.get();
    const uint64_t groups = static_cast<uint64_t>(job.entries) << job.group_bits;
    if (slot.group_skip.size() < groups) {
      CUDA_TRY(cudaStreamSynchronize(slot.stream));
      STATUS_TRY(slot.group_skip.Allocate(groups));
    }
    p.group_skip = slot.group_skip.get();
    const uint64_t rounds = (static_cast<uint64_t>(job.entries) << job.group_bits) / 32;
    p.group_rounds = static_cast<uint32_t>(rounds);  // < 2^28: at most 2^32 positions a launch, 16+ members a group
    const int block_threads = GroupBlockThreads(job.walk_round_steps);
    const uint64_t warps_per_block = static_cast<uint64_t>(block_threads) / 32;
    const int grid = static_cast<int>(std::min<uint64_t>((rounds + warps_per_block - 1) / warps_per_block,
                                                         static_cast<uint64_t>(sm_count_) *
                                                             group_blocks_per_sm_[job.walk_round_steps]));
    ++stats_.group_launches;
    return LaunchTimed(slot, job, "LaunchGroups", [&] { return gpu::LaunchGroups(p, block_threads, grid, slot.stream); });
  }
  if (job.sieved) {
    const SieveCycle& cycle = spec_.kinds == Kinds::kDelay ? delay_cycle_ : class_cycle_;
    const int k = tables_->sieve->bits();
    p.entries = cycle.entries();
    p.cycle_len = static_cast<uint32_t>(cycle.len());
    p.tiles_per_cycle = static_cast<uint32_t>((cycle.len() + threads - 1) / threads);
    p.cycle_stride = static_cast<uint64_t>(cycle.modulus()) << k;
    const u128 base = (job.cycle0 * cycle.modulus()) << k;
    p.base_lo = Lo64(base);
    p.base_hi = Hi64(base);
    p.sieve_bits = k;
    const uint64_t first = job.pos_begin, last = job.pos_end - 1;
    p.tile_begin = (first / cycle.len()) * p.tiles_per_cycle + (first % cycle.len()) / threads;
    p.tile_end = (last / cycle.len()) * p.tiles_per_cycle + (last % cycle.len()) / threads + 1;
    p.first_tile_cycle = p.tile_begin / p.tiles_per_cycle;
    p.first_tile_rem = static_cast<uint32_t>(p.tile_begin % p.tiles_per_cycle);
    if (Queue()) {
      // Column tiles: 32 entries over column_cycles cycles (see LaunchParams).
      const uint64_t first_cycle = first / cycle.len(), last_cycle = last / cycle.len();
      const uint64_t columns = options_.queue_column_cycles;
      p.first_tile_cycle = first_cycle;
      p.last_cycle = last_cycle;
      p.column_cycles = static_cast<uint32_t>(columns);
      p.column_modulus = cycle.modulus();
      p.tile_begin = 0;
      p.tile_end = (last_cycle - first_cycle + columns) / columns * p.tiles_per_cycle;
    }
    if (p.tile_end - p.tile_begin + p.tiles_per_cycle >= (uint64_t{1} << 32)) {
      return Status::Internal("launch too large for 32-bit tile arithmetic");
    }
  } else {
    p.entries = nullptr;
    p.tile_begin = job.pos_begin / threads;
    p.tile_end = (job.pos_end - 1) / threads + 1;
  }
  const uint64_t tiles = p.tile_end - p.tile_begin;
  const int block_threads = Queue() ? options_.queue_block_threads : options_.block_threads;
  const uint64_t warps_per_block = static_cast<uint64_t>(block_threads) / 32;
  const int grid = static_cast<int>(std::min<uint64_t>((tiles + warps_per_block - 1) / warps_per_block,
                                                       static_cast<uint64_t>(sm_count_) * (Queue() ? queue_blocks_per_sm_ : blocks_per_sm_)));
  return LaunchTimed(slot, job, "LaunchSearch",
                     [&] { return gpu::LaunchSearch(p, block_threads, SharedSteps(), grid, slot.stream); });
}

Status GpuEngine::LaunchTimed(Slot& slot, const Job& job, const char* what,
                              const std::function<cudaError_t()>& launch) {
  // Accumulators cleared, the launch timed by events, the results copied back on the slot's stream.
  CUDA_TRY(cudaMemsetAsync(slot.acc.get(), 0, sizeof(Accumulators), slot.stream));
  if (spec_.kinds == Kinds::kDelayAndClass) {
    CUDA_TRY(cudaMemsetAsync(slot.class_min.get(), 0xFF, gpu::kClassSlots * sizeof(unsigned long long), slot.stream));
  }
  CUDA_TRY(cudaEventRecord(slot.start, slot.stream));
  if (const cudaError_t err = launch(); err != cudaSuccess) return CudaStatus(what, err);
  CUDA_TRY(cudaEventRecord(slot.stop, slot.stream));
  CUDA_TRY(cudaMemcpyAsync(slot.host_acc.get(), slot.acc.get(), sizeof(Accumulators), cudaMemcpyDeviceToHost,
                           slot.stream));
  if (spec_.kinds == Kinds::kDelayAndClass) {
    CUDA_TRY(cudaMemcpyAsync(slot.host_class_min.get(), slot.class_min.get(),
                             gpu::kClassSlots * sizeof(unsigned long long), cudaMemcpyDeviceToHost, slot.stream));
  }
  ++stats_.launches;
  slot.busy = true;
  slot.job = job;
  return Status::Ok();
}

Status GpuEngine::Collect(Slot& slot, const Job& job, UnitResult* part, bool* retry) {
  *retry = false;
  slot.busy = false;
  CUDA_TRY(cudaStreamSynchronize(slot.stream));
  CUDA_TRY(cudaGetLastError());
  float ms = 0;
  CUDA_TRY(cudaEventElapsedTime(&ms, slot.start, slot.stop));
  stats_.kernel_seconds += ms / 1e3;
  const Accumulators acc = *slot.host_acc.get();
  if (acc.candidates != job.pos_end - job.pos_begin) {
    return Status::Internal("GPU launch examined " + std::to_string(acc.candidates) + " numbers, expected " +
                            std::to_string(job.pos_end - job.pos_begin));
  }
  if (acc.ladder_count > slot.ladder.size() || acc.host_finish_count > slot.host_finish.size()) {
    *retry = true;
    return Status::Ok();
  }
  const bool classes = spec_.kinds == Kinds::kDelayAndClass;
  const uint32_t floor = spec_.floor;
  auto is_open = [&](uint32_t d) { return d > floor || (classes && is_hole_[d]); };

  std::vector<LadderEntry> ladder(acc.ladder_count);
  std::vector<HostFinishEntry> finish(acc.host_finish_count);
  if (!ladder.empty()) {
    CUDA_TRY(cudaMemcpy(ladder.data(), slot.ladder.get(), ladder.size() * sizeof(LadderEntry), cudaMemcpyDeviceToHost));
  }
  if (!finish.empty()) {
    CUDA_TRY(cudaMemcpy(finish.data(), slot.host_finish.get(), finish.size() * sizeof(HostFinishEntry),
                        cudaMemcpyDeviceToHost));
  }
  stats_.ladder_entries += ladder.size();
  stats_.host_finished += finish.size();
  stats_.join_skipped_groups += acc.join_skipped_groups;
  stats_.step_stopped_groups += acc.step_stopped_groups;
  stats_.half_stopped_groups += acc.half_stopped_groups;

  UnitResult r;
  r.candidates = acc.candidates;
  r.tally_count = acc.tally_count;
  r.tally_sum = acc.tally_sum;
  r.work_hash = acc.work_hash;
  std::vector<Record> entries;
  entries.reserve(ladder.size() + finish.size());
  for (const LadderEntry& e : ladder) entries.push_back({MakeU128(e.n_hi, e.n_lo), e.delay});
  std::map<uint32_t, u128> minima;
  if (classes) {
    u128 base = 0;  // class_min holds N - base (GroupNumber and PositionNumber's rel)
    if (job.sieved || job.group) {
      const SieveCycle& cycle = class_cycle_;
      base = (job.cycle0 * cycle.modulus()) << tables_->sieve->bits();
    }
    const unsigned long long* slots = slot.host_class_min.get();
    for (uint32_t d = 0; d < gpu::kClassSlots; ++d) {
      if (slots[d] != ~0ULL) minima[d] = base + slots[d];
    }
  }
  for (const HostFinishEntry& e : finish) {
    const u128 n = MakeU128(e.n_hi, e.n_lo);
    const uint32_t d = tables_->delay->Delay(n);  // exact, through the wide path where needed
    if (!is_open(d)) continue;
    // A join-map run's smallest member stands for the whole run (gpu/join_map.h).
    r.tally_count += e.weight;
    r.tally_sum += static_cast<uint64_t>(d) * e.weight;
    if (d > floor) entries.push_back({n, d});
    if (classes) {
      auto it = minima.find(d);
      if (it == minima.end() || n < it->second) minima[d] = n;
    }
  }
  std::sort(entries.begin(), entries.end(), [](const Record& a, const Record& b) { return a.n < b.n; });
  uint32_t running = std::max(floor, job.ladder_floor);
  for (const Record& e : entries) {
    if (e.delay > running) {
      r.ladder.push_back(e);
      running = e.delay;
    }
  }
  for (const auto& [d, n] : minima) r.class_minima.push_back({n, d});
  *part = std::move(r);
  return Status::Ok();
}

// Runs one launch to completion on `slot`, growing the buffers or splitting the launch in
// two when a buffer filled.
Status GpuEngine::RunJobSync(Slot& slot, const Job& job, UnitResult* part) {
  STATUS_TRY(Enqueue(slot, job));
  bool retry = false;
  STATUS_TRY(Collect(slot, job, part, &retry));
  if (!retry) return Status::Ok();
  const Accumulators acc = *slot.host_acc.get();
  constexpr uint64_t kMaxAuto = uint64_t{1} << 26;
  const bool grow_ladder = acc.ladder_count > slot.ladder.size() && auto_ladder_ && acc.ladder_count <= kMaxAuto;
  const bool grow_finish =
      acc.host_finish_count > slot.host_finish.size() && auto_finish_ && acc.host_finish_count <= kMaxAuto;
  const bool ladder_ok = acc.ladder_count <= slot.ladder.size() || grow_ladder;
  const bool finish_ok = acc.host_finish_count <= slot.host_finish.size() || grow_finish;
  if (ladder_ok && finish_ok) {
    STATUS_TRY(EnsureCapacity(slot, grow_ladder ? acc.ladder_count + acc.ladder_count / 4 : 0,
                              grow_finish ? acc.host_finish_count + acc.host_finish_count / 4 : 0));
    return RunJobSync(slot, job, part);
  }
  if (job.pos_end - job.pos_begin <= 1) return Status::Internal("GPU buffer cannot hold one number's output");
  ++stats_.split_launches;
  Job first = job, second = job;
  if (job.group && job.entries > 1) {  // halve the entries
    first.entries = job.entries / 2;
    second.entry0 = job.entry0 + first.entries;
    second.entries = job.entries - first.entries;
  } else if (job.group) {  // one entry: halve its cycles
    first.cycles = job.cycles / 2;
    second.cycle0 = job.cycle0 + first.cycles;
    second.cycles = job.cycles - first.cycles;
  } else {
    first.pos_end = second.pos_begin = job.pos_begin + (job.pos_end - job.pos_begin) / 2;
  }
  if (job.group) {
    first.pos_end = static_cast<uint64_t>(first.entries) * first.cycles;
    second.pos_end = static_cast<uint64_t>(second.entries) * second.cycles;
  }
  UnitResult a, b;
  STATUS_TRY(RunJobSync(slot, first, &a));
  STATUS_TRY(RunJobSync(slot, second, &b));
  if (job.group) {
    // The halves interleave in N: merge their ladders, then filter.
    *part = MergeInterleaved(std::move(a), b, spec_.floor);
    return Status::Ok();
  }
  UnitResultCombiner combiner(spec_.floor);
  combiner.Add(a);
  combiner.Add(b);
  *part = combiner.Finish();
  return Status::Ok();
}

Status GpuEngine::EnsureSelfRecords() {
  const int B = options_.self_record_bits;
  if (self_record_bits_ == B) return Status::Ok();
  const auto t0 = std::chrono::steady_clock::now();
  if (tables_->sieve->bits() > kSelfRecordSieveBits) {
    // A wide sieve's searches of small units are slow (few cycles, shallow groups: below
    // 2^42 on an H200 0.68 s with 19 bits, 1.88 s with 28): the table comes from an engine of
    // the default width, sharing this one's step and tail tables. The records are the same.
    // If that engine cannot be had (memory), this one searches as below.
    auto narrow = std::make_shared<SearchTables>();
    STATUS_TRY(Sieve::Generate(kSelfRecordSieveBits, &narrow->sieve));
    narrow->delay_offsets = std::make_shared<OffsetTable>(narrow->sieve, 9);
    narrow->delay = tables_->delay;
    GpuEngine child(narrow, options_);
    if (child.Init().ok() && child.EnsureSelfRecords().ok()) {
      self_records_ = child.self_records_;
      self_record_bits_ = B;
      self_records_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      return Status::Ok();
    }
    CUDA_TRY(cudaSetDevice(options_.device));
  }
  bootstrapping_ = true;
  std::vector<FinishedUnit> units;
  MergedRecords merged;
  Status st;
  const u128 top = Pow2(static_cast<unsigned>(B));
  for (u128 begin = 1; begin < top && st.ok();) {
    FinishedUnit unit;
    unit.begin = begin;
    unit.end = FirstUnitCut(begin, top);
    begin = unit.end;
    unit.kinds = Kinds::kDelay;
    UnitSpec spec;
    spec.begin = unit.begin;
    spec.end = unit.end;
    spec.kinds = Kinds::kDelay;
    if (!merged.delay_final.empty()) {
      spec.floor = merged.delay_final.back().delay;
      spec.known_records = merged.delay_final;
      spec.records_complete_below = unit.begin;
    }
    st = SearchUnit(spec, &unit.result, nullptr, nullptr);
    if (!st.ok()) break;
    units.push_back(std::move(unit));
    merged = MergeRecords({}, units);
  }
  bootstrapping_ = false;
  STATUS_TRY(st);
  if (merged.covered_prefix != Pow2(static_cast<unsigned>(B)) || merged.delay_final.empty() ||
      merged.delay_final.front().n != 1) {
    return Status::Internal("engine's own record table: wrong coverage");
  }
  // Each record's delay again on the host (exact), and ascending in n and delay.
  for (size_t i = 0; i < merged.delay_final.size(); ++i) {
    const Record& r = merged.delay_final[i];
    if (tables_->delay->Delay(r.n) != r.delay ||
        (i > 0 && (r.n <= merged.delay_final[i - 1].n || r.delay <= merged.delay_final[i - 1].delay))) {
      return Status::Internal("engine's own record table: record " + ToDecimal(r.n) + " does not check");
    }
  }
  self_records_ = merged.delay_final;
  self_record_bits_ = B;
  self_records_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return Status::Ok();
}

bool GpuEngine::UsesSelfRecords(const UnitSpec& spec) const {
  const int B = options_.self_record_bits;
  // The table serves where it can stop numbers: a floor above 0, and (delay+class units)
  // open classes near the floor; results do not change (core/unit.h).
  // The table is built with this engine's own launches: an engine tuned for tests (small
  // launches, fixed one-entry buffers) would take hours over 2^42 numbers, so it goes without.
  const bool launches_fit = options_.positions_per_launch >= (uint64_t{1} << 20) && options_.ladder_capacity == 0 &&
                            options_.host_finish_capacity == 0;
  // Nor does a unit 2^16 times smaller than the table's searches (the worker's self-test
  // windows): it walks to the tail sooner than the table is built.
  const bool unit_worth_it = B <= 16 || spec.end - spec.begin >= Pow2(static_cast<unsigned>(B - 16));
  return B > 0 && launches_fit && unit_worth_it && options_.early_termination && spec.floor > 0 &&
      spec.begin >= Pow2(static_cast<unsigned>(B)) &&
      spec.records_complete_below < Pow2(static_cast<unsigned>(B)) &&
      (spec.kinds == Kinds::kDelay || ClassesStopEarly(spec));
}

UnitSpec GpuEngine::WithSelfRecords(const UnitSpec& spec) const {
  UnitSpec with_table = spec;
  with_table.known_records = self_records_;
  with_table.records_complete_below = Pow2(static_cast<unsigned>(options_.self_record_bits));
  return with_table;
}

// Delay-only units whose record table reaches near them stop most groups before any walk:
// there the join map's lookups cost more than its skips save (2^60, H100: 8.06e12 with,
// 9.15e12 without). Where it ends 16 bits or more below the unit (none, or the engine's own
// table), most groups walk, and the map pays (2^66 without a table: 6.1e11 -> 7.4e11).
bool GpuEngine::ShallowTable(const UnitSpec& spec) const {
  return FullDelay() || spec.records_complete_below < (spec.begin >> 16);
}

bool GpuEngine::EarlyStops(const UnitSpec& spec, const EarlyTermination& et) const {
  return options_.early_termination && et.enabled() && (spec.kinds == Kinds::kDelay || ClassesStopEarly(spec));
}

bool GpuEngine::JoinKind(const UnitSpec& spec) const {
  return spec.kinds == Kinds::kDelayAndClass || (options_.delay_join_map && ShallowTable(spec));
}

GpuEngine::CyclePlan GpuEngine::PlanCycles(const SieveCycle& cycle, const UnitSpec& spec) const {
  const int k = tables_->sieve->bits();
  CyclePlan plan;
  plan.start = std::max(spec.begin, Pow2(static_cast<unsigned>(k)));
  plan.q0 = (plan.start >> k) / cycle.modulus();
  plan.first = SievedPosition(cycle, plan.q0, plan.start);
  plan.last = SievedPosition(cycle, plan.q0, spec.end);
  plan.full_begin = (plan.first + cycle.len() - 1) / cycle.len();
  plan.full_end = plan.last / cycle.len();
  return plan;
}

Status GpuEngine::Prepare(const UnitSpec& spec) {
  STATUS_TRY(ValidateUnitSpec(spec));
  CUDA_TRY(cudaSetDevice(options_.device));
  UnitSpec unit = spec;
  if (UsesSelfRecords(spec)) {
    STATUS_TRY(EnsureSelfRecords());
    unit = WithSelfRecords(spec);
  }
  // Groups() and FullDelay() read the unit's state as SearchUnit sets it.
  spec_ = unit;
  const EarlyTermination et(unit, /*residue_bounds=*/false);
  base_params_.early_stop = EarlyStops(unit, et) ? 1 : 0;
  if (unit.end <= Pow2(static_cast<unsigned>(tables_->sieve->bits()))) return Status::Ok();
  const bool classes = unit.kinds == Kinds::kDelayAndClass;
  const SieveCycle& cycle = classes ? class_cycle_ : delay_cycle_;
  const CyclePlan plan = PlanCycles(cycle, unit);
  const int group_bits = UnitGroupBits(plan.whole_cycles(), plan.start, cycle.modulus(), classes, ShallowTable(unit));
  bool join_unit = false;
  return PrepareJoinMap(unit, JoinKind(unit), group_bits, &join_unit);
}

Status GpuEngine::Search(const UnitSpec& spec, UnitResult* result, const ProgressFn& progress,
                         const std::atomic<bool>* cancel) {
  STATUS_TRY(ValidateUnitSpec(spec));
  CUDA_TRY(cudaSetDevice(options_.device));
  if (UsesSelfRecords(spec)) {
    STATUS_TRY(EnsureSelfRecords());
    const Status st = SearchUnit(WithSelfRecords(spec), result, progress, cancel);
    stats_.self_record_bits = options_.self_record_bits;
    stats_.self_records_seconds = self_records_seconds_;
    return st;
  }
  return SearchUnit(spec, result, progress, cancel);
}

Status GpuEngine::SearchUnit(const UnitSpec& spec, UnitResult* result, const ProgressFn& progress,
                             const std::atomic<bool>* cancel) {
  const auto search_start = std::chrono::steady_clock::now();
  STATUS_TRY(ValidateUnitSpec(spec));
  CUDA_TRY(cudaSetDevice(options_.device));
  stats_ = GpuSearchStats{};
  spec_ = spec;
  const bool classes = spec.kinds == Kinds::kDelayAndClass;
  is_hole_.assign(static_cast<size_t>(spec.floor) + 1, false);
  if (classes) {
    for (uint32_t d : spec.open_holes) is_hole_[d] = true;
  }

  // Early termination tables (SPEC 3): EarlyTermination's, with finer buckets.
  const EarlyTermination et(spec, /*residue_bounds=*/false);  // the group tables below have their own
  const std::vector<uint16_t> bound = BuildBoundTable(spec, options_.bound_sub_bits);
  CUDA_TRY(cudaMemcpy(bound_.get(), bound.data(), bound.size() * sizeof(uint16_t), cudaMemcpyHostToDevice));
  std::vector<uint32_t> hole_prefix = et.hole_prefix();
  if (hole_prefix.size() != static_cast<size_t>(spec.floor) + 2) return Status::Internal("hole prefix size");
  STATUS_TRY(hole_prefix_.Upload(hole_prefix));
  // Exact stop thresholds (gpu/stop_tables.h): the unit's, and the residue groups' (in class
  // searches the smallest open class less 1, the monotone form of the class test).
  STATUS_TRY(stop_below_.Upload(BuildStopTable(spec, spec.floor)));
  const int64_t group_limit =
      classes && !spec.open_holes.empty() ? static_cast<int64_t>(spec.open_holes.front()) - 1 : spec.floor;
  const std::vector<ulonglong2> group_stop = BuildStopTable(spec, group_limit);
  STATUS_TRY(group_stop_below_.Upload(group_stop));
  const WalkStopTable walk_stop = BuildWalkStopTable(group_stop, options_.tail_bits);
  STATUS_TRY(group_walk_stop_.Upload(walk_stop.entries));
  STATUS_TRY(group_walk_check_.Upload(PairWalkCheckTable(walk_stop)));
  group_tail_from_ = walk_stop.tail_from;
  group_walk_stop_last_ = walk_stop.last_row;
  if (options_.group_class_checks) {
    // Rows for the prelude's steps: at most 2 (k + G), each T-step one or two steps.
    const AncestorStopTable ancestor_stop =
        BuildAncestorStopTable(group_stop, 2 * static_cast<size_t>(tables_->sieve->bits() + WidestGroupBits()) + 1);
    STATUS_TRY(group_ancestor_stop_.Upload(ancestor_stop.entries));
    group_ancestor_stop_last_ = ancestor_stop.last_row;
  }
  // cudaMemcpy from pageable memory may return before its DMA lands, and the launches run
  // on non-blocking streams that do not wait for it: finish every upload first.
  CUDA_TRY(cudaDeviceSynchronize());

  LaunchParams& p = base_params_;
  p = LaunchParams{};
  p.tables.steps = steps_.get();
  p.tables.step_bits = options_.step_bits;
  p.tables.tail = tail_.get();
  p.tables.tail_bits = options_.tail_bits;
  p.tables.bound = bound_.get();
  p.tables.stop_below = stop_below_.get();
  p.tables.bound_sub_bits = options_.bound_sub_bits;
  p.tables.hole_prefix = hole_prefix_.get();
  p.floor = spec.floor;
  p.classes = classes ? 1 : 0;
  // Delay+class units whose open classes lie far below the floor can stop almost nothing:
  // they take the full-delay walk (no stop tables), as units without a table do.
  p.early_stop = EarlyStops(spec, et) ? 1 : 0;
  p.full_occupancy = options_.full_occupancy ? 1 : 0;
  p.queue = Queue() ? 1 : 0;
  p.queue_threads_per_sm = options_.queue_threads_per_sm;
  // First-block pattern: odd n mod 18 computed by the kind's rule.
  p.period = classes ? 2 : 18;
  p.npat = 0;
  for (unsigned n = 1; n < p.period; n += 2) {
    if (OddNumberIsComputed(n % 9, spec.kinds, 9)) p.pattern[p.npat++] = n;
  }

  // The join map (PrepareJoinMap) serves delay-only units with options_.delay_join_map.
  bool join_unit = false;
  // Delay-only units whose record table reaches near them stop most groups before any walk:
  // there the map's lookups cost more than its skips save (2^60, H100: 8.06e12 with, 9.15e12
  // without). Where it ends 16 bits or more below the unit (none, or the engine's own table),
  // most groups walk, and the map pays (2^66 without a table: 6.1e11 -> 7.4e11).
  const bool shallow_table = ShallowTable(spec);
  const bool join_kind = JoinKind(spec);
  // Where the table reaches near the unit, the group's last member is also checked inside
  // its k + G shared steps (GroupSkipKernel); elsewhere nothing stops there.
  p.group_step_checks = p.early_stop != 0 && !shallow_table ? 1 : 0;
  JoinMapState& join = JoinMapOf(spec.kinds);
  // Full-delay units end their walks in a wider tail: each bit saves about five T-steps of
  // every walk (2^66, 2^40 numbers on an H100: 5.2e11 numbers/s with 24 bits, 6.2e11 with 32).
  if (FullDelay() && Groups()) {
    int wide = 0;
    STATUS_TRY(EnsureFullDelayTail(&wide));
    if (wide != 0) {
      p.tables.tail = full_delay_tail_.get();
      p.tables.tail_bits = wide;
    }
  }
  stats_.tail_bits = p.tables.tail_bits;
  stats_.full_delay = FullDelay();

  // Plan the launches: the first block, then the sieved blocks, in ascending order.
  const int k = tables_->sieve->bits();
  const u128 block = Pow2(static_cast<unsigned>(k));
  std::vector<Job> jobs;
  const uint64_t per_launch = options_.positions_per_launch;
  u128 total_positions = 0;
  if (spec.begin < block) {
    auto pos_of = [&](u128 x) -> uint64_t {
      const uint64_t v = static_cast<uint64_t>(x);
      uint64_t pos = (v / p.period) * p.npat;
      for (uint32_t i = 0; i < p.npat; ++i) pos += p.pattern[i] < v % p.period ? 1 : 0;
      return pos;
    };
    const uint64_t first = pos_of(spec.begin), last = pos_of(std::min(spec.end, block));
    for (uint64_t at = first; at < last; at += std::min(per_launch, last - at)) {
      Job j;
      j.pos_begin = at;
      j.pos_end = at + std::min(per_launch, last - at);
      jobs.push_back(j);
    }
    total_positions += last - first;
  }
  if (spec.end > block) {
    const SieveCycle& cycle = classes ? class_cycle_ : delay_cycle_;
    const CyclePlan plan = PlanCycles(cycle, spec);
    const u128 start = plan.start, q0 = plan.q0, first = plan.first, last = plan.last;
    // Keep N - base of every launch below 2^64.
    const uint64_t stride = static_cast<uint64_t>(cycle.modulus()) << k;
    const uint64_t max_cycles = (uint64_t{1} << 62) / stride;
    const uint64_t limit = std::max<uint64_t>(1, std::min<u128>(per_launch, static_cast<u128>(max_cycles - 2) * cycle.len()));
    if ((last - first) / limit > (static_cast<u128>(1) << 24)) {
      return Status::InvalidArgument("unit too large for one GPU search (more than 2^24 launches); split it");
    }
    // Whether the groups take the join map; the positions beside them then follow it too.
    bool groups_join = false;
    auto position_jobs = [&](u128 from, u128 to) {
      for (u128 at = from; at < to;) {
        const uint64_t n = static_cast<uint64_t>(std::min<u128>(limit, to - at));
        Job j;
        j.sieved = true;
        j.join = groups_join;
        j.cycle0 = q0 + at / cycle.len();
        j.pos_begin = static_cast<uint64_t>(at % cycle.len());
        j.pos_end = j.pos_begin + n;
        jobs.push_back(j);
        at += n;
      }
    };
    const u128 full_begin = plan.full_begin, full_end = plan.full_end;
    const int group_bits = UnitGroupBits(plan.whole_cycles(), start, cycle.modulus(), classes, shallow_table);
    const int walk_bits = WalkStepBits();
    // Two table steps a walk round when every member is at least 2^(2S) after k + G steps.
    const int round_steps =
        group_bits != 0 && UsesTwoStepRounds() && GroupMembersReach(start, group_bits, 2 * walk_bits) ? 2 : 1;
    // Positions beside the groups follow the map in the walk queue's finishing path; the plain
    // kernel cannot, so a unit whose positions would take it runs without the map.
    const bool positions_beside = first != full_begin * cycle.len() || full_end * cycle.len() != last;
    STATUS_TRY(PrepareJoinMap(spec, join_kind, group_bits, &join_unit));
    groups_join = join_unit && (Queue() || !positions_beside);
    if (group_bits == 0) {
      position_jobs(first, last);
    } else {
      position_jobs(first, full_begin * cycle.len());
      // Chunks of at most group_chunk_members members a group (and below 2^31 cycles: a
      // launch's positions are 32-bit); each launch takes whole entries over a chunk.
      const u128 chunk = std::min(static_cast<u128>(options_.group_chunk_members) << group_bits, u128{1} << 31);
      for (u128 c = full_begin; c < full_end; c += std::min(chunk, full_end - c)) {
        const uint32_t cycles = static_cast<uint32_t>(std::min(chunk, full_end - c));
        const uint64_t per = std::max<uint64_t>(1, std::min<uint64_t>(limit / cycles, (uint64_t{1} << 32) / cycles - 1));
        for (uint64_t e = 0; e < cycle.len(); e += std::min(per, cycle.len() - e)) {
          Job j;
          j.group = true;
          j.group_bits = group_bits;
          j.walk_round_steps = round_steps;
          j.join = groups_join;
          j.cycle0 = q0 + c;
          j.cycles = cycles;
          j.entry0 = static_cast<uint32_t>(e);
          j.entries = static_cast<uint32_t>(std::min(per, cycle.len() - e));
          j.pos_end = static_cast<uint64_t>(j.entries) * cycles;
          jobs.push_back(j);
        }
      }
      position_jobs(full_end * cycle.len(), last);
    }
    total_positions += last - first;
  }

  stats_.join_map_bits = join.bits;
  stats_.join_map_seconds = join.seconds;
  stats_.join_map_unavailable = join.unavailable;

  // Two launches in flight on two streams; results are combined in order, or, when
  // residue-group launches (whole entries, not ascending ranges of N) take part, summed
  // with every launch's ladder entries merged and filtered at the end.
  const bool unordered = std::any_of(jobs.begin(), jobs.end(), [](const Job& j) { return j.group; });
  UnitResult unordered_total;
  UnitResultCombiner combiner(spec.floor);
  uint32_t running_max = spec.floor;
  const u128 unit_numbers = spec.end - spec.begin;
  const uint64_t total_numbers = unit_numbers > ~uint64_t{0} ? ~uint64_t{0} : static_cast<uint64_t>(unit_numbers);
  u128 done_positions = 0;
  std::deque<size_t> in_flight;  // job indices; job i runs on slot i % 2
  Status failure;
  auto collect_front = [&]() -> Status {
    const size_t i = in_flight.front();
    in_flight.pop_front();
    Slot& slot = slots_[i % 2];
    UnitResult part;
    bool retry = false;
    STATUS_TRY(Collect(slot, jobs[i], &part, &retry));
    if (retry) STATUS_TRY(RunJobSync(slot, jobs[i], &part));
    if (unordered) {
      unordered_total = MergeInterleaved(std::move(unordered_total), part, spec.floor);
    } else {
      combiner.Add(part);
    }
    for (const Record& e : part.ladder) running_max = std::max(running_max, e.delay);
    done_positions += jobs[i].pos_end - jobs[i].pos_begin;
    if (progress) {
      const long double frac = total_positions == 0 ? 1.0L
                                                    : static_cast<long double>(done_positions) /
                                                          static_cast<long double>(total_positions);
      progress(static_cast<uint64_t>(frac * static_cast<long double>(total_numbers)), total_numbers);
    }
    return Status::Ok();
  };
  bool cancelled = false;
  for (size_t i = 0; i < jobs.size() && failure.ok(); ++i) {
    if (cancel != nullptr && cancel->load()) {
      cancelled = true;
      break;
    }
    if (in_flight.size() == 2) failure = collect_front();
    if (!failure.ok()) break;
    // Every later ladder entry lies above the running max (launches in ascending order).
    jobs[i].ladder_floor = unordered ? spec.floor : running_max;
    if (i == 0) {
      stats_.setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - search_start).count();
    }
    failure = Enqueue(slots_[i % 2], jobs[i]);
    if (failure.ok()) in_flight.push_back(i);
  }
  while (!in_flight.empty()) {
    if (failure.ok() && !cancelled) {
      failure = collect_front();
    } else {
      Slot& slot = slots_[in_flight.front() % 2];
      in_flight.pop_front();
      cudaStreamSynchronize(slot.stream);
      slot.busy = false;
    }
  }
  if (!failure.ok()) {
    cudaGetLastError();
    return failure;
  }
  if (cancelled) return Status::Unavailable("search cancelled");
  if (unordered) {
    *result = std::move(unordered_total);
    return Status::Ok();
  }
  *result = combiner.Finish();
  return Status::Ok();
}

}  // namespace

// The engine keeps two launches in flight on two streams. CUDA's default of eight hardware
// queues a context made its creation take 0.12-0.16 s on an H200, two queues 0.06-0.09 s, with
// the same search (a 2^44-number unit at 2^66: 2.04 s either way). Before the first CUDA call
// of the process; a value the user set wins.
void LimitCudaHardwareQueues() {
  static std::once_flag once;
  std::call_once(once, [] { setenv("CUDA_DEVICE_MAX_CONNECTIONS", "2", /*overwrite=*/0); });
}

int GpuDeviceCount() {
  LimitCudaHardwareQueues();
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

void WarmGpuContext(int device) {
  LimitCudaHardwareQueues();
  if (cudaSetDevice(device) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) cudaGetLastError();
}

Status MakeGpuEngine(std::shared_ptr<const SearchTables> tables, const GpuEngineOptions& options,
                     std::unique_ptr<SearchEngine>* out) {
  auto engine = std::make_unique<GpuEngine>(std::move(tables), options);
  STATUS_TRY(engine->Init());
  *out = std::move(engine);
  return Status::Ok();
}

GpuSearchStats LastGpuSearchStats(const SearchEngine& engine) {
  const auto* gpu = dynamic_cast<const GpuEngine*>(&engine);
  return gpu == nullptr ? GpuSearchStats{} : gpu->stats();
}

}  // namespace collatz
