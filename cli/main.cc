// collatzctl: wires the command line (CLI11) to the commands in cli/*_command.cc.
#include <cstdio>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "cli/admin_commands.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/plot_command.h"
#include "cli/stats_command.h"
#include "core/unit_search.h"
#include "engines/engine_factory.h"

int main(int argc, char** argv) {
  collatz::engines::PrepareProcessForGpu();
  const std::string kSieveBitsHelp =
      "Width k of the join sieve (default: " + std::to_string(collatz::kDefaultSieveBits) + "; " +
      std::to_string(collatz::engines::kFloorContextSieveBits) +
      " for GPU delay-only work of 2^42 numbers or more without a record table near it, " +
      std::to_string(collatz::engines::kWideUnitClassSieveBits) +
      " for GPU delay+class work in units of 2^46 and 2^47, " +
      std::to_string(collatz::engines::kWideUnitDelaySieveBits) +
      " for GPU work in units of 2^48 or more; wide ones are built on the GPU)";
  using namespace collatz::cli;
  CLI::App app{"collatzctl: exact search for Collatz delay records and class records.\n"
               "Numbers may be written as decimal, 0x hex, 2^k, or sums/differences of those (2^60+2^40)."};
  app.require_subcommand(1);
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "Log level on stderr: trace, debug, info, warn, error, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->capture_default_str();

  RunArgs run;
  CLI::App* run_cmd = app.add_subcommand(
      "run", "Search [--from, --to) in-process, store every finished unit in the database, summarize what was found");
  run_cmd->add_option("--from", run.from, "First number of the range (inclusive)")->capture_default_str();
  run_cmd->add_option("--to", run.to, "End of the range (exclusive)")->required();
  run_cmd->add_option("--kinds", run.kinds, "Records to search for: delay, or delay,class")->capture_default_str();
  run_cmd->add_option("--backend", run.backend, "Engine: cpu, gpu, or auto (the GPU if there is one)")
      ->capture_default_str();
  run_cmd->add_option("--db", run.db, "Record database (SQLite; created if missing)")->capture_default_str();
  run_cmd->add_option("--threads", run.threads, "CPU threads (0: all cores)")->capture_default_str();
  run_cmd->add_option("--unit-size", run.unit_size,
                      "Numbers per stored unit (default: about 1/8 of the range, 2^30 a thread to 2^40; GPU: the range, 2^32 to 2^54, with classes to 2^52; at most 2^54)");
  CLI::Option* run_bits = run_cmd->add_option("--sieve-bits", run.sieve_bits, kSieveBitsHelp);
  run_cmd->add_option("--sieve", run.sieve_file, "Sieve file made by collatz-sieve generate (checked on load)")
      ->excludes(run_bits);
  run_cmd->add_flag("--print-records", run.print_records,
                    "List every delay and class record of the range (else a short summary; collatzctl records lists them)");
  run_cmd->add_option("--progress-interval", run.progress_interval_s,
                      "Without a terminal: seconds between progress log lines")
      ->capture_default_str();

  RecordsArgs records;
  CLI::App* records_cmd =
      app.add_subcommand("records", "Print the final records in the database (those below the covered prefix)");
  records_cmd->add_option("--db", records.db, "Record database")->capture_default_str();
  records_cmd->add_option("--kind", records.kind, "delay (n,delay by n) or class (delay,n by delay)")->required();
  records_cmd->add_option("--format", records.format, "table, csv or json")->capture_default_str();

  BenchArgs bench;
  CLI::App* bench_cmd = app.add_subcommand(
      "bench", "Measure search speed near --at, with the published records below it imported as trusted");
  bench_cmd->add_option("--backend", bench.backend, "Engine: cpu or gpu")->capture_default_str();
  bench_cmd->add_option("--at", bench.at, "Start of the measured range")->capture_default_str();
  bench_cmd->add_option("--numbers", bench.numbers, "Size of the measured range (default: 2^32 cpu, 2^40 gpu)");
  bench_cmd->add_option("--kinds", bench.kinds, "delay, or delay,class")->capture_default_str();
  bench_cmd->add_option("--threads", bench.threads, "CPU threads (0: all cores)")->capture_default_str();
  CLI::Option* bench_bits =
      bench_cmd->add_option("--sieve-bits", bench.sieve_bits, kSieveBitsHelp);
  bench_cmd->add_option("--sieve", bench.sieve_file, "Sieve file made by collatz-sieve generate (checked on load)")
      ->excludes(bench_bits);
  bench_cmd->add_option("--records", bench.records,
                        "Published delay records CSV (default: the built-in copy of "
                        "data/published_delay_records.csv, compiled into the binary)");
  bench_cmd->add_option("--class-records", bench.class_records,
                        "Class records CSV, complete up to its largest n (default: the built-in copy of "
                        "data/class_records_below_2p28.csv, compiled into the binary)");
  bench_cmd->add_option("--context", bench.context,
                        "What the unit knows: none (floor 0, no records), floor (the provable floor from the "
                        "recomputed published records below --at, no early termination: an empty database), "
                        "trusted (the records imported as trusted)")
      ->capture_default_str();
  bench_cmd->add_flag("--no-class-members", bench.no_class_members,
                      "delay,class: do not close open classes with members found below --at in the inverse tree "
                      "of the delay records (they stand in for published class records above 2^28)");
  bench_cmd->add_option("--points", bench.points,
                        "Known points CSV (n,delay, any order), as collatzctl import --points stores them: "
                        "measure what they buy (floor and classes closed below --at; every delay recomputed)");
  bench_cmd->add_flag("--check", bench.check,
                      "Re-run the slice [at, at + --check-numbers) on the CPU engine: it must equal the engine's "
                      "own search of the slice and the measured result's entries in it (exit 1 otherwise)");
  bench_cmd->add_option("--check-numbers", bench.check_numbers, "Size of the --check slice")->capture_default_str();
  bench_cmd->add_flag("--record-window", bench.record_window,
                      "Measure the window of --numbers (aligned to it when a power of 2) that holds the first "
                      "odd published delay record at or above --at, so the result holds a record");
  bench_cmd->add_option("--baseline-numbers", bench.baseline_numbers,
                        "GPU: numbers for the plain baseline kernel timed in the same run (0: none)")
      ->capture_default_str();

  StatsArgs stats;
  CLI::App* stats_cmd = app.add_subcommand(
      "stats", "Min, average and max delay of every batch of --batch consecutive N in [--from, --to) (every N counted)");
  stats_cmd->add_option("--from", stats.from, "Start of the range, a multiple of --batch")->capture_default_str();
  stats_cmd->add_option("--to", stats.to, "End of the range (exclusive), a multiple of --batch");
  stats_cmd->add_option("--batch", stats.batch, "Numbers per batch")->capture_default_str();
  stats_cmd->add_option("--backend", stats.backend, "Engine: cpu or gpu")->capture_default_str();
  stats_cmd->add_option("--threads", stats.threads, "CPU threads (0: all cores)")->capture_default_str();
  stats_cmd->add_option("--out", stats.out, "Output file (csv: stdout when omitted)");
  stats_cmd->add_option("--format", stats.format, "bin (stats file, docs/STATS_FORMAT.md) or csv")
      ->capture_default_str();
  stats_cmd->add_option("--in", stats.in, "Read this stats file instead of computing (e.g. --in F --format csv)");

  PlotArgs plot;
  CLI::App* plot_cmd = app.add_subcommand("plot", "Draw a PNG with gnuplot: records (from --db) or stats (from --in)");
  plot_cmd->add_option("what", plot.what, "records or stats")->required()->check(CLI::IsMember({"records", "stats"}));
  plot_cmd->add_option("--db", plot.db, "Record database (plot records)")->capture_default_str();
  plot_cmd->add_option("--in", plot.in, "Stats file (plot stats)");
  plot_cmd->add_option("--out", plot.out, "PNG file to write")->required();
  plot_cmd->add_option("--width", plot.width, "Width in pixels")->capture_default_str();
  plot_cmd->add_option("--height", plot.height, "Height in pixels")->capture_default_str();

  RegisterAdminCommands(app);  // submit, cancel, requeue, status, workers, import, export, backup, ... (a server)

  // CLI11 would only say "A subcommand is required" for a misspelt command; name it.
  if (argc > 1 && argv[1][0] != '-') {
    const std::string first = argv[1];
    if (first != "run" && first != "records" && first != "bench" && first != "stats" && first != "plot" &&
        !IsAdminCommand(first)) {
      std::fprintf(stderr, "collatzctl: error: unknown command \"%s\" (expected run, records, bench, stats or plot)\n"
                   "Run 'collatzctl --help' for usage.\n", first.c_str());
      return kExitUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help (exit 0) or the error
    return code == 0 ? kExitOk : kExitUsage;
  }

  auto logger = spdlog::stderr_color_mt("collatzctl");
  logger->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(log_level));

  if (run_cmd->parsed()) return RunCommand(run);
  if (records_cmd->parsed()) return RecordsCommand(records);
  if (bench_cmd->parsed()) return BenchCommand(bench);
  if (stats_cmd->parsed()) return StatsCommand(stats);
  if (plot_cmd->parsed()) return PlotCommand(plot);
  return kExitUsage;
}
