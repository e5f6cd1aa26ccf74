// Test fixture for schema migrations: a fresh directory per test with path_ (<dir>/c.db), and
// a database built exactly as a binary of an older schema version left it (the migrations up
// to that version, then the version pragma), to which the test adds its rows.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>

#include "storage/record_db.h"
#include "storage/schema.h"

namespace collatz {

class OldSchemaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() / (std::string(info->test_suite_name()) + "_" +
                                                     std::to_string(::getpid()) + "_" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "c.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Creates path_ at schema `version` and runs `rows_sql` on it.
  void MakeDatabaseAtVersion(int version, const std::string& rows_sql) {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
    for (const SchemaMigration& m : SchemaMigrations()) {
      if (m.to_version > version) break;
      ASSERT_EQ(sqlite3_exec(raw, m.sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(raw);
    }
    const std::string sql = "PRAGMA application_id = " + std::to_string(kRecordDbApplicationId) +
                            "; PRAGMA user_version = " + std::to_string(version) + ";" + rows_sql;
    ASSERT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(raw);
    sqlite3_close(raw);
  }

  // The first column of the first row of `sql` as text ("" for none or NULL), read on a
  // connection of its own.
  std::string Value(const std::string& sql) {
    std::string out;
    bool first = true;
    ForEachRow(sql, [&](sqlite3_stmt* q) {
      if (first && sqlite3_column_text(q, 0) != nullptr) out = reinterpret_cast<const char*>(sqlite3_column_text(q, 0));
      first = false;
    });
    return out;
  }
  // Every row of `sql`: its columns joined by '|', each row ended by '\n' (NULL as "").
  std::string Rows(const std::string& sql) {
    std::string out;
    ForEachRow(sql, [&](sqlite3_stmt* q) {
      for (int c = 0; c < sqlite3_column_count(q); ++c) {
        const unsigned char* text = sqlite3_column_text(q, c);
        out += (c ? "|" : "") + std::string(text != nullptr ? reinterpret_cast<const char*>(text) : "");
      }
      out += "\n";
    });
    return out;
  }

  std::filesystem::path dir_;
  std::string path_;

 private:
  void ForEachRow(const std::string& sql, const std::function<void(sqlite3_stmt*)>& row) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* q = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &q, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    while (q != nullptr && sqlite3_step(q) == SQLITE_ROW) row(q);
    sqlite3_finalize(q);
    sqlite3_close(db);
  }
};

}  // namespace collatz
