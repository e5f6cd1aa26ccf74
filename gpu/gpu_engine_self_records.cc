// The GPU engine's own record table: the delay records below 2^B from its own searches of
// [1, 2^B), for units leased without a table (docs/FLOOR.md); each record's delay checked on
// the host, and the table compared with the published records where those are complete
// (core/record_table_check.h): a missing, extra or wrong record stops the engine.
#include "gpu/gpu_engine_impl.h"

#include "core/record_table_check.h"

namespace collatz::gpu_engine_internal {

Status GpuEngine::EnsureSelfRecords() {
  const int B = options_.self_record_bits;
  if (!self_records_refused_.ok()) return self_records_refused_;
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
    // A table that was built but failed its checks is this device's answer too.
    if (!child.self_records_refused_.ok()) {
      self_records_refused_ = child.self_records_refused_;
      return self_records_refused_;
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
  if (Status checked = CheckSelfRecords(merged.delay_final, B); !checked.ok()) {
    // Refused for good: every unit this engine searched with it would be wrong in the same way.
    self_records_refused_ = Status::FailedPrecondition("GPU " + std::to_string(options_.device) + " (" + device_name_ +
                                                       "): " + checked.message() + "; the engine refuses to search");
    return self_records_refused_;
  }
  self_records_ = merged.delay_final;
  self_record_bits_ = B;
  self_records_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return Status::Ok();
}

Status GpuEngine::CheckSelfRecords(const std::vector<Record>& records, int bits) const {
  // Genuine: each record's delay again on the host (exact), ascending in n and delay.
  for (size_t i = 0; i < records.size(); ++i) {
    const Record& r = records[i];
    if (tables_->delay->Delay(r.n) != r.delay ||
        (i > 0 && (r.n <= records[i - 1].n || r.delay <= records[i - 1].delay))) {
      return Status::Internal("engine's own record table: record " + ToDecimal(r.n) + " does not check");
    }
  }
  // Complete: below min(2^B, the published bound) the published records, no more, no fewer.
  return CheckRecordsAgainstPublished(records, Pow2(static_cast<unsigned>(bits)), "engine's own record table");
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

}  // namespace collatz::gpu_engine_internal
