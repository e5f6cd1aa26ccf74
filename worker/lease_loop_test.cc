// RunUnit without processes or a server: the coordinator, the spool and the clock are fakes
// behind the lease loop's seams, and faults (a lying stats engine, a spool that fails, a
// lost lease, a server that stops the unit, a shutdown, a unit of another sieve width whose
// engine fails its self-test or cannot be built) come in through them.
#include "worker/lease_loop.h"

#include <gtest/gtest.h>

#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "core/cpu_engine.h"
#include "core/result_verifier.h"
#include "core/stats_file.h"
#include "proto/wire.h"
#include "worker/test_faults.h"

namespace collatz::worker {
namespace {

using namespace std::chrono_literals;

class ManualClock final : public Clock {
 public:
  int64_t NowMs() const override { return now_.load(); }
  void Advance(int64_t ms) { now_ += ms; }

 private:
  std::atomic<int64_t> now_{1000000};
};

class FakeConnection final : public client::WorkerConnection {
 public:
  uint64_t worker_id() const override { return 5; }
  uint64_t lease_duration_ms() const override { return 4000; }
  grpc::Status RegisterAgainIfStill(uint64_t) override { return grpc::Status::OK; }
  grpc::Status LeaseUnit(client::Lease* out, bool* has_unit, uint64_t* retry_after_ms) override {
    std::lock_guard<std::mutex> lock(mu);
    ++leases_asked;
    *has_unit = !to_lease.empty();
    *retry_after_ms = 1000;
    if (*has_unit) {
      *out = to_lease.front();
      to_lease.erase(to_lease.begin());
    }
    return grpc::Status::OK;
  }
  grpc::Status Heartbeat(const client::Lease& lease, uint64_t numbers_done, bool* stop) override {
    std::lock_guard<std::mutex> lock(mu);
    heartbeats.emplace_back(lease.unit_id, numbers_done);
    *stop = heartbeat_stops;
    return heartbeat_status;
  }
  grpc::Status Complete(const v1::CompleteRequest& request, v1::Disposition* disposition) override {
    std::lock_guard<std::mutex> lock(mu);
    completed.push_back(request);
    if (disposition != nullptr) *disposition = v1::DISPOSITION_ACCEPTED;
    return grpc::Status::OK;
  }
  grpc::Status Release(const client::Lease& lease, bool failed, const std::string& reason, int) override {
    std::lock_guard<std::mutex> lock(mu);
    released.push_back({lease.unit_id, failed, reason});
    return grpc::Status::OK;
  }
  size_t heartbeat_count() {
    std::lock_guard<std::mutex> lock(mu);
    return heartbeats.size();
  }

  struct Released {
    uint64_t unit_id;
    bool failed;
    std::string reason;
  };
  std::mutex mu;
  std::vector<client::Lease> to_lease;
  int leases_asked = 0;
  std::vector<std::pair<uint64_t, uint64_t>> heartbeats;
  bool heartbeat_stops = false;
  grpc::Status heartbeat_status = grpc::Status::OK;
  std::vector<v1::CompleteRequest> completed;
  std::vector<Released> released;
};

class FakeSpool final : public SpoolWriter {
 public:
  Status Write(const v1::CompleteRequest& request, std::string* name) override {
    if (!fail.ok()) return fail;
    written.push_back(request);
    *name = "u" + std::to_string(request.unit_id());
    return Status::Ok();
  }
  Status fail = Status::Ok();
  std::vector<v1::CompleteRequest> written;
};

// An engine whose search is a function of the test: it may move the clock, report
// progress, wait for the cancel flag or fail.
class ScriptedEngine final : public SearchEngine {
 public:
  using Script = std::function<Status(const UnitSpec&, UnitResult*, const ProgressFn&, const std::atomic<bool>*)>;
  explicit ScriptedEngine(Script script) : script_(std::move(script)) {}
  Status Search(const UnitSpec& spec, UnitResult* result, const ProgressFn& progress,
                const std::atomic<bool>* cancel) override {
    return script_(spec, result, progress, cancel);
  }
  std::string Describe() const override { return "scripted"; }

 private:
  Script script_;
};

// Reports `done`, then moves the clock on until the loop cancels the search (real time,
// bounded: a search that is never cancelled fails the test).
Status WaitForCancel(ManualClock* clock, const ProgressFn& progress, const std::atomic<bool>* cancel, uint64_t done) {
  progress(done, 0);
  for (int i = 0; i < 5000 && !cancel->load(); ++i) {
    clock->Advance(100);
    std::this_thread::sleep_for(1ms);
  }
  return cancel->load() ? Status::Unavailable("cancelled") : Status::Internal("never cancelled");
}

client::Lease SearchLease(uint64_t unit_id, u128 begin, u128 end) {
  client::Lease lease;
  lease.worker_id = 5;
  lease.unit_id = unit_id;
  lease.token = "token-" + std::to_string(unit_id);
  lease.spec.begin = begin;
  lease.spec.end = end;
  return lease;
}

class RunUnitTest : public ::testing::Test {
 protected:
  // `engine` searches units of the startup width (10 bits, or those that name none); other
  // widths are built with `build` and checked with `self_test` (none given: no other width
  // can be built; every self-test passes).
  std::unique_ptr<LeaseLoop> Loop(SearchEngine* engine, StatsEngine* stats = nullptr, UnitEngines::Build build = nullptr,
                                  UnitEngines::SelfTest self_test = nullptr) {
    if (!build) {
      build = [](int, std::unique_ptr<SearchEngine>*, std::shared_ptr<const SearchTables>*) {
        return Status::FailedPrecondition("no other width in this test");
      };
    }
    if (!self_test) self_test = [](SearchEngine&, const SearchTables&, std::string*) { return Status::Ok(); };
    engines_ = std::make_unique<UnitEngines>("test", kStartupBits, engine, build, self_test);
    LeaseLoopOptions o;
    o.device = "test";
    o.heartbeat_interval = 1000ms;
    o.poll_interval = 1ms;
    return std::make_unique<LeaseLoop>(engines_.get(), stats, &connection_, &spool_, nullptr, &metrics_, &shutdown_, o,
                                       &clock_);
  }

  static constexpr int kStartupBits = 10;
  std::unique_ptr<UnitEngines> engines_;
  ManualClock clock_;
  FakeConnection connection_;
  FakeSpool spool_;
  WorkerMetrics metrics_;
  ShutdownState shutdown_;
};

TEST_F(RunUnitTest, SpoolsTheEnginesResultWithTheLeasesIdsAndTheClocksDuration) {
  std::shared_ptr<const SearchTables> tables;
  ASSERT_TRUE(SearchTables::Build(10, 12, 16, &tables).ok());
  CpuEngine cpu(tables, CpuEngineOptions{});
  const client::Lease lease = SearchLease(42, 1, 1 << 16);
  UnitResult expected;
  ASSERT_TRUE(cpu.Search(lease.spec, &expected).ok());
  ScriptedEngine engine([&](const UnitSpec& spec, UnitResult* result, const ProgressFn& progress,
                            const std::atomic<bool>* cancel) {
    clock_.Advance(2500);
    return cpu.Search(spec, result, progress, cancel);
  });
  Loop(&engine)->RunUnit(lease);

  ASSERT_EQ(spool_.written.size(), 1u);
  const v1::CompleteRequest& r = spool_.written[0];
  EXPECT_EQ(r.worker_id(), 5u);
  EXPECT_EQ(r.unit_id(), 42u);
  EXPECT_EQ(r.lease_token(), "token-42");
  EXPECT_EQ(r.engine(), "scripted");
  EXPECT_DOUBLE_EQ(r.seconds(), 2.5);
  const UnitResult sent = wire::ResultFromWire(r.result());
  EXPECT_EQ(sent.ladder, expected.ladder);
  EXPECT_EQ(sent.class_minima, expected.class_minima);
  EXPECT_EQ(sent.candidates, expected.candidates);
  EXPECT_TRUE(connection_.released.empty());
  EXPECT_TRUE(connection_.completed.empty());  // the sender sends spooled results
}

TEST_F(RunUnitTest, HeartbeatsFollowTheClockAndPrefetchAfterTheFraction) {
  connection_.to_lease.push_back(SearchLease(8, 1000, 2000));
  ScriptedEngine engine([&](const UnitSpec&, UnitResult*, const ProgressFn& progress, const std::atomic<bool>*) {
    progress(600, 1000);  // past the prefetch fraction (0.5)
    // The prefetch shows that the monitor runs (and has read the clock for its schedule).
    for (int i = 0; i < 5000; ++i) {
      {
        std::lock_guard<std::mutex> lock(connection_.mu);
        if (connection_.leases_asked > 0) break;
      }
      std::this_thread::sleep_for(1ms);
    }
    for (int beat = 1; beat <= 3; ++beat) {
      clock_.Advance(1000);
      for (int i = 0; i < 5000 && connection_.heartbeat_count() < static_cast<size_t>(2 * beat); ++i) {
        std::this_thread::sleep_for(1ms);
      }
    }
    return Status::Ok();
  });
  Loop(&engine)->RunUnit(SearchLease(7, 0, 1000));
  std::lock_guard<std::mutex> lock(connection_.mu);
  EXPECT_GE(connection_.leases_asked, 1);  // the prefetch
  ASSERT_GE(connection_.heartbeats.size(), 6u);
  // Each beat covers the running unit (with its progress) and the prefetched one (0 done).
  EXPECT_EQ(connection_.heartbeats[0], std::make_pair(uint64_t{7}, uint64_t{600}));
  EXPECT_EQ(connection_.heartbeats[1], std::make_pair(uint64_t{8}, uint64_t{0}));
  EXPECT_EQ(spool_.written.size(), 1u);
}

TEST_F(RunUnitTest, AServerStopOrALostLeaseCancelsWithoutSpoolingOrReleasing) {
  for (bool lost : {false, true}) {
    FakeConnection& c = connection_;
    c.heartbeat_stops = !lost;
    c.heartbeat_status = lost ? grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "stale lease") : grpc::Status::OK;
    ScriptedEngine engine([&](const UnitSpec&, UnitResult*, const ProgressFn& progress,
                              const std::atomic<bool>* cancel) {
      return WaitForCancel(&clock_, progress, cancel, 10);
    });
    Loop(&engine)->RunUnit(SearchLease(9, 0, 1000));
    EXPECT_TRUE(spool_.written.empty()) << lost;
    EXPECT_TRUE(c.released.empty()) << lost;  // the server already knows
  }
}

TEST_F(RunUnitTest, AGracePeriodRunningOutReleasesTheUnit) {
  ScriptedEngine engine([&](const UnitSpec&, UnitResult*, const ProgressFn& progress, const std::atomic<bool>* cancel) {
    shutdown_.grace_deadline_ms = clock_.NowMs() + 500;
    shutdown_.stop_taking_work = true;
    return WaitForCancel(&clock_, progress, cancel, 10);
  });
  Loop(&engine)->RunUnit(SearchLease(11, 0, 1000));
  EXPECT_TRUE(spool_.written.empty());
  ASSERT_EQ(connection_.released.size(), 1u);
  EXPECT_EQ(connection_.released[0].unit_id, 11u);
  EXPECT_FALSE(connection_.released[0].failed);
}

TEST_F(RunUnitTest, AFailingEngineReleasesTheUnitAsFailed) {
  ScriptedEngine engine([](const UnitSpec&, UnitResult*, const ProgressFn&, const std::atomic<bool>*) {
    return Status::Internal("device fell off the bus");
  });
  Loop(&engine)->RunUnit(SearchLease(12, 0, 1000));
  EXPECT_TRUE(spool_.written.empty());
  ASSERT_EQ(connection_.released.size(), 1u);
  EXPECT_TRUE(connection_.released[0].failed);
  EXPECT_NE(connection_.released[0].reason.find("device fell off the bus"), std::string::npos);
}

TEST_F(RunUnitTest, AnUnwritableSpoolSendsTheResultDirectly) {
  spool_.fail = Status::IOError("disk full");
  ScriptedEngine engine([](const UnitSpec&, UnitResult*, const ProgressFn&, const std::atomic<bool>*) {
    return Status::Ok();
  });
  Loop(&engine)->RunUnit(SearchLease(13, 0, 1000));
  ASSERT_EQ(connection_.completed.size(), 1u);
  EXPECT_EQ(connection_.completed[0].unit_id(), 13u);
  EXPECT_EQ(connection_.completed[0].lease_token(), "token-13");
}

// The fault the stats end-to-end test injects (collatz-worker-test --test-lie-stats), here
// through the stats engine seam: the spooled file decodes, with the last batch's sum one off.
TEST_F(RunUnitTest, ALyingStatsEngineSpoolsAWrongLastSum) {
  std::shared_ptr<const SearchTables> tables;
  ASSERT_TRUE(SearchTables::Build(10, 12, 16, &tables).ok());
  client::Lease lease;
  lease.worker_id = 5;
  lease.unit_id = 14;
  lease.token = "t";
  lease.stats = true;
  lease.stats_batch = 256;
  lease.spec.begin = 1 << 12;
  lease.spec.end = 1 << 13;
  std::vector<BatchStats> honest;
  {
    std::unique_ptr<StatsEngine> cpu = MakeCpuStatsEngine(tables->delay, 1);
    std::atomic<uint64_t> done{0};
    ASSERT_TRUE(cpu->Compute(lease.spec.begin, lease.spec.end, 256, &honest, &done, nullptr).ok());
  }
  std::unique_ptr<StatsEngine> liar = MakeLyingStatsEngine(MakeCpuStatsEngine(tables->delay, 1));
  ScriptedEngine unused([](const UnitSpec&, UnitResult*, const ProgressFn&, const std::atomic<bool>*) {
    return Status::Internal("not a search unit");
  });
  Loop(&unused, liar.get())->RunUnit(lease);
  ASSERT_EQ(spool_.written.size(), 1u);
  StatsFile file;
  ASSERT_TRUE(DecodeStatsFile(spool_.written[0].stats_result().stats_file(), "spooled", &file).ok());
  ASSERT_EQ(file.batches.size(), honest.size());
  for (size_t i = 0; i + 1 < honest.size(); ++i) EXPECT_EQ(file.batches[i], honest[i]);
  EXPECT_EQ(file.batches.back().sum, honest.back().sum + 1);
}

// A lease names a sieve width other than the startup one: the unit is searched with an engine
// of that width, built (and self-tested) on the first such unit and reused, the build not
// counted in the unit's seconds; the spooled result is the one the server verifies with that
// width. Units that name the startup width,
// or none (older servers), keep the startup engine.
TEST_F(RunUnitTest, AUnitOfAnotherWidthIsSearchedWithAnEngineOfThatWidth) {
  std::shared_ptr<const SearchTables> startup_tables;
  ASSERT_TRUE(SearchTables::Build(kStartupBits, 12, 16, &startup_tables).ok());
  CpuEngine startup(startup_tables, CpuEngineOptions{});
  int builds = 0, self_tests = 0;
  std::shared_ptr<const SearchTables> built;
  auto build = [&](int bits, std::unique_ptr<SearchEngine>* engine, std::shared_ptr<const SearchTables>* t) {
    ++builds;
    clock_.Advance(5000);  // building takes time, which is not the unit's
    std::shared_ptr<const Sieve> sieve;
    Status st = Sieve::Generate(bits, &sieve);
    if (st.ok()) st = SearchTables::FromSieve(sieve, startup_tables->delay, t);
    if (st.ok()) engine->reset(new CpuEngine(*t, CpuEngineOptions{}));
    built = *t;
    return st;
  };
  auto self_test = [&](SearchEngine&, const SearchTables& t, std::string* summary) {
    ++self_tests;
    EXPECT_EQ(t.sieve->bits(), 12);
    *summary = "ok";
    return Status::Ok();
  };
  auto loop = Loop(&startup, nullptr, build, self_test);
  client::Lease wide = SearchLease(21, Pow2(16), Pow2(16) + Pow2(14));
  wide.sieve_bits = 12;
  loop->RunUnit(wide);
  wide.unit_id = 22;
  loop->RunUnit(wide);
  client::Lease narrow = SearchLease(23, Pow2(16), Pow2(16) + Pow2(14));
  narrow.sieve_bits = kStartupBits;
  loop->RunUnit(narrow);
  client::Lease unnamed = SearchLease(24, Pow2(16), Pow2(16) + Pow2(14));  // sieve_bits 0: an older server
  loop->RunUnit(unnamed);

  EXPECT_EQ(builds, 1);
  EXPECT_EQ(self_tests, 1);
  EXPECT_TRUE(connection_.released.empty());
  ASSERT_EQ(spool_.written.size(), 4u);
  ASSERT_NE(built, nullptr);
  for (size_t i = 0; i < 4; ++i) {
    const UnitResult r = wire::ResultFromWire(spool_.written[i].result());
    const SearchTables& t = i < 2 ? *built : *startup_tables;
    EXPECT_TRUE(VerifyUnitResult(t, wide.spec, r).ok()) << i;
    EXPECT_NE(spool_.written[i].engine().find(i < 2 ? "12-bit" : "10-bit"), std::string::npos)
        << spool_.written[i].engine();
  }
  EXPECT_DOUBLE_EQ(spool_.written[0].seconds(), 0.0);
  EXPECT_NE(wire::ResultFromWire(spool_.written[0].result()).candidates,
            wire::ResultFromWire(spool_.written[2].result()).candidates);
}

// The engine of a new width fails its self-test: the unit is released as failed with the
// reason, never searched with another width, and that width is refused from then on without
// building again; units of the startup width go on.
TEST_F(RunUnitTest, AWidthWhoseEngineFailsItsSelfTestIsRefusedFromThenOn) {
  int builds = 0, searches = 0;
  ScriptedEngine startup([&](const UnitSpec&, UnitResult*, const ProgressFn&, const std::atomic<bool>*) {
    ++searches;
    return Status::Ok();
  });
  std::shared_ptr<const SearchTables> tables;
  ASSERT_TRUE(SearchTables::Build(12, 12, 16, &tables).ok());
  auto build = [&](int, std::unique_ptr<SearchEngine>* engine, std::shared_ptr<const SearchTables>* t) {
    ++builds;
    *t = tables;
    engine->reset(new ScriptedEngine([](const UnitSpec&, UnitResult*, const ProgressFn&, const std::atomic<bool>*) {
      ADD_FAILURE() << "an engine that failed its self-test searched a unit";
      return Status::Ok();
    }));
    return Status::Ok();
  };
  auto self_test = [](SearchEngine&, const SearchTables&, std::string*) {
    return Status::Internal("self-test [1, 2^20): engine returned ...");
  };
  auto loop = Loop(&startup, nullptr, build, self_test);
  client::Lease wide = SearchLease(31, 0, 1000);
  wide.sieve_bits = 12;
  loop->RunUnit(wide);
  wide.unit_id = 32;
  loop->RunUnit(wide);
  loop->RunUnit(SearchLease(33, 0, 1000));

  EXPECT_EQ(builds, 1);
  EXPECT_EQ(searches, 1);
  ASSERT_EQ(spool_.written.size(), 1u);
  EXPECT_EQ(spool_.written[0].unit_id(), 33u);
  ASSERT_EQ(connection_.released.size(), 2u);
  for (const auto& r : connection_.released) {
    EXPECT_TRUE(r.failed);
    EXPECT_NE(r.reason.find("12-bit sieve"), std::string::npos) << r.reason;
    EXPECT_NE(r.reason.find("self-test FAILED"), std::string::npos) << r.reason;
  }
}

// A width no worker builds (the server is newer, or wrong): released as failed, nothing built.
TEST_F(RunUnitTest, AWidthTheWorkerCannotBuildIsReleasedAsFailed) {
  ScriptedEngine startup([](const UnitSpec&, UnitResult*, const ProgressFn&, const std::atomic<bool>*) {
    ADD_FAILURE() << "searched with the startup width";
    return Status::Ok();
  });
  int builds = 0;
  auto build = [&](int, std::unique_ptr<SearchEngine>*, std::shared_ptr<const SearchTables>*) {
    ++builds;
    return Status::Internal("not here");
  };
  auto loop = Loop(&startup, nullptr, build);
  for (int bits : {31, 64, -3}) {
    client::Lease lease = SearchLease(40, 0, 1000);
    lease.sieve_bits = bits;
    loop->RunUnit(lease);
  }
  EXPECT_EQ(builds, 0);
  EXPECT_TRUE(spool_.written.empty());
  ASSERT_EQ(connection_.released.size(), 3u);
  for (const auto& r : connection_.released) {
    EXPECT_TRUE(r.failed);
    EXPECT_NE(r.reason.find("1 to 30 bits"), std::string::npos) << r.reason;
  }
}

}  // namespace
}  // namespace collatz::worker
