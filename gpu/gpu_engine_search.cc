// The GPU engine's search of a unit: its cycles, residue groups and join map, the launches
// it is cut into (two in flight on two streams) and the result they add up to.
#include "gpu/gpu_engine_impl.h"

#include "core/unit_search.h"

namespace collatz::gpu_engine_internal {

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
      // Where the table reaches near the unit, groups whose shared steps end deeper than the
      // default sieve's k + unchecked_group_bits pay only with the checks inside them, so only
      // with many members: the depth k + G decides, so that a wider sieve keeps its members
      // (B, 2^48 numbers, 25-bit sieve: G = 13 with 113 members, 3.146e13 numbers/s, where 24
      // bits kept 227 at G = 13, 3.383e13; session 27).
      const int members =
          !shallow_table && tables_->sieve->bits() + g > kDefaultSieveBits + options_.unchecked_group_bits
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
  // A device whose own record table failed its checks searches nothing more.
  if (!self_records_refused_.ok()) return self_records_refused_;
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
  // A device whose own record table failed its checks searches nothing more.
  if (!self_records_refused_.ok()) return self_records_refused_;
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

GpuEngine::UnitTablesKey GpuEngine::UnitTablesKeyOf(const UnitSpec& spec) {
  return UnitTablesKey{spec.kinds, spec.floor, spec.open_holes, spec.known_records, spec.records_complete_below};
}

// Everything below reads the spec's kinds, floor, holes and records alone (UnitTablesKey).
Status GpuEngine::UploadUnitTables(const UnitSpec& spec, const EarlyTermination& et) {
  const bool classes = spec.kinds == Kinds::kDelayAndClass;
  // Early termination tables (SPEC 3): EarlyTermination's, with finer buckets.
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
  const std::vector<ulonglong2> walk_check =
      PairWalkCheckTable(WalkLookaheadTable(walk_stop, options_.walk_check_bits),
                         options_.walk_check_bits + 2, gpu::kWalkCheckShift);
  STATUS_TRY(group_walk_check_.Upload(walk_check));
  STATUS_TRY(group_walk_check_narrow_.Upload(NarrowWalkCheckTable(walk_check)));
  group_tail_from_narrow_ = PairWalkTailFrom(WalkTailFrom(group_stop, kNarrowCheckShift), gpu::kWalkCheckShift);
  // The shared rows hold thresholds of up to 2^shift - 1 later steps (the one-step walk's
  // table none): its tail test starts that much earlier.
  group_tail_from_ = PairWalkTailFrom(walk_stop.tail_from, gpu::kWalkCheckShift);
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
  return Status::Ok();
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

  const EarlyTermination et(spec, /*residue_bounds=*/false);  // the group tables below have their own
  // Consecutive units of a campaign share their records, floor and holes: their tables are
  // the same, so the last unit's stay on the device (about 0.03 s a unit on the host).
  const UnitTablesKey tables_key = UnitTablesKeyOf(spec);
  stats_.unit_tables_reused = unit_tables_key_.has_value() && *unit_tables_key_ == tables_key;
  if (!stats_.unit_tables_reused) {
    unit_tables_key_.reset();  // until every upload has landed
    STATUS_TRY(UploadUnitTables(spec, et));
    unit_tables_key_ = tables_key;
  }

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
    stats_.group_bits = std::max(stats_.group_bits, group_bits);
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

}  // namespace collatz::gpu_engine_internal
