// Test fixture for schema migrations: a fresh directory per test with path_ (<dir>/c.db), and
// a database built exactly as a binary of an older schema version left it (the migrations up
// to that version, then the version pragma), to which the test adds its rows.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
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

  std::filesystem::path dir_;
  std::string path_;
};

}  // namespace collatz
