// collatzctl bench: a program, not a test. Builds the unit a real frontier search would
// be leased at --at (core/bench_unit.h: the published delay records and the exhaustive
// class records below 2^28 imported as trusted; by default the copies compiled into the
// binary, core/embedded_records.h), searches [at, at + numbers), verifies
// the result and prints the speed counting every N of the range. With --backend gpu the
// plain one-thread-per-number baseline kernel is timed in the same run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/unit_plan.h"
#include "core/embedded_records.h"
#include "core/known_points.h"
#include "engines/engine_factory.h"
#include "cli/exit_codes.h"
#include "core/result_verifier.h"
#include "core/bench_unit.h"
#include "core/cpu_engine.h"
#include "core/published_points.h"
#include "core/records_csv.h"
#include "core/thread_count.h"

#if COLLATZ_WITH_GPU
#include "gpu/gpu_baseline.h"
#endif

namespace collatz::cli {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The plain baseline kernel over [spec.begin, spec.begin + count), timed after a warm-up
// launch; prints its rate next to the engine's.
Status RunBaseline(const UnitSpec& spec, u128 count, double engine_rate) {
#if COLLATZ_WITH_GPU
  UnitSpec range = spec;
  range.end = spec.begin + count;
  double seconds = 0;
  uint64_t numbers = 0;
  GpuBaselineResult detail;
  Status st = RunGpuBaseline(range, &seconds, &numbers, &detail);  // warm-up
  if (st.ok()) st = RunGpuBaseline(range, &seconds, &numbers, &detail);
  if (!st.ok()) return st;
  const double rate = seconds > 0 ? static_cast<double>(numbers) / seconds : 0;
  std::printf("baseline (one thread per number, no sieve or tables, same run): %llu numbers in %.3f s: %s numbers/s "
              "(max delay %u, %llu left 128 bits); engine/baseline %.0fx\n",
              static_cast<unsigned long long>(numbers), seconds, FormatRate(rate).c_str(), detail.max_delay,
              static_cast<unsigned long long>(detail.overflowed), rate > 0 ? engine_rate / rate : 0.0);
  return Status::Ok();
#else
  (void)spec, (void)count, (void)engine_rate;
  return Status::FailedPrecondition("this build has no CUDA baseline");
#endif
}

// One record list: the file at `path`, or with an empty path the compiled-in copy
// `embedded` (named `embedded_name` in errors). Errors name their source.
Status ReadRecordList(const std::string& path, const char* embedded, const char* embedded_name, RecordCsvKind kind,
                      std::vector<Record>* out) {
  if (!path.empty()) return ReadRecordsCsv(path, kind, out);  // its errors name the file
  Status st = ParseRecordsCsv(embedded, kind, out);
  if (!st.ok()) return Status::InvalidArgument(std::string(embedded_name) + ": " + st.message());
  return st;
}

// The bench unit from --records and --class-records, each a file or (when empty) the
// compiled-in copy; errors name their source.
Status LoadUnit(const BenchArgs& args, const std::string& delay_source, const std::string& class_source, u128 at,
                u128 numbers, Kinds kinds, const BenchUnitOptions& options, BenchUnit* unit) {
  std::vector<Record> delays, classes;
  Status st = ReadRecordList(args.records, EmbeddedPublishedDelayRecordsCsv(), kEmbeddedPublishedDelayRecordsName,
                             RecordCsvKind::kDelay, &delays);
  if (st.ok()) {
    st = ReadRecordList(args.class_records, EmbeddedClassRecordsCsv(), kEmbeddedClassRecordsName,
                        RecordCsvKind::kClass, &classes);
  }
  if (!st.ok()) return st;
  return NameBenchUnitError(BuildBenchUnit(delays, classes, at, numbers, kinds, unit, options), delay_source,
                            class_source);
}

// The start of a window of `numbers` holding the first odd published record at or above `at`:
// aligned to min(numbers, 2^32) when numbers is a power of 2 (so the record lies in its first
// 2^32, where --check can reach it, and the window is aligned as the coordinator cuts units),
// else with the record in its middle; false if there is none.
bool RecordWindow(u128 at, u128 numbers, u128* begin, Record* record) {
  for (const Record& r : PublishedDelayPoints()) {
    if (r.n < at || r.n % 2 == 0) continue;  // even records are derived, never computed
    const bool power_of_two = (numbers & (numbers - 1)) == 0;
    const u128 align = std::min(numbers, static_cast<u128>(1) << 32);
    *begin = power_of_two ? r.n - r.n % align : (r.n > numbers / 2 ? r.n - numbers / 2 : 1);
    if (*begin < 1) *begin = 1;
    *record = r;
    return true;
  }
  return false;
}

// --check: the slice [spec.begin, + slice) searched by the CPU engine must equal the
// engine's own search of it (every field), and the measured result's ladder entries and
// class minima inside the slice (a unit's ladder and minima restricted to a prefix are the
// prefix's own, for the same floor and open classes).
Status CheckSlice(const std::shared_ptr<const SearchTables>& tables, SearchEngine& engine, const UnitSpec& spec,
                  const UnitResult& measured, u128 slice, int threads) {
  UnitSpec prefix = spec;
  prefix.end = spec.begin + std::min(slice, spec.end - spec.begin);
  CpuEngineOptions options;
  options.threads = threads;
  CpuEngine cpu(SearchTables::WithCpuOffsets(tables), options);
  UnitResult want, got;
  const auto t0 = std::chrono::steady_clock::now();
  Status st = cpu.Search(prefix, &want);
  if (!st.ok()) return st;
  const double cpu_seconds = SecondsSince(t0);
  if (!(st = engine.Search(prefix, &got)).ok()) return st;
  if (!(got == want)) {
    return Status::Internal("check: the engine's search of [" + ToDecimal(prefix.begin) + ", " + ToDecimal(prefix.end) +
                            ") differs from the CPU engine's: " + DescribeUnitResult(got) + " vs " +
                            DescribeUnitResult(want));
  }
  auto inside = [&](const std::vector<Record>& v) {
    std::vector<Record> out;
    for (const Record& r : v) {
      if (r.n < prefix.end) out.push_back(r);
    }
    return out;
  };
  if (inside(measured.ladder) != want.ladder || inside(measured.class_minima) != want.class_minima) {
    return Status::Internal("check: the measured result's entries in [" + ToDecimal(prefix.begin) + ", " +
                            ToDecimal(prefix.end) + ") differ from the CPU engine's: " + DescribeUnitResult(want));
  }
  std::printf("check: [%s, %s) on the CPU engine (%.2f s): IDENTICAL to the engine's search of it (%llu examined, %zu "
              "ladder entries, %zu class minima, tallies %llu/%llu) and to the measured result inside it\n",
              ToDecimal(prefix.begin).c_str(), ToDecimal(prefix.end).c_str(), cpu_seconds,
              static_cast<unsigned long long>(want.candidates), want.ladder.size(), want.class_minima.size(),
              static_cast<unsigned long long>(want.tally_count), static_cast<unsigned long long>(want.tally_sum));
  return Status::Ok();
}

std::string LadderText(const std::vector<Record>& ladder) {
  std::string text;
  for (size_t i = 0; i < ladder.size() && i < 8; ++i) {
    text += (i == 0 ? "" : " ") + ToDecimal(ladder[i].n) + ":" + std::to_string(ladder[i].delay);
  }
  if (ladder.size() > 8) text += " ...";
  return text;
}

}  // namespace

int BenchCommand(const BenchArgs& args) {
  const std::string cmd = "bench";
  engines::Backend backend;
  Status st = engines::ParseBackendFlag(args.backend, &backend);
  if (!st.ok()) return UsageError(cmd, st.message());
  if (backend == engines::Backend::kAuto) return UsageError(cmd, "--backend must be cpu or gpu");
  u128 at = 0, numbers = 0;
  if (!(st = ParseNumberFlag("--at", args.at, &at)).ok()) return UsageError(cmd, st.message());
  const std::string numbers_text = !args.numbers.empty() ? args.numbers
                                   : backend == engines::Backend::kGpu ? "2^40" : "2^32";
  if (!(st = ParseNumberFlag("--numbers", numbers_text, &numbers)).ok()) return UsageError(cmd, st.message());
  if (at < 1) return UsageError(cmd, "--at must be at least 1");
  if (numbers < 1 || numbers > kU128Max - at) return UsageError(cmd, "--numbers must be >= 1 and at + numbers < 2^128");
  // 2^54: a campaign unit (30-bit sieve, 13-bit groups) measured whole, about 400 s on an H200.
  if (numbers > kMaxUnitSize) return UsageError(cmd, "--numbers must be at most 2^54");
  Kinds kinds;
  if (!(st = ParseKindsFlag(args.kinds, &kinds)).ok()) return UsageError(cmd, st.message());
  if (args.threads < 0) return UsageError(cmd, "--threads must be >= 0 (0: all cores)");
  if (args.sieve_bits != 0 && (args.sieve_bits < 3 || args.sieve_bits > 32)) {
    return UsageError(cmd, "--sieve-bits must be between 3 and 32");
  }
  u128 baseline_numbers = 0;
  if (!(st = ParseNumberFlag("--baseline-numbers", args.baseline_numbers, &baseline_numbers)).ok()) {
    return UsageError(cmd, st.message());
  }
  if (baseline_numbers > (static_cast<u128>(1) << 40) || baseline_numbers > kU128Max - at) {
    return UsageError(cmd, "--baseline-numbers must be at most 2^40 and at + it < 2^128");
  }
  u128 check_numbers = 0;
  if (!(st = ParseNumberFlag("--check-numbers", args.check_numbers, &check_numbers)).ok()) {
    return UsageError(cmd, st.message());
  }
  if (check_numbers < 1 || check_numbers > (static_cast<u128>(1) << 40)) {
    return UsageError(cmd, "--check-numbers must be between 1 and 2^40");
  }
  Record window_record;
  if (args.record_window) {
    if (!RecordWindow(at, numbers, &at, &window_record)) {
      return UsageError(cmd, "--record-window: no odd published delay record at or above --at");
    }
    if (numbers > kU128Max - at) return UsageError(cmd, "--record-window: the window passes 2^128");
  }

  BenchUnitOptions unit_options;
  if (!(st = ParseBenchContext(args.context, &unit_options.context)).ok()) return UsageError(cmd, st.message());
  unit_options.close_holes_by_members = !args.no_class_members;
  if (!args.points.empty()) {
    if (unit_options.context == BenchContext::kNone) return UsageError(cmd, "--points needs --context floor or trusted");
    st = ReadRecordsCsv(args.points, RecordCsvKind::kDelay, &unit_options.known_points);
    if (st.code() == Status::Code::kIOError) return Failure(cmd, st);
    if (!st.ok()) return UsageError(cmd, st.message());
    if (!(st = CheckKnownPointRows(unit_options.known_points)).ok()) return UsageError(cmd, "refused: " + st.message());
  }

  engines::Backend resolved;
  std::string note;
  if (!(st = engines::ResolveBackend(backend, &resolved, &note)).ok()) return Failure(cmd, st);

  // The unit a frontier search would get at --at, from the trusted record lists: the
  // files given, else the copies compiled into the binary (core/embedded_records.h).
  const std::string delay_source = args.records.empty() ? kEmbeddedPublishedDelayRecordsName : args.records;
  const std::string class_source = args.class_records.empty() ? kEmbeddedClassRecordsName : args.class_records;
  BenchUnit unit;
  if (!(st = LoadUnit(args, delay_source, class_source, at, numbers, kinds, unit_options, &unit)).ok()) {
    return Failure(cmd, st);
  }
  if (unit_options.context == BenchContext::kTrusted && unit.delay_complete_below < at) {
    spdlog::warn("{} is complete only up to {}; the range starts above the known records", delay_source,
                 ToDecimal(unit.delay_complete_below - 1));
  }
  const UnitSpec& spec = unit.spec;

  // The width `run` takes for such a unit (a wide sieve where no record table is near).
  const int sieve_bits = args.sieve_bits != 0 ? args.sieve_bits
                                              : engines::SieveBitsForRun(resolved, kinds, spec.records_complete_below,
                                                                         spec.begin, numbers, numbers);
  const auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<const SearchTables> tables;
  if (engines::BuildsSieveOnGpu(resolved, args.sieve_file, sieve_bits)) {
    st = engines::BuildGpuSearchTables(0, sieve_bits, nullptr, &tables);
  } else {
    st = engines::BuildSearchTables(args.sieve_file, sieve_bits, &tables);
  }
  if (!st.ok()) return Failure(cmd, st);
  std::unique_ptr<SearchEngine> engine;
  if (!(st = engines::MakeEngine(resolved, tables, args.threads, &engine)).ok()) return Failure(cmd, st);
  const double build_seconds = SecondsSince(t0);

  UnitResult result;
  double warm_seconds = 0;
  if (resolved == engines::Backend::kGpu) {
    // The first launches pay for CUDA's lazy setup, and the first unit of its kind for the
    // engine's one-time tables (own record table, join map): not part of the search speed.
    UnitSpec warm = spec;
    warm.end = spec.begin + std::min<u128>(numbers, static_cast<u128>(1) << 30);
    const auto w0 = std::chrono::steady_clock::now();
    if (!(st = engine->Prepare(spec)).ok()) return Failure(cmd, st);
    if (!(st = engine->Search(warm, &result)).ok()) return Failure(cmd, st);
    warm_seconds = SecondsSince(w0);
  }
  const auto t1 = std::chrono::steady_clock::now();
  if (!(st = engine->Search(spec, &result)).ok()) return Failure(cmd, st);
  const double seconds = SecondsSince(t1);
  if (!(st = collatz::VerifyUnitResult(*tables, spec, result)).ok()) return Failure(cmd, st);

  const double rate = static_cast<double>(numbers) / seconds;
  const int threads = resolved == engines::Backend::kCpu ? ResolveThreadCount(args.threads) : args.threads;
  std::printf("bench: %s, kinds %s, sieve %d bits (%zu odd survivors)\n", engine->Describe().c_str(),
              KindsName(kinds), tables->sieve->bits(), tables->sieve->size());
  std::printf("range [%s, %s + %s) = [%s, %s)\n", FormatNumberShort(at).c_str(), FormatNumberShort(at).c_str(),
              FormatNumberShort(numbers).c_str(), ToDecimal(at).c_str(), ToDecimal(at + numbers).c_str());
  switch (unit_options.context) {
    case BenchContext::kNone:
      std::printf("context none: nothing known below --at (floor 0, no record table)\n");
      break;
    case BenchContext::kFloor:
      std::printf("context floor: the provable floor from the numbers of %s below --at, each delay recomputed, "
                  "none trusted (no record table: no early termination)\n",
                  delay_source.c_str());
      break;
    case BenchContext::kTrusted:
      std::printf("context trusted: imported delay records complete below %s (%s), class records complete below %s "
                  "(%s)\n",
                  ToDecimal(unit.delay_complete_below).c_str(), delay_source.c_str(),
                  ToDecimal(unit.class_complete_below).c_str(), class_source.c_str());
      break;
  }
  std::printf("spec: floor %u, %zu open holes (%zu more closed by members found below --at), %zu known records "
              "(complete below %s)\n",
              spec.floor, spec.open_holes.size(), unit.holes_closed_by_members, spec.known_records.size(),
              ToDecimal(spec.records_complete_below).c_str());
  if (!args.points.empty()) {
    std::printf("known points: %zu from %s, closing %zu classes below --at before the member search\n",
                unit_options.known_points.size(), args.points.c_str(), unit.holes_closed_by_points);
  }
  std::printf("result: %llu numbers examined, %zu ladder entries, %zu class minima; ladder %s\n",
              static_cast<unsigned long long>(result.candidates), result.ladder.size(), result.class_minima.size(),
              result.ladder.empty() ? "(empty)" : LadderText(result.ladder).c_str());
  if (args.record_window) {
    const bool found = std::find(result.ladder.begin(), result.ladder.end(), window_record) != result.ladder.end();
    std::printf("record window: published record %s (delay %u) %s\n", ToDecimal(window_record.n).c_str(),
                window_record.delay, found ? "is on the ladder" : "is NOT on the ladder");
    if (!found) return Failure(cmd, Status::Internal("the published record of the window is missing from the result"));
  }
  std::printf("tables built in %.2f s%s%s\n", build_seconds, engine->SetupNote().empty() ? "" : "; engine set-up: ",
              engine->SetupNote().c_str());
  if (warm_seconds > 0) std::printf("one-time tables and warm-up search (not timed): %.3f s\n", warm_seconds);
  std::printf("%s numbers in %.3f s: %s numbers/s", ToDecimal(numbers).c_str(), seconds, FormatRate(rate).c_str());
  if (resolved == engines::Backend::kCpu && threads > 0) {
    std::printf(" (%s numbers/s per thread, %d threads)", FormatRate(rate / threads).c_str(), threads);
  }
  std::printf("\n");
  if (resolved == engines::Backend::kGpu && baseline_numbers > 0) {
    if (!(st = RunBaseline(spec, baseline_numbers, rate)).ok()) return Failure(cmd, st);
  }
  // With --record-window the slice reaches the record.
  if (args.record_window) check_numbers = std::max(check_numbers, window_record.n - spec.begin + 1);
  if (args.check && !(st = CheckSlice(tables, *engine, spec, result, check_numbers, args.threads)).ok()) {
    return Failure(cmd, st);
  }
  return kExitOk;
}

}  // namespace collatz::cli
