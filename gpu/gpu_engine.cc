// Host side of the CUDA engine: device tables, launch planning, two streams, and turning
// each launch's raw output (tallies, block-local ladder entries, class-minimum slots,
// numbers to finish on the host) into a UnitResult identical to the CPU engine's.
#include "gpu/gpu_engine.h"

#include "gpu/gpu_engine_impl.h"

namespace collatz {
namespace gpu_engine_internal {

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
    return Status::InvalidArgument("group walk step bits must be 0 or in 5.." + std::to_string(gpu::kMaxSharedStepBits));
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
  if (o.walk_check_bits < gpu::kMinWalkCheckBits || o.walk_check_bits > gpu::kMaxWalkCheckBits) {
    return Status::InvalidArgument("walk check bits must be in " + std::to_string(gpu::kMinWalkCheckBits) + ".." +
                                   std::to_string(gpu::kMaxWalkCheckBits));
  }
  if (o.narrow_walk_max_bits < 0 || o.narrow_walk_max_bits > 127) {
    return Status::InvalidArgument("narrow_walk_max_bits must be 0 .. 127");
  }
  if (o.group_chunk_members < 1 || o.group_chunk_members > 65535) {
    return Status::InvalidArgument("group chunk members must be in 1..65535");
  }
  if (o.group_tail_split_min != 0 && (o.group_tail_split_min < 2 || o.group_tail_split_min > 65535)) {
    return Status::InvalidArgument("group tail split minimum must be 0 (never) or in 2..65535");
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
    std::vector<std::vector<StepEntry>> group_steps;  // by G
    Status status;
  };
  const bool groups = o.residue_groups && QueueAllowed();
  auto host_tables = std::async(std::launch::async, [this, &o, groups]() {
    HostTables h;
    h.steps = gpu::MakeStepEntries(o.step_bits);
    if (groups) {
      h.group_steps.resize(gpu::kMaxGroupBits + 1);
      for (int g = 5; g <= WidestGroupBits(); ++g) h.group_steps[g] = gpu::MakeStepEntries(g);
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

}  // namespace gpu_engine_internal

using gpu_engine_internal::GpuEngine;

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
