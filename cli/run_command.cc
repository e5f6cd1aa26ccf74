// collatzctl run: searches [from, to) in-process, storing each unit as it finishes.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>

#include <spdlog/spdlog.h>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/engine_factory.h"
#include "cli/exit_codes.h"
#include "cli/progress_line.h"
#include "cli/unit_plan.h"
#include "cli/verify_result.h"
#include "core/class_members.h"
#include "core/merge.h"
#include "storage/record_db.h"

namespace collatz::cli {

namespace {

std::atomic<bool> g_cancel{false};

extern "C" void OnInterrupt(int) { g_cancel.store(true); }

void PrintRecordsInRange(const MergedRecords& merged, u128 from, u128 to, bool classes) {
  auto in_range = [&](const Record& r) { return r.n >= from && r.n < to; };
  std::printf("# delay records in [%s, %s): n delay (\"candidate\": at or above the covered prefix %s)\n",
              ToDecimal(from).c_str(), ToDecimal(to).c_str(), ToDecimal(merged.covered_prefix).c_str());
  for (const auto* list : {&merged.delay_final, &merged.delay_candidates}) {
    const bool candidate = list == &merged.delay_candidates;
    for (const Record& r : *list) {
      if (in_range(r)) std::printf("%s %u%s\n", ToDecimal(r.n).c_str(), r.delay, candidate ? " candidate" : "");
    }
  }
  if (!classes) return;
  std::printf("# class records in [%s, %s): delay n (\"candidate\": at or above the class-covered prefix %s)\n",
              ToDecimal(from).c_str(), ToDecimal(to).c_str(), ToDecimal(merged.class_covered_prefix).c_str());
  // Final and candidate class records, together ascending by delay.
  size_t i = 0, j = 0;
  const auto& fin = merged.class_final;
  const auto& cand = merged.class_candidates;
  while (i < fin.size() || j < cand.size()) {
    const bool take_final = j >= cand.size() || (i < fin.size() && fin[i].delay <= cand[j].delay);
    const Record& r = take_final ? fin[i++] : cand[j++];
    if (in_range(r)) std::printf("%u %s%s\n", r.delay, ToDecimal(r.n).c_str(), take_final ? "" : " candidate");
  }
}

}  // namespace

int RunCommand(const RunArgs& args) {
  const auto started = std::chrono::steady_clock::now();
  const std::string cmd = "run";
  // 1. Everything the user typed is checked before the database is opened.
  u128 from = 0, to = 0;
  Status st = ParseNumberFlag("--from", args.from, &from);
  if (st.ok()) st = ParseNumberFlag("--to", args.to, &to);
  if (!st.ok()) return UsageError(cmd, st.message());
  if (from < 1) return UsageError(cmd, "--from must be at least 1");
  if (from >= to) {
    return UsageError(cmd, "empty range: --from " + ToDecimal(from) + " is not below --to " + ToDecimal(to));
  }
  Kinds kinds;
  if (!(st = ParseKindsFlag(args.kinds, &kinds)).ok()) return UsageError(cmd, st.message());
  Backend backend;
  if (!(st = ParseBackendFlag(args.backend, &backend)).ok()) return UsageError(cmd, st.message());
  if (args.threads < 0) return UsageError(cmd, "--threads must be >= 0 (0: all cores)");
  if (args.sieve_bits != 0 && (args.sieve_bits < 3 || args.sieve_bits > 32)) {
    return UsageError(cmd, "--sieve-bits must be between 3 and 32");
  }
  u128 unit_size = 0;
  if (!args.unit_size.empty()) {
    if (!(st = ParseNumberFlag("--unit-size", args.unit_size, &unit_size)).ok()) return UsageError(cmd, st.message());
    if (unit_size < 1 || unit_size > kMaxUnitSize) return UsageError(cmd, "--unit-size must be between 1 and 2^48");
  }
  if (args.db.empty()) return UsageError(cmd, "--db must not be empty");

  Backend resolved;
  std::string note;
  if (!(st = ResolveBackend(backend, &resolved, &note)).ok()) return Failure(cmd, st);
  if (!note.empty()) spdlog::info("{}", note);
  if (unit_size == 0) unit_size = DefaultUnitSize(to - from, resolved == Backend::kGpu);

  // A sieve file is checked before the database is touched: a corrupt one changes nothing.
  std::shared_ptr<const SearchTables> tables;
  if (!args.sieve_file.empty()) {
    if (!(st = BuildSearchTables(args.sieve_file, 0, &tables)).ok()) return Failure(cmd, st);
  }

  // 2. The database: what is already known.
  std::unique_ptr<RecordDb> db;
  if (!(st = RecordDb::Open(args.db, RecordDb::OpenMode::kCreateIfMissing, &db)).ok()) return Failure(cmd, st);
  std::vector<TrustedImport> imports;
  std::vector<FinishedUnit> units;
  if (!(st = db->LoadImports(&imports)).ok()) return Failure(cmd, st);
  if (!(st = db->LoadFinishedUnits(&units)).ok()) return Failure(cmd, st);
  const std::vector<PlannedUnit> plan = PlanUnits(from, to, CoveredIntervals(imports, units, kinds), unit_size);
  u128 planned_numbers = 0;
  for (const PlannedUnit& p : plan) planned_numbers += p.end - p.begin;
  spdlog::info("database {}: {} finished units, {} imports; {} of [{}, {}) left to search in {} units",
               args.db, units.size(), imports.size(), ToDecimal(planned_numbers), FormatNumberShort(from),
               FormatNumberShort(to), plan.size());

  MergedRecords merged = MergeRecords(imports, units);
  u128 searched = 0;
  if (!plan.empty()) {
    // 3. The engine and its tables, built only when there is work.
    const int sieve_bits = args.sieve_bits != 0 ? args.sieve_bits : DefaultSieveBits(resolved);
    const auto t0 = std::chrono::steady_clock::now();
    if (tables == nullptr && !(st = BuildSearchTables(args.sieve_file, sieve_bits, &tables)).ok()) {
      return Failure(cmd, st);
    }
    std::unique_ptr<SearchEngine> engine;
    if (!(st = MakeEngine(resolved, tables, args.threads, &engine)).ok()) return Failure(cmd, st);
    spdlog::info("engine {}: tables built in {:.2f} s", engine->Describe(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());

    g_cancel.store(false);
    auto previous_handler = std::signal(SIGINT, OnInterrupt);
    ProgressLine progress(planned_numbers, ::isatty(STDERR_FILENO) == 1);
    for (size_t i = 0; i < plan.size(); ++i) {
      const PlannedUnit& p = plan[i];
      LeaseContext ctx = ComputeLeaseContext(merged, p.begin, kinds);
      // As the coordinator does: members found below the unit close classes (safe to skip).
      const Status closed = CloseHolesFromKnownPoints(merged, p.begin, &ctx);
      if (!closed.ok()) spdlog::warn("unit at {}: holes left open: {}", ToDecimal(p.begin), closed.ToString());
      UnitSpec spec;
      spec.begin = p.begin;
      spec.end = p.end;
      spec.kinds = kinds;
      spec.floor = ctx.floor;
      spec.open_holes = ctx.open_holes;
      spec.known_records = ctx.known_records;
      spec.records_complete_below = ctx.records_complete_below;

      const std::string label = "unit " + std::to_string(i + 1) + "/" + std::to_string(plan.size());
      const auto unit_start = std::chrono::steady_clock::now();
      FinishedUnit finished;
      finished.begin = p.begin;
      finished.end = p.end;
      finished.kinds = kinds;
      // Without a terminal there is no progress line, and no callback (engines poll for it).
      ProgressFn on_progress = nullptr;
      if (progress.enabled()) on_progress = [&](uint64_t done, uint64_t) { progress.Update(searched + done, label); };
      st = engine->Search(spec, &finished.result, on_progress, &g_cancel);
      if (st.code() == Status::Code::kUnavailable && g_cancel.load()) {
        progress.Clear();
        std::signal(SIGINT, previous_handler);
        std::fprintf(stderr,
                     "collatzctl run: interrupted; %zu of %zu units were stored, rerun the same command to resume\n",
                     i, plan.size());
        return kExitInterrupted;
      }
      if (!st.ok()) {
        progress.Clear();
        return Failure(cmd, st);
      }
      if (!(st = VerifyUnitResult(spec, finished.result)).ok()) {
        progress.Clear();
        return Failure(cmd, st);
      }
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - unit_start).count();
      units.push_back(finished);
      MergedRecords next = MergeRecords(imports, units);
      UnitProvenance prov{spec.floor, spec.open_holes.size(), engine->Describe(), seconds};
      if (!(st = db->StoreFinishedUnit(finished, prov, &next)).ok()) {
        progress.Clear();
        return Failure(cmd, st);
      }
      merged = std::move(next);
      searched += p.end - p.begin;
      progress.Clear();
      spdlog::debug("unit [{}, {}) stored: floor {}, {} open holes, {} ladder entries, {} class minima, {:.2f} s",
                    ToDecimal(p.begin), ToDecimal(p.end), spec.floor, spec.open_holes.size(),
                    finished.result.ladder.size(), finished.result.class_minima.size(), seconds);
      progress.Update(searched, label);
    }
    progress.Clear();
    std::signal(SIGINT, previous_handler);
  } else {
    // Nothing new; still make sure the stored merged records match the units.
    bool present = false;
    MergedRecords stored;
    if (!(st = db->LoadMergedRecords(&stored, &present)).ok()) return Failure(cmd, st);
    if (!present && !(st = db->StoreMergedRecords(merged)).ok()) return Failure(cmd, st);
  }

  // 4. The records of [from, to) and the summary.
  PrintRecordsInRange(merged, from, to, kinds == Kinds::kDelayAndClass);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const double rate = seconds > 0 ? static_cast<double>(searched) / seconds : 0;
  std::printf("# searched %s numbers in %.2f s (%s numbers/s); %zu new units, %s numbers were already covered\n",
              ToDecimal(searched).c_str(), seconds, FormatRate(rate).c_str(), plan.size(),
              ToDecimal((to - from) - searched).c_str());
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace collatz::cli
