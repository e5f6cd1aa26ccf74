// Thin RAII helpers over the SQLite C API: a prepared statement and a transaction.
// Every failure becomes a collatz::Status naming the SQL and SQLite's message.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace collatz {

// Maps an SQLite result code to a Status (Corruption for damaged or foreign files).
Status SqliteStatus(sqlite3* db, int rc, std::string_view what);

// Runs one or more statements that return no rows of interest.
Status SqliteExec(sqlite3* db, const std::string& sql);

class SqliteStatement {
 public:
  SqliteStatement() = default;
  ~SqliteStatement();
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  Status Prepare(sqlite3* db, const std::string& sql);

  // Parameters are 1-based, as in SQLite.
  Status BindInt64(int index, int64_t value);
  Status BindText(int index, std::string_view value);
  Status BindBlob(int index, std::string_view value);
  Status BindDouble(int index, double value);
  Status BindNull(int index);

  // Steps once; *row is true when a row is available.
  Status Step(bool* row);
  // Steps until done, for statements that return no rows.
  Status Run();
  Status Reset();

  int64_t ColumnInt64(int col) const { return sqlite3_column_int64(stmt_, col); }
  double ColumnDouble(int col) const { return sqlite3_column_double(stmt_, col); }
  std::string ColumnText(int col) const;
  std::string ColumnBlob(int col) const;
  bool ColumnIsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

// BEGIN IMMEDIATE on construction (see status()); ROLLBACK on destruction unless committed.
class SqliteTransaction {
 public:
  explicit SqliteTransaction(sqlite3* db);
  ~SqliteTransaction();
  SqliteTransaction(const SqliteTransaction&) = delete;
  SqliteTransaction& operator=(const SqliteTransaction&) = delete;

  const Status& status() const { return begin_status_; }
  Status Commit();

 private:
  sqlite3* db_;
  Status begin_status_;
  bool open_ = false;
};

}  // namespace collatz
