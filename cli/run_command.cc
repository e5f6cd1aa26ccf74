// collatzctl run: searches [from, to) in-process, storing each unit as it finishes.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <future>
#include <thread>

#include <spdlog/spdlog.h>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "engines/engine_factory.h"
#include "cli/exit_codes.h"
#include "cli/progress_line.h"
#include "cli/unit_plan.h"
#include "core/class_member_cache.h"
#include "core/merge.h"
#include "core/result_verifier.h"
#include "core/thread_count.h"
#include "core/unit_spec.h"
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

// Counts of the records of [from, to) in a final and a candidate list; the last of them.
struct InRange {
  size_t final_count = 0, candidates = 0;
  const Record* last = nullptr;
  bool last_is_candidate = false;
};
InRange CountInRange(const std::vector<Record>& fin, const std::vector<Record>& cand, u128 from, u128 to) {
  InRange out;
  for (const auto* list : {&fin, &cand}) {
    for (const Record& r : *list) {
      if (r.n < from || r.n >= to) continue;
      (list == &fin ? out.final_count : out.candidates)++;
      if (out.last == nullptr || r.n > out.last->n) {
        out.last = &r;
        out.last_is_candidate = list == &cand;
      }
    }
  }
  return out;
}

// What a person wants after a run: what was found, where it is, what to try next.
void PrintSummary(const MergedRecords& merged, u128 from, u128 to, Kinds kinds, const std::string& db,
                  bool has_imports) {
  const InRange delay = CountInRange(merged.delay_final, merged.delay_candidates, from, to);
  std::printf("# found: %zu final delay records and %zu candidates in the range (candidates: at or above the covered "
              "prefix %s)\n",
              delay.final_count, delay.candidates, FormatNumberShort(merged.covered_prefix).c_str());
  if (delay.last != nullptr) {
    std::printf("# the last delay record: %s (delay %u)%s\n", ToDecimal(delay.last->n).c_str(), delay.last->delay,
                delay.last_is_candidate ? ", a candidate: final once everything below it is covered" : "");
  } else {
    std::printf("# no delay record in the range\n");
  }
  if (kinds == Kinds::kDelayAndClass) {
    // Class records ascend by delay, not by n: the count says enough.
    const InRange cls = CountInRange(merged.class_final, merged.class_candidates, from, to);
    std::printf("# found: %zu final class records and %zu candidates in the range\n", cls.final_count, cls.candidates);
  }
  std::printf("# database: %s (covered below %s; class searches below %s)\n", db.c_str(),
              FormatNumberShort(merged.covered_prefix).c_str(), FormatNumberShort(merged.class_covered_prefix).c_str());
  // The next range, right above this one: to 4 * to after a search from low down (the
  // quickstart's [1, 2^32) -> [2^32, 2^34)), else four times as wide (a window up high).
  const u128 width = to - from;
  u128 next_to = kU128Max;
  if (from <= to / 2) {
    if (to <= kU128Max / 4) next_to = 4 * to;
  } else if (width <= (kU128Max - to) / 4) {
    next_to = to + 4 * width;
  }
  std::printf("# next: collatzctl records --db %s --kind delay              # the final delay records\n", db.c_str());
  std::printf("#       collatzctl records --db %s --kind class --format csv  # the final class records\n", db.c_str());
  std::printf("#       collatzctl run --db %s --from %s --to %s --print-records  # go on; reruns resume\n", db.c_str(),
              FormatNumberShort(to).c_str(), FormatNumberShort(next_to).c_str());
  // A range above an uncovered prefix with nothing imported: its records stay candidates,
  // and its numbers cannot stop early (docs/FLOOR.md); the published list changes both.
  if (!has_imports && merged.covered_prefix < from) {
    std::printf("#       collatzctl import --db %s --published  # trust the published delay records: records above "
                "them become final and searches stop numbers early (docs/FLOOR.md)\n",
                db.c_str());
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
  engines::Backend backend;
  if (!(st = engines::ParseBackendFlag(args.backend, &backend)).ok()) return UsageError(cmd, st.message());
  if (args.threads < 0) return UsageError(cmd, "--threads must be >= 0 (0: all cores)");
  if (args.sieve_bits != 0 && (args.sieve_bits < 3 || args.sieve_bits > 32)) {
    return UsageError(cmd, "--sieve-bits must be between 3 and 32");
  }
  u128 unit_size = 0;
  if (!args.unit_size.empty()) {
    if (!(st = ParseNumberFlag("--unit-size", args.unit_size, &unit_size)).ok()) return UsageError(cmd, st.message());
    if (unit_size < 1 || unit_size > kMaxUnitSize) return UsageError(cmd, "--unit-size must be between 1 and 2^54");
  }
  if (args.db.empty()) return UsageError(cmd, "--db must not be empty");
  if (!(args.progress_interval_s > 0 && args.progress_interval_s <= 86400)) {
    return UsageError(cmd, "--progress-interval must be above 0 and at most 86400 seconds");
  }

  // Without a sieve file the tables are built on a thread while the backend is resolved (the
  // CUDA driver's start, about 0.1 s on an H100 host) and the database is read: part of a
  // short GPU run's fixed cost (issue 23). If the backend resolves to one with other default
  // bits, they are built again below. Wide sieves (seconds to minutes) wait until the plan
  // shows work, as before.
  const auto tables_bits = [&](engines::Backend b) {
    return args.sieve_bits != 0 ? args.sieve_bits : engines::DefaultSieveBits(b);
  };
  const int early_bits = tables_bits(backend == engines::Backend::kAuto ? engines::Backend::kGpu : backend);
  std::shared_ptr<const SearchTables> early_tables;
  std::future<Status> early_tables_built;
  if (args.sieve_file.empty() && early_bits <= 22) {
    early_tables_built = std::async(std::launch::async, [&early_tables, early_bits]() {
      return engines::BuildSearchTables("", early_bits, &early_tables);
    });
  }
  engines::Backend resolved;
  std::string note;
  if (!(st = engines::ResolveBackend(backend, &resolved, &note)).ok()) return Failure(cmd, st);
  if (!note.empty()) spdlog::info("{}", note);
  // The CUDA context (about 0.12 s) comes up while the database is read and the plan made.
  std::future<void> gpu_context;
  if (resolved == engines::Backend::kGpu) gpu_context = engines::StartGpuContext(0);
  if (unit_size == 0) {
    const auto threads = static_cast<unsigned>(ResolveThreadCount(args.threads));
    unit_size = DefaultUnitSize(to - from, resolved == engines::Backend::kGpu, threads, kinds);
  }

  // A sieve file is checked before the database is touched: a corrupt one changes nothing.
  std::shared_ptr<const SearchTables> tables;
  if (!args.sieve_file.empty()) {
    if (!(st = engines::BuildSearchTables(args.sieve_file, 0, &tables)).ok()) return Failure(cmd, st);
  }

  // 2. The database: what is already known.
  std::unique_ptr<RecordDb> db;
  if (!(st = RecordDb::Open(args.db, RecordDb::OpenMode::kCreateIfMissing, &db)).ok()) return Failure(cmd, st);
  std::vector<TrustedImport> imports;
  std::vector<FinishedUnit> units;
  if (!(st = db->LoadImports(&imports)).ok()) return Failure(cmd, st);
  if (!(st = db->LoadFinishedUnits(&units)).ok()) return Failure(cmd, st);
  std::vector<Record> known_points;  // collatzctl import --points (core/known_points.h)
  if (!(st = db->LoadKnownPoints(&known_points)).ok()) return Failure(cmd, st);
  const std::vector<PlannedUnit> plan = PlanUnits(from, to, CoveredIntervals(imports, units, kinds), unit_size);
  u128 planned_numbers = 0;
  for (const PlannedUnit& p : plan) planned_numbers += p.end - p.begin;
  spdlog::info("database {}: {} finished units, {} imports, {} known points; {} of [{}, {}) left to search in {} units",
               args.db, units.size(), imports.size(), known_points.size(), ToDecimal(planned_numbers), FormatNumberShort(from),
               FormatNumberShort(to), plan.size());

  MergedRecords merged = MergeRecords(imports, units, known_points);
  u128 searched = 0;
  if (!plan.empty()) {
    // 3. The engine and its tables, built only when there is work.
    // On the GPU, delay-only work without a record table near it (an empty database) and
    // delay+class work in units of 2^46 take wider sieves (engines::SieveBitsForRun).
    int sieve_bits = args.sieve_bits != 0 ? args.sieve_bits
                                          : engines::SieveBitsForRun(resolved, kinds, merged.covered_prefix,
                                                                     plan.front().begin, planned_numbers, unit_size);
    const auto t0 = std::chrono::steady_clock::now();
    if (tables == nullptr && early_tables_built.valid()) {
      if (!(st = early_tables_built.get()).ok()) return Failure(cmd, st);
      if (sieve_bits == early_bits) tables = std::move(early_tables);
    }
    if (tables == nullptr && engines::BuildsSieveOnGpu(resolved, args.sieve_file, sieve_bits)) {
      // Seconds on the host, a fraction of one on the device; the step and tail tables are
      // the early ones'.
      st = engines::BuildGpuSearchTables(0, sieve_bits, early_tables != nullptr ? early_tables->delay : nullptr, &tables);
      if (st.code() == Status::Code::kUnavailable && args.sieve_bits == 0) {
        // A width of our choosing that the device cannot hold: the default, slower, same records.
        spdlog::warn("the {}-bit sieve does not fit on the GPU ({}); searching with {} bits", sieve_bits, st.message(),
                     engines::DefaultSieveBits(resolved));
        sieve_bits = engines::DefaultSieveBits(resolved);
        if (sieve_bits == early_bits && early_tables != nullptr) tables = std::move(early_tables);
      } else if (!st.ok()) {
        return Failure(cmd, st);
      }
    }
    if (tables == nullptr && !(st = engines::BuildSearchTables(args.sieve_file, sieve_bits, &tables)).ok()) {
      return Failure(cmd, st);
    }
    std::unique_ptr<SearchEngine> engine;
    if (!(st = engines::MakeEngine(resolved, tables, args.threads, &engine, 0,
                                   engines::OwnTableBitsForWork(planned_numbers)))
             .ok()) {
      return Failure(cmd, st);
    }
    spdlog::info("engine {}: tables built in {:.2f} s", engine->Describe(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (!engine->SetupNote().empty()) spdlog::debug("engine set-up: {}", engine->SetupNote());

    g_cancel.store(false);
    auto previous_handler = std::signal(SIGINT, OnInterrupt);
    ProgressOptions progress_options;
    progress_options.terminal = ::isatty(STDERR_FILENO) == 1;
    progress_options.log_interval =
        std::chrono::milliseconds(static_cast<int64_t>(args.progress_interval_s * 1000 + 0.5));
    ProgressLine progress(planned_numbers, std::move(progress_options));
    // One class-member search serves consecutive units, as in the coordinator (exact:
    // core/class_member_cache.h); a fresh one each unit took 0.03-0.04 s at 2^40.
    ClassMemberCache member_cache;
    for (size_t i = 0; i < plan.size(); ++i) {
      const PlannedUnit& p = plan[i];
      // The spec the coordinator would lease for this unit (core/unit_spec.h).
      const auto spec_start = std::chrono::steady_clock::now();
      UnitSpec spec;
      UnitSpecNotes notes;
      if (!(st = MakeUnitSpec(merged, p.begin, p.end, kinds, &member_cache, &spec, &notes)).ok()) {
        progress.Clear();
        return Failure(cmd, st);
      }
      if (!notes.member_search_error.empty()) {
        spdlog::warn("unit at {}: holes left open: {}", ToDecimal(p.begin), notes.member_search_error);
      }

      const std::string label = "unit " + std::to_string(i + 1) + "/" + std::to_string(plan.size()) + " [" +
                                FormatNumberShort(p.begin) + ", " + FormatNumberShort(p.end) + ") floor " +
                                std::to_string(spec.floor);
      const auto unit_start = std::chrono::steady_clock::now();
      const double spec_seconds = std::chrono::duration<double>(unit_start - spec_start).count();
      FinishedUnit finished;
      finished.begin = p.begin;
      finished.end = p.end;
      finished.kinds = kinds;
      // A line redrawn on a terminal, else a log line every --progress-interval.
      const ProgressFn on_progress = [&](uint64_t done, uint64_t) { progress.Update(searched + done, label); };
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
      const std::string engine_note = engine->LastSearchNote();
      if (!(st = collatz::VerifyUnitResult(*tables, spec, finished.result)).ok()) {
        progress.Clear();
        return Failure(cmd, st);
      }
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - unit_start).count();
      units.push_back(finished);
      MergedRecords next = MergeRecords(imports, units, known_points);
      UnitProvenance prov{spec.floor, spec.open_holes.size(), engine->Describe(), seconds};
      if (!(st = db->StoreFinishedUnit(finished, prov, &next)).ok()) {
        progress.Clear();
        return Failure(cmd, st);
      }
      merged = std::move(next);
      searched += p.end - p.begin;
      progress.Clear();
      const double store_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - unit_start).count() - seconds;
      spdlog::debug("unit [{}, {}) stored: floor {}, {} open holes (smallest {}), {} ladder entries, {} class minima, "
                    "{:.2f} s (spec {:.3f} s, store {:.3f} s), record table complete below {}{}{}",
                    ToDecimal(p.begin), ToDecimal(p.end), spec.floor, spec.open_holes.size(),
                    spec.open_holes.empty() ? std::string("-") : std::to_string(spec.open_holes.front()),
                    finished.result.ladder.size(), finished.result.class_minima.size(), seconds, spec_seconds,
                    store_seconds, ToDecimal(spec.records_complete_below), engine_note.empty() ? "" : "; ",
                    engine_note);
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

  // 4. The summary (and with --print-records every record of [from, to)).
  if (args.print_records) PrintRecordsInRange(merged, from, to, kinds == Kinds::kDelayAndClass);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const double rate = seconds > 0 ? static_cast<double>(searched) / seconds : 0;
  std::printf("# searched %s numbers in %.2f s (%s numbers/s); %zu new units, %s numbers were already covered\n",
              ToDecimal(searched).c_str(), seconds, FormatRate(rate).c_str(), plan.size(),
              ToDecimal((to - from) - searched).c_str());
  PrintSummary(merged, from, to, kinds, args.db, !imports.empty());
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace collatz::cli
