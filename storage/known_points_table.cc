#include "storage/known_points_table.h"

#include "storage/n_text.h"
#include "storage/sqlite_statement.h"

namespace collatz {

Status InsertKnownPoints(sqlite3* db, const std::vector<Record>& points, const std::string& source, size_t* added) {
  *added = 0;
  SqliteStatement imp;
  Status st = imp.Prepare(db, "INSERT INTO known_point_imports (source) VALUES (?1)");
  if (!st.ok()) return st;
  imp.BindText(1, source);
  if (!(st = imp.Run()).ok()) return st;
  const int64_t id = sqlite3_last_insert_rowid(db);
  SqliteStatement ins;
  if (!(st = ins.Prepare(db, "INSERT OR IGNORE INTO known_points (n, delay, import_id) VALUES (?1, ?2, ?3)")).ok()) {
    return st;
  }
  for (const Record& p : points) {
    ins.BindText(1, EncodeNText(p.n));
    ins.BindInt64(2, p.delay);
    ins.BindInt64(3, id);
    if (!(st = ins.Run()).ok()) return st;
    *added += static_cast<size_t>(sqlite3_changes(db));
  }
  return Status::Ok();
}

Status LoadKnownPointsTable(sqlite3* db, std::vector<Record>* out) {
  out->clear();
  SqliteStatement q;
  Status st = q.Prepare(db, "SELECT n, delay FROM known_points ORDER BY n");
  if (!st.ok()) return st;
  bool row = false;
  while (true) {
    if (!(st = q.Step(&row)).ok()) return st;
    if (!row) break;
    Record r;
    if (!(st = DecodeNText(q.ColumnText(0), &r.n)).ok()) return st;
    const int64_t delay = q.ColumnInt64(1);
    if (delay < 0 || delay > 0xFFFFFFFFll) return Status::Corruption("known point with a bad delay " + std::to_string(delay));
    r.delay = static_cast<uint32_t>(delay);
    out->push_back(r);
  }
  return Status::Ok();
}

}  // namespace collatz
