// collatzctl records: prints the FINAL records of one kind from the database (those below
// the covered prefix of that kind); candidates above it are not printed.
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "core/records_csv.h"
#include "storage/record_db.h"

namespace collatz::cli {

int RecordsCommand(const RecordsArgs& args) {
  const std::string cmd = "records";
  RecordKind kind;
  if (args.kind == "delay") kind = RecordKind::kDelay;
  else if (args.kind == "class") kind = RecordKind::kClass;
  else return UsageError(cmd, "--kind: \"" + args.kind + "\" is not one of: delay, class");
  if (args.format != "table" && args.format != "csv" && args.format != "json") {
    return UsageError(cmd, "--format: \"" + args.format + "\" is not one of: table, csv, json");
  }
  if (args.db.empty()) return UsageError(cmd, "--db must not be empty");

  std::unique_ptr<RecordDb> db;
  Status st = RecordDb::Open(args.db, RecordDb::OpenMode::kExistingOnly, &db);
  if (!st.ok()) return Failure(cmd, st);
  std::vector<Record> records;
  u128 prefix = 1;
  if (!(st = db->QueryFinalRecords(kind, &records, &prefix)).ok()) return Failure(cmd, st);

  const bool delay = kind == RecordKind::kDelay;
  std::string out;
  if (args.format == "csv") {
    out = FormatRecordsCsv(records, delay ? RecordCsvKind::kDelay : RecordCsvKind::kClass);
  } else if (args.format == "json") {
    nlohmann::json j;
    j["kind"] = args.kind;
    j["covered_prefix"] = ToDecimal(prefix);
    nlohmann::json list = nlohmann::json::array();
    for (const Record& r : records) list.push_back({{"n", ToDecimal(r.n)}, {"delay", r.delay}});
    j["records"] = std::move(list);
    out = j.dump(2) + "\n";
  } else {
    size_t width = delay ? 1 : 5;
    for (const Record& r : records) width = std::max(width, ToDecimal(r.n).size());
    char line[128];
    if (delay) std::snprintf(line, sizeof line, "%*s  %5s\n", static_cast<int>(width), "n", "delay");
    else std::snprintf(line, sizeof line, "%5s  %*s\n", "delay", static_cast<int>(width), "n");
    out += line;
    for (const Record& r : records) {
      const std::string n = ToDecimal(r.n);
      if (delay) std::snprintf(line, sizeof line, "%*s  %5u\n", static_cast<int>(width), n.c_str(), r.delay);
      else std::snprintf(line, sizeof line, "%5u  %*s\n", r.delay, static_cast<int>(width), n.c_str());
      out += line;
    }
    out += "# " + std::to_string(records.size()) + " final " + args.kind + " records below " + ToDecimal(prefix) + "\n";
  }
  if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0) {
    return Failure(cmd, Status::IOError("writing to stdout failed"));
  }
  return kExitOk;
}

}  // namespace collatz::cli
