#include "cli/import_lists.h"

#include <cstdio>
#include <filesystem>

#include "cli/cli_util.h"
#include "cli/exit_codes.h"
#include "core/class_members.h"
#include "core/embedded_records.h"
#include "core/import_check.h"
#include "core/known_points.h"
#include "core/published_points.h"
#include "core/records_csv.h"
#include "storage/record_db.h"

namespace collatz::cli {

Status ReadImportLists(const ImportListArgs& a, TrustedImport* out, std::string* source) {
  *out = TrustedImport();
  if (a.published) {
    if (!a.delay_csv.empty() || !a.class_csv.empty() || !a.complete_below.empty()) {
      return Status::InvalidArgument("--published takes no --delay-csv, --class-csv or --complete-below");
    }
    Status st = ParseRecordsCsv(EmbeddedPublishedDelayRecordsCsv(), RecordCsvKind::kDelay, &out->delay_records);
    if (!st.ok()) return Status::InvalidArgument(std::string(kEmbeddedPublishedDelayRecordsName) + ": " + st.message());
    if (out->delay_records.empty()) return Status::InvalidArgument("the built-in published records are empty");
    // Complete up to the last row (data/README.md), so below its n + 1.
    out->complete_below = out->delay_records.back().n + 1;
    *source = a.source.empty() ? kEmbeddedPublishedDelayRecordsName : a.source;
    return Status::Ok();
  }
  if (a.delay_csv.empty() || a.complete_below.empty()) {
    return Status::InvalidArgument("give --published, or --delay-csv FILE with --complete-below X");
  }
  Status st = ParseNumberFlag("--complete-below", a.complete_below, &out->complete_below);
  if (st.ok()) st = ReadRecordsCsv(a.delay_csv, RecordCsvKind::kDelay, &out->delay_records);
  if (st.ok() && !a.class_csv.empty()) st = ReadRecordsCsv(a.class_csv, RecordCsvKind::kClass, &out->class_records);
  if (!st.ok()) return st;
  *source = a.source.empty() ? a.delay_csv : a.source;
  return Status::Ok();
}

Status ReadKnownPointsArgs(const ImportListArgs& a, std::vector<Record>* points, std::string* source) {
  if (a.published || !a.delay_csv.empty() || !a.class_csv.empty() || !a.complete_below.empty()) {
    return Status::InvalidArgument("--points takes no --published, --delay-csv, --class-csv or --complete-below");
  }
  if (Status st = ReadRecordsCsv(a.points_csv, RecordCsvKind::kDelay, points); !st.ok()) return st;
  if (points->empty()) return Status::InvalidArgument(a.points_csv + ": no points (header n,delay, then rows)");
  if (points->size() > kMaxKnownPointsPerImport) {
    return Status::InvalidArgument(a.points_csv + ": " + std::to_string(points->size()) + " rows, more than the " +
                                   std::to_string(kMaxKnownPointsPerImport) + " one import may hold");
  }
  *source = a.source.empty() ? a.points_csv : a.source;
  return Status::Ok();
}

int LocalImportPoints(const ImportListArgs& args, const std::string& db_path) {
  const std::string cmd = "import";
  std::vector<Record> points;
  std::string source;
  Status st = ReadKnownPointsArgs(args, &points, &source);
  if (st.code() == Status::Code::kIOError) return Failure(cmd, st);
  if (!st.ok()) return UsageError(cmd, st.message());
  // Every delay, before a file is opened or created.
  if (!(st = CheckKnownPointRows(points)).ok()) return UsageError(cmd, "refused: " + st.message());
  std::unique_ptr<RecordDb> db;
  if (!(st = RecordDb::Open(db_path, RecordDb::OpenMode::kCreateIfMissing, &db)).ok()) return Failure(cmd, st);
  std::vector<TrustedImport> imports;
  if (!(st = db->LoadImports(&imports)).ok()) return Failure(cmd, st);
  if (!(st = CheckKnownPointsFitImports(points, imports)).ok()) return UsageError(cmd, "refused: " + st.message());
  size_t added = 0;
  if (!(st = db->StoreKnownPoints(points, source.substr(0, 500), &added)).ok()) return Failure(cmd, st);
  std::vector<Record> all;
  if (!(st = db->LoadKnownPoints(&all)).ok()) return Failure(cmd, st);
  std::printf("imported %zu known points into %s: %zu new, %zu already known; %zu held\n", points.size(),
              db_path.c_str(), added, points.size() - added, all.size());
  return kExitOk;
}

int LocalImport(const ImportListArgs& args, const std::string& db_path) {
  const std::string cmd = "import";
  TrustedImport import;
  std::string source;
  Status st = ReadImportLists(args, &import, &source);
  if (st.code() == Status::Code::kIOError) return Failure(cmd, st);
  if (!st.ok()) return UsageError(cmd, st.message());
  // What the lists must fit even without a database: their own rows and the published
  // records. Checked before the file is opened, so that bad input creates no database.
  if (!(st = CheckTrustedImport(import, PublishedDelayPoints())).ok()) return UsageError(cmd, "refused: " + st.message());

  std::unique_ptr<RecordDb> db;
  if (!(st = RecordDb::Open(db_path, RecordDb::OpenMode::kCreateIfMissing, &db)).ok()) return Failure(cmd, st);
  std::vector<TrustedImport> imports;
  std::vector<FinishedUnit> units;
  if (!(st = db->LoadImports(&imports)).ok()) return Failure(cmd, st);
  if (!(st = db->LoadFinishedUnits(&units)).ok()) return Failure(cmd, st);
  std::vector<Record> known_points;
  if (!(st = db->LoadKnownPoints(&known_points)).ok()) return Failure(cmd, st);
  // Every number the database knows (records and candidates of its units and imports, its known points).
  const MergedRecords before = MergeRecords(imports, units, known_points);
  if (!(st = CheckTrustedImport(import, ClassMemberSeeds(before))).ok()) {
    return UsageError(cmd, "refused: " + st.message());
  }
  imports.push_back(import);
  const MergedRecords merged = MergeRecords(imports, units, known_points);
  if (!(st = db->StoreImport(import, source.substr(0, 500), &merged)).ok()) return Failure(cmd, st);
  std::printf("imported %zu delay and %zu class records complete below %s into %s; covered prefix now %s%s\n",
              import.delay_records.size(), import.class_records.size(), ToDecimal(import.complete_below).c_str(),
              db_path.c_str(), ToDecimal(merged.covered_prefix).c_str(),
              import.class_records.empty() ? " (delay searches only: no class records)" : "");
  return kExitOk;
}

}  // namespace collatz::cli
