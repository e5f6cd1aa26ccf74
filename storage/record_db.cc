#include "storage/record_db.h"

#include <sys/stat.h>

#include <cinttypes>
#include <cstdio>
#include <limits>
#include <map>

#include "storage/known_points_table.h"
#include "storage/merged_records_table.h"
#include "storage/n_text.h"
#include "storage/schema.h"
#include "storage/sqlite_statement.h"

namespace collatz {

namespace {

const char* KindsText(Kinds k) { return k == Kinds::kDelay ? "delay" : "delay,class"; }

Status ParseKindsText(const std::string& s, Kinds* out) {
  if (s == "delay") {
    *out = Kinds::kDelay;
  } else if (s == "delay,class") {
    *out = Kinds::kDelayAndClass;
  } else {
    return Status::Corruption("unknown kinds \"" + s + "\" in the units table");
  }
  return Status::Ok();
}

std::string Hex16(uint64_t x) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, x);
  return buf;
}

Status ParseHex16(const std::string& s, uint64_t* out) {
  if (s.size() != 16) return Status::Corruption("bad work hash \"" + s + "\"");
  uint64_t r = 0;
  for (char ch : s) {
    int d;
    if (ch >= '0' && ch <= '9') d = ch - '0';
    else if (ch >= 'a' && ch <= 'f') d = ch - 'a' + 10;
    else return Status::Corruption("bad work hash \"" + s + "\"");
    r = r << 4 | static_cast<uint64_t>(d);
  }
  *out = r;
  return Status::Ok();
}

Status ParseU64Text(const std::string& s, uint64_t* out) {
  u128 v = 0;
  Status st = ParseDecimalU128(s, &v);
  if (!st.ok() || v > std::numeric_limits<uint64_t>::max()) return Status::Corruption("bad 64-bit value \"" + s + "\"");
  *out = static_cast<uint64_t>(v);
  return Status::Ok();
}

Status CheckFitsInt64(uint64_t v, const char* what) {
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Status::OutOfRange(std::string(what) + " does not fit the database's 64-bit signed integer");
  }
  return Status::Ok();
}

// Returns the single-column text rows of a pragma such as quick_check.
Status PragmaRows(sqlite3* db, const std::string& pragma, std::vector<std::string>* rows) {
  SqliteStatement stmt;
  Status st = stmt.Prepare(db, "PRAGMA " + pragma);
  if (!st.ok()) return st;
  bool row = false;
  while (true) {
    st = stmt.Step(&row);
    if (!st.ok()) return st;
    if (!row) break;
    rows->push_back(stmt.ColumnText(0));
  }
  return Status::Ok();
}

Status PragmaInt(sqlite3* db, const std::string& pragma, int64_t* value) {
  std::vector<std::string> rows;
  Status st = PragmaRows(db, pragma, &rows);
  if (!st.ok()) return st;
  if (rows.size() != 1) return Status::Internal("PRAGMA " + pragma + " returned " + std::to_string(rows.size()) + " rows");
  *value = std::stoll(rows[0]);
  return Status::Ok();
}

struct SqliteCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using SqliteHandle = std::unique_ptr<sqlite3, SqliteCloser>;

// Checks an existing file on a read-only connection; writes nothing.
Status ValidateExistingFile(const std::string& path) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  SqliteHandle db(raw);
  if (rc != SQLITE_OK) return SqliteStatus(raw, rc, "cannot open database " + path);
  sqlite3_busy_timeout(raw, 10000);

  const std::string damaged = "database " + path + " is damaged or not a SQLite database";
  std::vector<std::string> rows;
  Status st = PragmaRows(raw, "quick_check", &rows);
  if (!st.ok()) {
    if (st.code() == Status::Code::kCorruption) return Status::Corruption(damaged + " (" + st.message() + ")");
    return st;
  }
  if (rows.empty() || rows[0] != "ok") {
    std::string first = rows.empty() ? "no result" : rows[0];
    return Status::Corruption(damaged + " (quick_check: " + first + ")");
  }
  int64_t version = 0, app_id = 0, tables = 0;
  if (!(st = PragmaInt(raw, "user_version", &version)).ok()) return st;
  if (!(st = PragmaInt(raw, "application_id", &app_id)).ok()) return st;
  {
    SqliteStatement stmt;
    if (!(st = stmt.Prepare(raw, "SELECT count(*) FROM sqlite_schema")).ok()) return st;
    bool row = false;
    if (!(st = stmt.Step(&row)).ok()) return st;
    tables = row ? stmt.ColumnInt64(0) : 0;
  }
  const bool empty_file = version == 0 && app_id == 0 && tables == 0;
  if (!empty_file && app_id != kRecordDbApplicationId) {
    return Status::FailedPrecondition(path + " is a SQLite database but not a collatz record database");
  }
  if (version > LatestSchemaVersion()) {
    return Status::FailedPrecondition("database " + path + " has schema version " + std::to_string(version) +
                                      ", newer than this binary understands (" +
                                      std::to_string(LatestSchemaVersion()) + "); use a newer collatzctl");
  }
  return Status::Ok();
}

}  // namespace

Status RecordDb::Open(const std::string& path, OpenMode mode, std::unique_ptr<RecordDb>* out) {
  struct stat info;
  const bool exists = ::stat(path.c_str(), &info) == 0;
  if (!exists && mode == OpenMode::kExistingOnly) return Status::NotFound("no database at " + path);
  if (exists) {
    if (!S_ISREG(info.st_mode)) return Status::IOError(path + " is not a regular file");
    Status st = ValidateExistingFile(path);
    if (!st.ok()) return st;
  }

  sqlite3* raw = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | (mode == OpenMode::kCreateIfMissing ? SQLITE_OPEN_CREATE : 0);
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  SqliteHandle db(raw);
  if (rc != SQLITE_OK) return SqliteStatus(raw, rc, "cannot open database " + path);
  sqlite3_busy_timeout(raw, 10000);

  std::vector<std::string> rows;
  Status st = PragmaRows(raw, "journal_mode = WAL", &rows);
  if (!st.ok()) return st;
  if (rows.empty() || rows[0] != "wal") return Status::IOError("cannot switch " + path + " to WAL mode");
  if (!(st = SqliteExec(raw, "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON")).ok()) return st;

  int64_t version = 0;
  if (!(st = PragmaInt(raw, "user_version", &version)).ok()) return st;
  if (version > LatestSchemaVersion()) {  // raced with a newer binary
    return Status::FailedPrecondition("database " + path + " has a newer schema version " + std::to_string(version));
  }
  if (!(st = MigrateSchema(raw, static_cast<int>(version))).ok()) return st;

  out->reset(new RecordDb(path, db.release()));
  return Status::Ok();
}

RecordDb::~RecordDb() { sqlite3_close_v2(db_); }

Status RecordDb::SchemaVersion(int* version) {
  int64_t v = 0;
  Status st = PragmaInt(db_, "user_version", &v);
  *version = static_cast<int>(v);
  return st;
}

Status RecordDb::LoadFinishedUnits(std::vector<FinishedUnit>* out) {
  out->clear();
  std::map<int64_t, size_t> index;
  SqliteStatement stmt;
  Status st = stmt.Prepare(db_,
                           "SELECT u.id, u.begin_n, u.end_n, u.kinds, r.candidates, r.tally_count, r.tally_sum, "
                           "r.work_hash, r.work_hash_version FROM units u JOIN unit_results r ON r.unit_id = u.id "
                           "WHERE u.state = 'finished' ORDER BY u.begin_n, u.id");
  if (!st.ok()) return st;
  bool row = false;
  while (true) {
    if (!(st = stmt.Step(&row)).ok()) return st;
    if (!row) break;
    FinishedUnit unit;
    if (!(st = DecodeNText(stmt.ColumnText(1), &unit.begin)).ok()) return st;
    if (!(st = DecodeNText(stmt.ColumnText(2), &unit.end)).ok()) return st;
    if (!(st = ParseKindsText(stmt.ColumnText(3), &unit.kinds)).ok()) return st;
    unit.result.candidates = static_cast<uint64_t>(stmt.ColumnInt64(4));
    unit.result.tally_count = static_cast<uint64_t>(stmt.ColumnInt64(5));
    if (!(st = ParseU64Text(stmt.ColumnText(6), &unit.result.tally_sum)).ok()) return st;
    if (!(st = ParseHex16(stmt.ColumnText(7), &unit.result.work_hash)).ok()) return st;
    // The version the hash was computed with (1 for rows older than schema v4), not this binary's.
    const int64_t hash_version = stmt.ColumnInt64(8);
    if (hash_version < 1 || hash_version > std::numeric_limits<uint32_t>::max()) {
      return Status::Corruption("bad work hash version " + std::to_string(hash_version));
    }
    unit.result.work_hash_version = static_cast<uint32_t>(hash_version);
    index[stmt.ColumnInt64(0)] = out->size();
    out->push_back(std::move(unit));
  }

  SqliteStatement ladder;
  if (!(st = ladder.Prepare(db_, "SELECT unit_id, n, delay FROM unit_ladder ORDER BY unit_id, n")).ok()) return st;
  while (true) {
    if (!(st = ladder.Step(&row)).ok()) return st;
    if (!row) break;
    auto it = index.find(ladder.ColumnInt64(0));
    if (it == index.end()) continue;  // a unit not (yet) finished
    Record r;
    if (!(st = DecodeNText(ladder.ColumnText(1), &r.n)).ok()) return st;
    r.delay = static_cast<uint32_t>(ladder.ColumnInt64(2));
    (*out)[it->second].result.ladder.push_back(r);
  }

  SqliteStatement minima;
  if (!(st = minima.Prepare(db_, "SELECT unit_id, delay, n FROM unit_class_minima ORDER BY unit_id, delay")).ok()) {
    return st;
  }
  while (true) {
    if (!(st = minima.Step(&row)).ok()) return st;
    if (!row) break;
    auto it = index.find(minima.ColumnInt64(0));
    if (it == index.end()) continue;
    Record r;
    r.delay = static_cast<uint32_t>(minima.ColumnInt64(1));
    if (!(st = DecodeNText(minima.ColumnText(2), &r.n)).ok()) return st;
    (*out)[it->second].result.class_minima.push_back(r);
  }
  return Status::Ok();
}

Status RecordDb::LoadImports(std::vector<TrustedImport>* out) {
  out->clear();
  std::map<int64_t, size_t> index;
  SqliteStatement stmt;
  Status st = stmt.Prepare(db_, "SELECT id, complete_below FROM imports ORDER BY id");
  if (!st.ok()) return st;
  bool row = false;
  while (true) {
    if (!(st = stmt.Step(&row)).ok()) return st;
    if (!row) break;
    TrustedImport imp;
    if (!(st = DecodeNText(stmt.ColumnText(1), &imp.complete_below)).ok()) return st;
    index[stmt.ColumnInt64(0)] = out->size();
    out->push_back(std::move(imp));
  }
  SqliteStatement recs;
  if (!(st = recs.Prepare(db_, "SELECT import_id, kind, n, delay FROM import_records ORDER BY import_id, kind, n"))
           .ok()) {
    return st;
  }
  while (true) {
    if (!(st = recs.Step(&row)).ok()) return st;
    if (!row) break;
    auto it = index.find(recs.ColumnInt64(0));
    if (it == index.end()) return Status::Corruption("import record without its import");
    Record r;
    if (!(st = DecodeNText(recs.ColumnText(2), &r.n)).ok()) return st;
    r.delay = static_cast<uint32_t>(recs.ColumnInt64(3));
    TrustedImport& imp = (*out)[it->second];
    (recs.ColumnText(1) == "delay" ? imp.delay_records : imp.class_records).push_back(r);
  }
  return Status::Ok();
}

Status RecordDb::StoreFinishedUnit(const FinishedUnit& unit, const UnitProvenance& provenance,
                                   const MergedRecords* merged, int64_t* unit_id) {
  if (unit.begin < 1 || unit.end <= unit.begin) {
    return Status::InvalidArgument("unit [" + ToDecimal(unit.begin) + ", " + ToDecimal(unit.end) + ") is empty or starts at 0");
  }
  const UnitResult& r = unit.result;
  Status st;
  if (!(st = CheckFitsInt64(r.candidates, "candidates")).ok()) return st;
  if (!(st = CheckFitsInt64(r.tally_count, "tally_count")).ok()) return st;
  if (!(st = CheckFitsInt64(provenance.open_holes, "open_holes")).ok()) return st;

  SqliteTransaction txn(db_);
  if (!txn.status().ok()) return txn.status();

  SqliteStatement ins;
  if (!(st = ins.Prepare(db_,
                         "INSERT INTO units (begin_n, end_n, kinds, state, finished_at) VALUES "
                         "(?1, ?2, ?3, 'finished', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))"))
           .ok()) {
    return st;
  }
  ins.BindText(1, EncodeNText(unit.begin));
  ins.BindText(2, EncodeNText(unit.end));
  ins.BindText(3, KindsText(unit.kinds));
  if (!(st = ins.Run()).ok()) return st;
  const int64_t id = sqlite3_last_insert_rowid(db_);

  SqliteStatement res;
  if (!(st = res.Prepare(db_,
                         "INSERT INTO unit_results (unit_id, floor, open_holes, candidates, tally_count, tally_sum, "
                         "work_hash, engine, seconds, work_hash_version) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
                         "?10)"))
           .ok()) {
    return st;
  }
  res.BindInt64(1, id);
  res.BindInt64(2, provenance.floor);
  res.BindInt64(3, static_cast<int64_t>(provenance.open_holes));
  res.BindInt64(4, static_cast<int64_t>(r.candidates));
  res.BindInt64(5, static_cast<int64_t>(r.tally_count));
  res.BindText(6, std::to_string(r.tally_sum));
  res.BindText(7, Hex16(r.work_hash));
  res.BindText(8, provenance.engine);
  res.BindDouble(9, provenance.seconds);
  res.BindInt64(10, r.work_hash_version);
  if (!(st = res.Run()).ok()) return st;

  SqliteStatement lad;
  if (!(st = lad.Prepare(db_, "INSERT INTO unit_ladder (unit_id, n, delay) VALUES (?1, ?2, ?3)")).ok()) return st;
  for (const Record& rec : r.ladder) {
    lad.BindInt64(1, id);
    lad.BindText(2, EncodeNText(rec.n));
    lad.BindInt64(3, rec.delay);
    if (!(st = lad.Run()).ok()) return st;
  }
  SqliteStatement mins;
  if (!(st = mins.Prepare(db_, "INSERT INTO unit_class_minima (unit_id, delay, n) VALUES (?1, ?2, ?3)")).ok()) {
    return st;
  }
  for (const Record& rec : r.class_minima) {
    mins.BindInt64(1, id);
    mins.BindInt64(2, rec.delay);
    mins.BindText(3, EncodeNText(rec.n));
    if (!(st = mins.Run()).ok()) return st;
  }
  if (merged != nullptr && !(st = WriteMergedRecords(*merged)).ok()) return st;
  if (!(st = txn.Commit()).ok()) return st;
  if (unit_id != nullptr) *unit_id = id;
  return Status::Ok();
}

Status RecordDb::StoreImport(const TrustedImport& import, const std::string& source, const MergedRecords* merged) {
  if (import.complete_below < 1) return Status::InvalidArgument("import must cover at least [1, 1)");
  SqliteTransaction txn(db_);
  if (!txn.status().ok()) return txn.status();
  SqliteStatement ins;
  Status st = ins.Prepare(db_, "INSERT INTO imports (complete_below, source) VALUES (?1, ?2)");
  if (!st.ok()) return st;
  ins.BindText(1, EncodeNText(import.complete_below));
  ins.BindText(2, source);
  if (!(st = ins.Run()).ok()) return st;
  const int64_t id = sqlite3_last_insert_rowid(db_);
  SqliteStatement rec;
  if (!(st = rec.Prepare(db_, "INSERT INTO import_records (import_id, kind, n, delay) VALUES (?1, ?2, ?3, ?4)")).ok()) {
    return st;
  }
  for (int k = 0; k < 2; ++k) {
    for (const Record& r : k == 0 ? import.delay_records : import.class_records) {
      rec.BindInt64(1, id);
      rec.BindText(2, k == 0 ? "delay" : "class");
      rec.BindText(3, EncodeNText(r.n));
      rec.BindInt64(4, r.delay);
      if (!(st = rec.Run()).ok()) return st;
    }
  }
  if (merged != nullptr && !(st = WriteMergedRecords(*merged)).ok()) return st;
  return txn.Commit();
}

Status RecordDb::StoreKnownPoints(const std::vector<Record>& points, const std::string& source, size_t* added) {
  SqliteTransaction txn(db_);
  if (!txn.status().ok()) return txn.status();
  if (Status st = InsertKnownPoints(db_, points, source, added); !st.ok()) return st;
  return txn.Commit();
}

Status RecordDb::LoadKnownPoints(std::vector<Record>* out) { return LoadKnownPointsTable(db_, out); }

Status RecordDb::StoreMergedRecords(const MergedRecords& merged) {
  SqliteTransaction txn(db_);
  if (!txn.status().ok()) return txn.status();
  Status st = WriteMergedRecords(merged);
  if (!st.ok()) return st;
  return txn.Commit();
}

Status RecordDb::WriteMergedRecords(const MergedRecords& merged) {
  return WriteMergedRecordsTable(db_, merged);
}

Status RecordDb::LoadMergedRecords(MergedRecords* out, bool* present) {
  *out = MergedRecords();
  *present = false;
  SqliteStatement ms;
  Status st = ms.Prepare(db_, "SELECT covered_prefix, class_covered_prefix FROM merge_state WHERE id = 1");
  if (!st.ok()) return st;
  bool row = false;
  if (!(st = ms.Step(&row)).ok()) return st;
  if (!row) return Status::Ok();
  *present = true;
  if (!(st = DecodeNText(ms.ColumnText(0), &out->covered_prefix)).ok()) return st;
  if (!(st = DecodeNText(ms.ColumnText(1), &out->class_covered_prefix)).ok()) return st;

  SqliteStatement q;
  if (!(st = q.Prepare(db_,
                       "SELECT kind, status, n, delay FROM final_records "
                       "ORDER BY kind, status, CASE kind WHEN 'delay' THEN n ELSE printf('%010d', delay) END"))
           .ok()) {
    return st;
  }
  while (true) {
    if (!(st = q.Step(&row)).ok()) return st;
    if (!row) break;
    Record r;
    if (!(st = DecodeNText(q.ColumnText(2), &r.n)).ok()) return st;
    r.delay = static_cast<uint32_t>(q.ColumnInt64(3));
    const bool delay = q.ColumnText(0) == "delay";
    const bool final = q.ColumnText(1) == "final";
    (delay ? (final ? out->delay_final : out->delay_candidates) : (final ? out->class_final : out->class_candidates))
        .push_back(r);
  }
  return Status::Ok();
}

Status RecordDb::QueryFinalRecords(RecordKind kind, std::vector<Record>* out, u128* covered_prefix) {
  out->clear();
  *covered_prefix = 1;
  SqliteStatement ms;
  Status st = ms.Prepare(db_, "SELECT covered_prefix, class_covered_prefix FROM merge_state WHERE id = 1");
  if (!st.ok()) return st;
  bool row = false;
  if (!(st = ms.Step(&row)).ok()) return st;
  if (row && !(st = DecodeNText(ms.ColumnText(kind == RecordKind::kDelay ? 0 : 1), covered_prefix)).ok()) return st;

  SqliteStatement q;
  const std::string sql = kind == RecordKind::kDelay
                              ? "SELECT n, delay FROM final_records WHERE kind = 'delay' AND status = 'final' ORDER BY n"
                              : "SELECT n, delay FROM final_records WHERE kind = 'class' AND status = 'final' "
                                "ORDER BY delay";
  if (!(st = q.Prepare(db_, sql)).ok()) return st;
  while (true) {
    if (!(st = q.Step(&row)).ok()) return st;
    if (!row) break;
    Record r;
    if (!(st = DecodeNText(q.ColumnText(0), &r.n)).ok()) return st;
    r.delay = static_cast<uint32_t>(q.ColumnInt64(1));
    out->push_back(r);
  }
  return Status::Ok();
}

}  // namespace collatz
