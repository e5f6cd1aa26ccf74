// collatzctl bench: a program, not a test. Imports the published delay records below
// --at as trusted, builds the unit spec exactly as a real lease would (floor, open holes,
// record table for early termination), searches [at, at + numbers) and prints the speed
// counting every N of the range.
#include <chrono>
#include <cstdio>
#include <thread>

#include <spdlog/spdlog.h>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/engine_factory.h"
#include "cli/exit_codes.h"
#include "cli/verify_result.h"
#include "core/merge.h"
#include "core/records_csv.h"

#ifndef COLLATZ_PUBLISHED_RECORDS
#define COLLATZ_PUBLISHED_RECORDS "data/published_delay_records.csv"
#endif

namespace collatz::cli {

std::string DefaultPublishedRecordsPath() { return COLLATZ_PUBLISHED_RECORDS; }

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

  Backend resolved;
  std::string note;
  if (!(st = ResolveBackend(backend, &resolved, &note)).ok()) return Failure(cmd, st);

  // The published records below --at, trusted as complete up to the last row.
  const std::string path = args.records.empty() ? DefaultPublishedRecordsPath() : args.records;
  std::vector<Record> published;
  if (!(st = ReadRecordsCsv(path, RecordCsvKind::kDelay, &published)).ok()) return Failure(cmd, st);
  if (published.empty()) return Failure(cmd, Status::InvalidArgument(path + " holds no records"));
  u128 last = 0;
  for (const Record& r : published) last = std::max(last, r.n);
  TrustedImport import;
  import.complete_below = std::min(at, last + 1);
  for (const Record& r : published) {
    if (r.n < import.complete_below) import.delay_records.push_back(r);
  }
  if (at > last + 1) {
    spdlog::warn("{} is complete only up to {}; the range starts above the known records", path, ToDecimal(last));
  }
  const MergedRecords merged = MergeRecords({import}, {});
  const LeaseContext ctx = ComputeLeaseContext(merged, at, kinds);
  UnitSpec spec;
  spec.begin = at;
  spec.end = at + numbers;
  spec.kinds = kinds;
  spec.floor = ctx.floor;
  spec.open_holes = ctx.open_holes;
  spec.known_records = ctx.known_records;
  spec.records_complete_below = ctx.records_complete_below;

  const int sieve_bits = args.sieve_bits != 0 ? args.sieve_bits : DefaultSieveBits(resolved);
  const auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<const SearchTables> tables;
  if (!(st = BuildSearchTables(args.sieve_file, sieve_bits, &tables)).ok()) return Failure(cmd, st);
  std::unique_ptr<SearchEngine> engine;
  if (!(st = MakeEngine(resolved, tables, args.threads, &engine)).ok()) return Failure(cmd, st);
  const double build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  UnitResult result;
  const auto t1 = std::chrono::steady_clock::now();
  if (!(st = engine->Search(spec, &result)).ok()) return Failure(cmd, st);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  if (!(st = VerifyUnitResult(spec, result)).ok()) return Failure(cmd, st);

  const double rate = static_cast<double>(numbers) / seconds;
  int threads = args.threads;
  if (resolved == Backend::kCpu && threads == 0) threads = static_cast<int>(std::thread::hardware_concurrency());
  std::printf("bench: %s, kinds %s, sieve %d bits (%zu odd survivors)\n", engine->Describe().c_str(),
              KindsName(kinds), tables->sieve->bits(), tables->sieve->size());
  std::printf("range [%s, %s + %s) = [%s, %s)\n", FormatNumberShort(at).c_str(), FormatNumberShort(at).c_str(),
              FormatNumberShort(numbers).c_str(), ToDecimal(at).c_str(), ToDecimal(at + numbers).c_str());
  std::printf("spec: floor %u, %zu open holes, %zu known records (complete below %s)\n", spec.floor,
              spec.open_holes.size(), spec.known_records.size(), ToDecimal(spec.records_complete_below).c_str());
  std::printf("result: %llu numbers examined, %zu ladder entries, %zu class minima\n",
              static_cast<unsigned long long>(result.candidates), result.ladder.size(), result.class_minima.size());
  std::printf("tables built in %.2f s\n", build_seconds);
  std::printf("%s numbers in %.3f s: %s numbers/s", ToDecimal(numbers).c_str(), seconds, FormatRate(rate).c_str());
  if (resolved == Backend::kCpu && threads > 0) {
    std::printf(" (%s numbers/s per thread, %d threads)", FormatRate(rate / threads).c_str(), threads);
  }
  std::printf("\n");
  return kExitOk;
}

}  // namespace collatz::cli
