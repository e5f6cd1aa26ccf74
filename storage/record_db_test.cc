#include "storage/record_db.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "storage/schema.h"

namespace collatz {
namespace {

namespace fs = std::filesystem;

class RecordDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("record_db_test." + std::to_string(::getpid()) + "." +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "records.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The rows of a query on a read-only connection, "a|b\n" each ("FAILED: ..." if it fails).
  std::string Rows(const std::string& sql) const {
    sqlite3* raw = nullptr;
    if (sqlite3_open_v2(path_.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
      sqlite3_close(raw);
      return "FAILED: open";
    }
    std::string got;
    auto collect = [](void* out, int cols, char** vals, char**) {
      auto* s = static_cast<std::string*>(out);
      for (int i = 0; i < cols; ++i) *s += std::string(vals[i] ? vals[i] : "NULL") + (i + 1 < cols ? "|" : "\n");
      return 0;
    };
    const int rc = sqlite3_exec(raw, sql.c_str(), collect, &got, nullptr);
    sqlite3_close(raw);
    return rc == SQLITE_OK ? got : "FAILED: " + sql;
  }

  static std::string ReadFile(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  static FinishedUnit MakeUnit(u128 begin, u128 end, int ladder_entries) {
    FinishedUnit u;
    u.begin = begin;
    u.end = end;
    u.kinds = Kinds::kDelayAndClass;
    for (int i = 0; i < ladder_entries; ++i) u.result.ladder.push_back({begin + 2 * i + 1, 100u + i});
    u.result.class_minima = {{begin + 3, 7}, {begin + 5, 9}};
    u.result.candidates = 12345;
    u.result.tally_count = 999;
    u.result.tally_sum = ~uint64_t{0} - 5;  // needs all 64 bits
    u.result.work_hash = 0xfedcba9876543210ULL;
    return u;
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(RecordDbTest, CreatesSchemaInWalMode) {
  std::unique_ptr<RecordDb> db;
  ASSERT_TRUE(RecordDb::Open(path_, RecordDb::OpenMode::kCreateIfMissing, &db).ok());
  int version = 0;
  ASSERT_TRUE(db->SchemaVersion(&version).ok());
  EXPECT_EQ(version, LatestSchemaVersion());
  EXPECT_TRUE(fs::exists(path_ + "-wal"));
}

TEST_F(RecordDbTest, ExistingOnlyDoesNotCreate) {
  std::unique_ptr<RecordDb> db;
  Status st = RecordDb::Open(path_, RecordDb::OpenMode::kExistingOnly, &db);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_FALSE(fs::exists(path_));
}

TEST_F(RecordDbTest, UnitsRoundTripLosslessly) {
  const u128 big = kU128Max - 1000;
  std::vector<FinishedUnit> stored = {MakeUnit(1, 1 << 20, 5), MakeUnit(big, big + 500, 3),
                                      MakeUnit(Pow2(64) - 3, Pow2(64) + 7, 0)};
  {
    std::unique_ptr<RecordDb> db;
    ASSERT_TRUE(RecordDb::Open(path_, RecordDb::OpenMode::kCreateIfMissing, &db).ok());
    for (const FinishedUnit& u : stored) {
      UnitProvenance prov{42, 3, "cpu (2 threads)", 1.5};
      ASSERT_TRUE(db->StoreFinishedUnit(u, prov).ok());
    }
  }
  std::unique_ptr<RecordDb> db;
  ASSERT_TRUE(RecordDb::Open(path_, RecordDb::OpenMode::kExistingOnly, &db).ok());
  std::vector<FinishedUnit> loaded;
  ASSERT_TRUE(db->LoadFinishedUnits(&loaded).ok());
  ASSERT_EQ(loaded.size(), 3u);
  // Ascending by begin: 1, 2^64 - 3, big.
  const FinishedUnit* expect[] = {&stored[0], &stored[2], &stored[1]};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(loaded[i].begin == expect[i]->begin);
    EXPECT_TRUE(loaded[i].end == expect[i]->end);
    EXPECT_EQ(loaded[i].kinds, expect[i]->kinds);
    EXPECT_TRUE(loaded[i].result == expect[i]->result) << DescribeUnitResult(loaded[i].result);
  }
}

TEST_F(RecordDbTest, FailedStoreLeavesNothing) {
  std::unique_ptr<RecordDb> db;
  ASSERT_TRUE(RecordDb::Open(path_, RecordDb::OpenMode::kCreateIfMissing, &db).ok());
  FinishedUnit u = MakeUnit(100, 200, 3);
  u.result.ladder.push_back(u.result.ladder.front());  // duplicate key: the insert fails midway
  EXPECT_FALSE(db->StoreFinishedUnit(u, {}).ok());
  std::vector<FinishedUnit> loaded;
  ASSERT_TRUE(db->LoadFinishedUnits(&loaded).ok());
  EXPECT_TRUE(loaded.empty());
  // The connection is still usable afterwards.
  ASSERT_TRUE(db->StoreFinishedUnit(MakeUnit(100, 200, 3), {}).ok());
  ASSERT_TRUE(db->LoadFinishedUnits(&loaded).ok());
  EXPECT_EQ(loaded.size(), 1u);
}

TEST_F(RecordDbTest, ImportsAndMergedRecordsRoundTrip) {
  std::unique_ptr<RecordDb> db;
  ASSERT_TRUE(RecordDb::Open(path_, RecordDb::OpenMode::kCreateIfMissing, &db).ok());
  TrustedImport imp;
  imp.complete_below = Pow2(70) + 1;
  imp.delay_records = {{1, 0}, {2, 1}, {3, 7}, {Pow2(69) + 11, 2000}};
  imp.class_records = {{1, 0}, {2, 1}, {4, 2}};
  MergedRecords merged;
  merged.covered_prefix = Pow2(70) + 1;
  merged.class_covered_prefix = 5;
  merged.delay_final = imp.delay_records;
  merged.delay_candidates = {{Pow2(71), 3000}};
  merged.class_final = imp.class_records;
  merged.class_candidates = {{Pow2(72), 4000}, {Pow2(73), 3999}};
  ASSERT_TRUE(db->StoreImport(imp, "test", &merged).ok());
  // Reopening runs PRAGMA quick_check over everything just written.
  db.reset();
  ASSERT_TRUE(RecordDb::Open(path_, RecordDb::OpenMode::kExistingOnly, &db).ok());

  std::vector<TrustedImport> imports;
  ASSERT_TRUE(db->LoadImports(&imports).ok());
  ASSERT_EQ(imports.size(), 1u);
  EXPECT_TRUE(imports[0].complete_below == imp.complete_below);
  EXPECT_EQ(imports[0].delay_records, imp.delay_records);
  EXPECT_EQ(imports[0].class_records, imp.class_records);

  MergedRecords back;
  bool present = false;
  ASSERT_TRUE(db->LoadMergedRecords(&back, &present).ok());
  ASSERT_TRUE(present);
  EXPECT_TRUE(back.covered_prefix == merged.covered_prefix);
  EXPECT_TRUE(back.class_covered_prefix == merged.class_covered_prefix);
  EXPECT_EQ(back.delay_final, merged.delay_final);
  EXPECT_EQ(back.delay_candidates, merged.delay_candidates);
  EXPECT_EQ(back.class_final, merged.class_final);
  // Class candidates come back ascending by delay.
  std::vector<Record> by_delay = {{Pow2(73), 3999}, {Pow2(72), 4000}};
  EXPECT_EQ(back.class_candidates, by_delay);

  std::vector<Record> final_delay;
  u128 prefix = 0;
  ASSERT_TRUE(db->QueryFinalRecords(RecordKind::kDelay, &final_delay, &prefix).ok());
  EXPECT_EQ(final_delay, merged.delay_final);
  EXPECT_TRUE(prefix == merged.covered_prefix);
  std::vector<Record> final_class;
  ASSERT_TRUE(db->QueryFinalRecords(RecordKind::kClass, &final_class, &prefix).ok());
  EXPECT_EQ(final_class, merged.class_final);
  EXPECT_TRUE(prefix == 5);
}

TEST_F(RecordDbTest, DecimalViewsForPeople) {
  {
    std::unique_ptr<RecordDb> db;
    ASSERT_TRUE(RecordDb::Open(path_, RecordDb::OpenMode::kCreateIfMissing, &db).ok());
    MergedRecords merged;
    merged.covered_prefix = 1000;
    merged.delay_final = {{27, 111}, {3, 7}};
    ASSERT_TRUE(db->StoreMergedRecords(merged).ok());
  }
  EXPECT_EQ(Rows("SELECT n, delay FROM v_delay_records") + Rows("SELECT covered_prefix FROM v_coverage"),
            "3|7\n27|111\n1000\n");
}

TEST_F(RecordDbTest, KnownPointsRoundTripAndKeepTheirFirstImport) {
  const u128 big = (u128{1} << 127) + 5;
  {
    std::unique_ptr<RecordDb> db;
    ASSERT_TRUE(RecordDb::Open(path_, RecordDb::OpenMode::kCreateIfMissing, &db).ok());
    size_t added = 99;
    ASSERT_TRUE(db->StoreKnownPoints({{97, 118}, {big, 1234}, {27, 111}}, "list A", &added).ok());
    EXPECT_EQ(added, 3u);
    ASSERT_TRUE(db->StoreKnownPoints({{27, 111}, {31, 106}}, "list B", &added).ok());
    EXPECT_EQ(added, 1u);  // 27 was known
    std::vector<Record> points;
    ASSERT_TRUE(db->LoadKnownPoints(&points).ok());
    EXPECT_EQ(points, (std::vector<Record>{{27, 111}, {31, 106}, {97, 118}, {big, 1234}}));
  }
  EXPECT_EQ(Rows("SELECT n, delay, source FROM v_known_points"), "27|111|list A\n31|106|list B\n97|118|list A\n" + ToDecimal(big) + "|1234|list A\n");
}

TEST_F(RecordDbTest, TruncatedFileIsCorruption) {
  {
    std::unique_ptr<RecordDb> db;
    ASSERT_TRUE(RecordDb::Open(path_, RecordDb::OpenMode::kCreateIfMissing, &db).ok());
    for (int i = 0; i < 40; ++i) {
      ASSERT_TRUE(db->StoreFinishedUnit(MakeUnit(Pow2(40) * (i + 1), Pow2(40) * (i + 2), 200), {}).ok());
    }
  }  // closing the last connection checkpoints the WAL into the main file
  ASSERT_FALSE(fs::exists(path_ + "-wal"));
  const auto size = fs::file_size(path_);
  ASSERT_GT(size, 64u * 1024);
  fs::resize_file(path_, size / 2);
  const std::string before = ReadFile(path_);

  std::unique_ptr<RecordDb> db;
  Status st = RecordDb::Open(path_, RecordDb::OpenMode::kCreateIfMissing, &db);
  EXPECT_EQ(st.code(), Status::Code::kCorruption) << st.ToString();
  EXPECT_NE(st.message().find("damaged"), std::string::npos) << st.ToString();
  EXPECT_EQ(db, nullptr);
  EXPECT_EQ(ReadFile(path_), before);
}

TEST_F(RecordDbTest, GarbageFileIsCorruption) {
  { std::ofstream(path_, std::ios::binary) << std::string(8192, 'x'); }
  const std::string before = ReadFile(path_);
  std::unique_ptr<RecordDb> db;
  Status st = RecordDb::Open(path_, RecordDb::OpenMode::kCreateIfMissing, &db);
  EXPECT_EQ(st.code(), Status::Code::kCorruption) << st.ToString();
  EXPECT_EQ(ReadFile(path_), before);
  EXPECT_FALSE(fs::exists(path_ + "-wal"));
}

TEST_F(RecordDbTest, ForeignSqliteFileIsRefused) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE t (x); INSERT INTO t VALUES (1)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  std::unique_ptr<RecordDb> db;
  Status st = RecordDb::Open(path_, RecordDb::OpenMode::kCreateIfMissing, &db);
  EXPECT_EQ(st.code(), Status::Code::kFailedPrecondition) << st.ToString();
  EXPECT_NE(st.message().find("not a collatz record database"), std::string::npos);
}

TEST_F(RecordDbTest, NewerSchemaIsRefused) {
  {
    std::unique_ptr<RecordDb> db;
    ASSERT_TRUE(RecordDb::Open(path_, RecordDb::OpenMode::kCreateIfMissing, &db).ok());
  }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
  const std::string sql = "PRAGMA user_version = " + std::to_string(LatestSchemaVersion() + 1);
  ASSERT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  std::unique_ptr<RecordDb> db;
  Status st = RecordDb::Open(path_, RecordDb::OpenMode::kExistingOnly, &db);
  EXPECT_EQ(st.code(), Status::Code::kFailedPrecondition) << st.ToString();
  EXPECT_NE(st.message().find("newer"), std::string::npos);
}

TEST_F(RecordDbTest, EmptyFileBecomesNewDatabase) {
  { std::ofstream(path_, std::ios::binary); }
  std::unique_ptr<RecordDb> db;
  ASSERT_TRUE(RecordDb::Open(path_, RecordDb::OpenMode::kExistingOnly, &db).ok());
  int version = 0;
  ASSERT_TRUE(db->SchemaVersion(&version).ok());
  EXPECT_EQ(version, LatestSchemaVersion());
}

}  // namespace
}  // namespace collatz
