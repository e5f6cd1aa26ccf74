// The GPU engine's launches: enqueueing one on a stream, collecting its raw output (tallies,
// block-local ladder entries, class-minimum slots, numbers to finish on the host) into a
// UnitResult identical to the CPU engine's, and redoing a launch whose buffers filled.
#include "gpu/gpu_engine_impl.h"

namespace collatz::gpu_engine_internal {

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
    p.walk_stop = group_walk_stop_.get();
    p.walk_check = group_walk_check_.get();
    p.walk_check_narrow = group_walk_check_narrow_.get();
    p.walk_check_bits = options_.walk_check_bits;
    p.walk_stop_last = group_walk_stop_last_;
    p.walk_round_steps = job.walk_round_steps;
    p.walk_narrow = options_.narrow_walk_max_bits > 0 && spec_.end <= Pow2(options_.narrow_walk_max_bits) ? 1 : 0;
    // The narrow check (walk_check_narrow) tests the tail from where the thresholds fall below 2^32.
    p.walk_tail_from = p.walk_narrow != 0 && job.walk_round_steps == 2 ? group_tail_from_narrow_ : group_tail_from_;
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
    p.group_split_min = static_cast<uint32_t>(options_.group_tail_split_min);
    // A2 = modulus 3^odd below 2^64 for odd <= max_odd; groups with more walk from k T-steps.
    int max_odd = 0;
    for (u128 a2 = p.column_modulus * u128{3}; a2 < Pow2(64); a2 *= 3) ++max_odd;
    if (options_.group_a2_max_odd_steps > 0) max_odd = std::min(max_odd, options_.group_a2_max_odd_steps);
    p.group_shallow_steps = static_cast<uint32_t>(p.sieve_bits + job.group_bits + max_odd);
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
  stats_.tail_splits += acc.tail_splits;
  stats_.shallow_walk_groups += acc.shallow_walk_groups;

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

}  // namespace collatz::gpu_engine_internal
