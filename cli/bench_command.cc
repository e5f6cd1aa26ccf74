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
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "core/embedded_records.h"
#include "cli/engine_factory.h"
#include "cli/exit_codes.h"
#include "cli/verify_result.h"
#include "core/bench_unit.h"
#include "core/records_csv.h"

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

}  // namespace

int BenchCommand(const BenchArgs& args) {
  const std::string cmd = "bench";
  Backend backend;
  Status st = ParseBackendFlag(args.backend, &backend);
  if (!st.ok()) return UsageError(cmd, st.message());
  if (backend == Backend::kAuto) return UsageError(cmd, "--backend must be cpu or gpu");
  u128 at = 0, numbers = 0;
  if (!(st = ParseNumberFlag("--at", args.at, &at)).ok()) return UsageError(cmd, st.message());
  const std::string numbers_text = !args.numbers.empty() ? args.numbers : backend == Backend::kGpu ? "2^40" : "2^32";
  if (!(st = ParseNumberFlag("--numbers", numbers_text, &numbers)).ok()) return UsageError(cmd, st.message());
  if (at < 1) return UsageError(cmd, "--at must be at least 1");
  if (numbers < 1 || numbers > kU128Max - at) return UsageError(cmd, "--numbers must be >= 1 and at + numbers < 2^128");
  if (numbers > (static_cast<u128>(1) << 48)) return UsageError(cmd, "--numbers must be at most 2^48");
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

  BenchUnitOptions unit_options;
  if (!(st = ParseBenchContext(args.context, &unit_options.context)).ok()) return UsageError(cmd, st.message());
  unit_options.close_holes_by_members = !args.no_class_members;

  Backend resolved;
  std::string note;
  if (!(st = ResolveBackend(backend, &resolved, &note)).ok()) return Failure(cmd, st);

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

  const int sieve_bits = args.sieve_bits != 0 ? args.sieve_bits : DefaultSieveBits(resolved);
  const auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<const SearchTables> tables;
  if (!(st = BuildSearchTables(args.sieve_file, sieve_bits, &tables)).ok()) return Failure(cmd, st);
  std::unique_ptr<SearchEngine> engine;
  if (!(st = MakeEngine(resolved, tables, args.threads, &engine)).ok()) return Failure(cmd, st);
  const double build_seconds = SecondsSince(t0);

  UnitResult result;
  if (resolved == Backend::kGpu) {
    // The first launches pay for CUDA's lazy setup: not part of the search speed.
    UnitSpec warm = spec;
    warm.end = spec.begin + std::min<u128>(numbers, static_cast<u128>(1) << 30);
    if (!(st = engine->Search(warm, &result)).ok()) return Failure(cmd, st);
  }
  const auto t1 = std::chrono::steady_clock::now();
  if (!(st = engine->Search(spec, &result)).ok()) return Failure(cmd, st);
  const double seconds = SecondsSince(t1);
  if (!(st = VerifyUnitResult(spec, result)).ok()) return Failure(cmd, st);

  const double rate = static_cast<double>(numbers) / seconds;
  int threads = args.threads;
  if (resolved == Backend::kCpu && threads == 0) threads = static_cast<int>(std::thread::hardware_concurrency());
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
  std::printf("result: %llu numbers examined, %zu ladder entries, %zu class minima\n",
              static_cast<unsigned long long>(result.candidates), result.ladder.size(), result.class_minima.size());
  std::printf("tables built in %.2f s\n", build_seconds);
  std::printf("%s numbers in %.3f s: %s numbers/s", ToDecimal(numbers).c_str(), seconds, FormatRate(rate).c_str());
  if (resolved == Backend::kCpu && threads > 0) {
    std::printf(" (%s numbers/s per thread, %d threads)", FormatRate(rate / threads).c_str(), threads);
  }
  std::printf("\n");
  if (resolved == Backend::kGpu && baseline_numbers > 0) {
    if (!(st = RunBaseline(spec, baseline_numbers, rate)).ok()) return Failure(cmd, st);
  }
  return kExitOk;
}

}  // namespace collatz::cli
