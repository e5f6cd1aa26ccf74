#include "storage/sqlite_statement.h"

namespace collatz {

Status SqliteStatus(sqlite3* db, int rc, std::string_view what) {
  if (rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE) return Status::Ok();
  std::string msg = std::string(what) + ": " + (db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  switch (rc & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status::Corruption(msg);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Unavailable(msg);
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
      return Status::InvalidArgument(msg);
    default:
      return Status::IOError(msg);
  }
}

Status SqliteExec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  if (err != nullptr) sqlite3_free(err);
  return SqliteStatus(db, rc, "executing \"" + sql.substr(0, 60) + "\"");
}

SqliteStatement::~SqliteStatement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

Status SqliteStatement::Prepare(sqlite3* db, const std::string& sql) {
  if (stmt_ != nullptr) {
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
  }
  db_ = db;
  sql_ = sql;
  const int rc = sqlite3_prepare_v2(db, sql.c_str(), static_cast<int>(sql.size()), &stmt_, nullptr);
  return SqliteStatus(db, rc, "preparing \"" + sql.substr(0, 60) + "\"");
}

Status SqliteStatement::BindInt64(int index, int64_t value) {
  return SqliteStatus(db_, sqlite3_bind_int64(stmt_, index, value), "binding");
}

Status SqliteStatement::BindText(int index, std::string_view value) {
  return SqliteStatus(db_, sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                                             SQLITE_TRANSIENT),
                      "binding");
}

Status SqliteStatement::BindBlob(int index, std::string_view value) {
  // A zero-length blob is bound as an empty blob, not NULL (data must not be null).
  static const char kEmpty = 0;
  return SqliteStatus(db_, sqlite3_bind_blob64(stmt_, index, value.empty() ? &kEmpty : value.data(), value.size(),
                                               SQLITE_TRANSIENT),
                      "binding");
}

Status SqliteStatement::BindDouble(int index, double value) {
  return SqliteStatus(db_, sqlite3_bind_double(stmt_, index, value), "binding");
}

Status SqliteStatement::BindNull(int index) { return SqliteStatus(db_, sqlite3_bind_null(stmt_, index), "binding"); }

Status SqliteStatement::Step(bool* row) {
  const int rc = sqlite3_step(stmt_);
  *row = rc == SQLITE_ROW;
  return SqliteStatus(db_, rc, "running \"" + sql_.substr(0, 60) + "\"");
}

Status SqliteStatement::Run() {
  bool row = true;
  while (row) {
    Status st = Step(&row);
    if (!st.ok()) return st;
  }
  return Reset();
}

Status SqliteStatement::Reset() {
  const int rc = sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  return SqliteStatus(db_, rc, "resetting \"" + sql_.substr(0, 60) + "\"");
}

std::string SqliteStatement::ColumnText(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (p == nullptr) return std::string();
  return std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

std::string SqliteStatement::ColumnBlob(int col) const {
  const void* p = sqlite3_column_blob(stmt_, col);
  if (p == nullptr) return std::string();
  return std::string(static_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

SqliteTransaction::SqliteTransaction(sqlite3* db) : db_(db) {
  begin_status_ = SqliteExec(db_, "BEGIN IMMEDIATE");
  open_ = begin_status_.ok();
}

SqliteTransaction::~SqliteTransaction() {
  if (open_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

Status SqliteTransaction::Commit() {
  if (!open_) return Status::FailedPrecondition("transaction is not open");
  Status st = SqliteExec(db_, "COMMIT");
  if (st.ok()) open_ = false;
  return st;
}

}  // namespace collatz
