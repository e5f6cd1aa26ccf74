// The collatzctl commands. main.cc only wires CLI11 to these; each command validates
// its arguments completely before it touches the database, so bad input never creates
// or changes a database file. Each returns an exit code (cli/exit_codes.h).
#pragma once

#include <string>

namespace collatz::cli {

struct RunArgs {
  std::string from = "1";
  std::string to;
  std::string kinds = "delay,class";
  std::string backend = "cpu";
  std::string db = "./collatz.db";
  int threads = 0;             // 0: all cores
  std::string unit_size;       // empty: DefaultUnitSize
  int sieve_bits = 0;          // 0: DefaultSieveBits
  std::string sieve_file;      // a collatz-sieve file instead of a generated sieve
  bool print_records = false;  // list every record of the range, not just the summary
  double progress_interval_s = 20;  // without a terminal: seconds between progress log lines
};
int RunCommand(const RunArgs& args);

struct RecordsArgs {
  std::string db = "./collatz.db";
  std::string kind;
  std::string format = "table";
};
int RecordsCommand(const RecordsArgs& args);

struct BenchArgs {
  std::string backend = "cpu";
  std::string at = "2^60";
  std::string numbers;         // empty: 2^32 on the CPU, 2^40 on the GPU
  std::string kinds = "delay";
  int threads = 0;
  int sieve_bits = 0;
  std::string sieve_file;
  std::string records;         // empty: the compiled-in copy of the published delay records (core/embedded_records.h)
  std::string class_records;   // empty: the compiled-in copy of the class records below 2^28
  std::string baseline_numbers = "2^28";  // GPU: numbers for the baseline kernel (0: none)
  bool no_class_members = false;  // keep open the classes only a member search would close
  std::string context = "trusted";  // none, floor or trusted (core/bench_unit.h BenchContext)
  bool check = false;               // re-run a slice of the unit on the CPU engine and compare
  std::string check_numbers = "2^30";
  bool record_window = false;       // move --at to the aligned window holding the next published record
  std::string points;               // known points CSV (n,delay), as `import --points` stores them
};
int BenchCommand(const BenchArgs& args);

}  // namespace collatz::cli
