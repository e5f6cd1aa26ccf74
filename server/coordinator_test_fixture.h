// The fixture the coordinator's tests share (server/coordinator_test.cc and
// server/stats_coordinator_test.cc, server/unit_width_test.cc): a coordinator on a fresh
// database in a temp directory, a fake clock, small search tables (12 bits; other widths
// generated on demand, sharing their step and tail tables), an integrity check at the end.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/cpu_engine.h"
#include "server/clock.h"
#include "server/coordinator.h"

namespace collatz::server {

class CoordinatorFixture : public ::testing::Test {
 protected:
  // dir_prefix names the test's temp directory (with the pid and the test's name).
  explicit CoordinatorFixture(std::string dir_prefix) : dir_prefix_(std::move(dir_prefix)) {}

  static void SetUpTestSuite() { ASSERT_TRUE(SearchTables::Build(12, 12, 16, &tables_).ok()); }

  void SetUp() override {
    // Parameterized tests are named "Name/0": flattened, so that TearDown removes it all.
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    dir_ = std::filesystem::temp_directory_path() / (dir_prefix_ + std::to_string(::getpid()) + "_" + name);
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    db_ = (dir_ / "c.db").string();
    options_.lease_duration_ms = 60'000;
    options_.max_failures = 3;
    options_.build_tables = [](int bits, std::shared_ptr<const SearchTables>* out) {
      *out = TablesOfWidth(bits);
      return *out != nullptr ? Status::Ok() : Status::InvalidArgument("no sieve of " + std::to_string(bits) + " bits");
    };
    Reopen();
  }
  void TearDown() override {
    if (c_) {
      std::string ic;
      ASSERT_TRUE(c_->IntegrityCheck(&ic).ok());
      EXPECT_EQ(ic, "ok");
    }
    c_.reset();
    std::filesystem::remove_all(dir_);
  }

  void Reopen() {
    c_.reset();
    std::unique_ptr<CoordinatorStore> store;
    ASSERT_TRUE(CoordinatorStore::Open(db_, &store).ok());
    ASSERT_TRUE(Coordinator::Open(std::move(store), tables_, &clock_, options_, &c_).ok());
  }

  // The tables of a sieve width: the fixture's (12 bits) or generated, sharing their delay
  // tables; null for a width that cannot be generated.
  static std::shared_ptr<const SearchTables> TablesOfWidth(int bits) {
    static std::map<int, std::shared_ptr<const SearchTables>> built;
    if (bits == tables_->sieve->bits()) return tables_;
    auto it = built.find(bits);
    if (it == built.end()) {
      std::shared_ptr<const Sieve> sieve;
      std::shared_ptr<const SearchTables> t;
      if (!Sieve::Generate(bits, &sieve).ok() || !SearchTables::FromSieve(sieve, tables_->delay, &t).ok()) return nullptr;
      it = built.emplace(bits, t).first;
    }
    return it->second;
  }

  // An honest result: the unit searched with the CPU engine, with the sieve of `bits` (0:
  // the fixture's 12 bits).
  UnitResult Search(const UnitSpec& spec, int bits = 0) {
    CpuEngineOptions eo;
    eo.threads = 1;
    CpuEngine engine(bits == 0 ? tables_ : TablesOfWidth(bits), eo);
    UnitResult r;
    EXPECT_TRUE(engine.Search(spec, &r).ok());
    return r;
  }

  // A worker on a host of its own (flags stay with GPUs, installations or hosts), unless
  // `host` is given; it honours each unit's sieve width unless `unit_sieve_bits` is false
  // (an older binary).
  int64_t NewWorker(const std::string& host = "",
                    const std::vector<std::pair<std::string, std::string>>& gpus = {},
                    const std::string& instance_id = "", bool unit_sieve_bits = true) {
    WorkerDescription d;
    d.host = host.empty() ? "w" + std::to_string(++hosts_) : host;
    d.gpus = gpus;
    d.instance_id = instance_id;
    d.sieve_bits = 12;
    d.work_hash_version = kWorkHashVersion;
    d.unit_sieve_bits = unit_sieve_bits;
    int64_t id = 0;
    EXPECT_TRUE(c_->Register(d, &id).ok());
    return id;
  }

  inline static std::shared_ptr<const SearchTables> tables_;
  const std::string dir_prefix_;
  std::filesystem::path dir_;
  std::string db_;
  FakeClock clock_;
  CoordinatorOptions options_;
  std::unique_ptr<Coordinator> c_;
  int hosts_ = 0;
};

}  // namespace collatz::server
