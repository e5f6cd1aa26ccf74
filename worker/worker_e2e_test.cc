// End to end: the real collatz-server and collatz-worker (CPU backend) on 127.0.0.1.
// Every search is compared with the exhaustive reference records in shared/data.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/records_csv.h"
#include "core/test_support.h"
#include "tests/support/http_get.h"
#include "worker/e2e_support.h"

namespace collatz::worker::e2e {
namespace {

using testing_support::HttpGet;

constexpr int kKilled = 128 + SIGKILL;

std::vector<std::string> WorkerArgs(const Server& server, const TempDir& dir, std::vector<std::string> extra = {},
                                    const std::string& threads = "1") {
  std::vector<std::string> args = {"--server",   server.address(), "--backend", "cpu", "--threads", threads,
                                   "--spool",    dir.File("spool"), "--heartbeat-seconds", "0.5",
                                   "--backoff-cap-seconds", "1"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

size_t SpooledResults(const TempDir& dir) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir.File("spool"), ec)) {
    n += e.path().extension() == ".result";
  }
  return n;
}

// The server's final records below min(P, 2^28) equal the exhaustive reference.
void ExpectRecordsEqualReference(Server& server, u128 expected_prefix) {
  u128 prefix = 0, class_prefix = 0;
  std::vector<Record> delay = server.FinalRecords(v1::RECORD_KIND_DELAY, &prefix);
  std::vector<Record> klass = server.FinalRecords(v1::RECORD_KIND_CLASS, &class_prefix);
  ASSERT_EQ(prefix, expected_prefix);
  ASSERT_EQ(class_prefix, expected_prefix);
  const u128 limit = std::min<u128>(prefix, Pow2(28));
  std::vector<Record> ref_delay, ref_class;
  ref_delay = testing_support::ReferenceRecords("delay_records_below_2p28.csv", RecordCsvKind::kDelay);
  ref_class = testing_support::ReferenceRecords("class_records_below_2p28.csv", RecordCsvKind::kClass);
  auto below = [&](std::vector<Record> v) {
    v.erase(std::remove_if(v.begin(), v.end(), [&](const Record& r) { return r.n >= limit; }), v.end());
    std::sort(v.begin(), v.end(), [](const Record& a, const Record& b) { return a.delay < b.delay; });
    return v;
  };
  const std::vector<Record> want_delay = below(ref_delay), got_delay = below(delay);
  const std::vector<Record> want_class = below(ref_class), got_class = below(klass);
  EXPECT_GT(want_delay.size(), 40u);
  EXPECT_EQ(got_delay, want_delay);
  EXPECT_GT(want_class.size(), 300u);
  EXPECT_EQ(got_class, want_class);
}

TEST(WorkerEndToEnd, SearchesARangeExactlyWithJsonLogsAndMetrics) {
  TempDir dir;
  Server server(dir.path(), 0, "server.log", {"--unit-size", "2^21"});
  ASSERT_TRUE(server.ok()) << server.child().output();
  // [1, 2^20), [2^20, 2^21), then 7 units of 2^21 (the coordinator cuts its first unit at
  // 2^20: server/submission_units.h).
  ASSERT_EQ(server.Submit(1, Pow2(24), Pow2(21)).units(), 9u);
  Child worker(COLLATZ_WORKER_BINARY,
               WorkerArgs(server, dir, {"--max-idle-seconds", "3", "--log-format", "json", "--metrics-listen",
                                        "127.0.0.1:0"}),
               dir.File("worker.log"));
  ASSERT_TRUE(server.WaitAllFinished(120000)) << worker.output();
  ASSERT_TRUE(worker.WaitForOutput("result sent: accepted", 20000, 9)) << worker.output();
  // Metrics while it idles before exiting.
  const std::string log = worker.output();
  const size_t at = log.find("(port ");
  ASSERT_NE(at, std::string::npos) << log;
  const int metrics_port = std::stoi(log.substr(at + 6));
  const std::string metrics = HttpGet(metrics_port, "/metrics");
  EXPECT_NE(metrics.find("collatz_worker_units_done_total{device=\"cpu\"} 9"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("collatz_worker_numbers_searched_total{device=\"cpu\"} 16777215"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("collatz_worker_numbers_per_second{device=\"cpu\"}"), std::string::npos);
  EXPECT_NE(metrics.find("collatz_worker_units_failed_total"), std::string::npos);

  ASSERT_EQ(worker.Wait(30000), 0) << worker.output();
  ExpectRecordsEqualReference(server, Pow2(24));
  EXPECT_EQ(SpooledResults(dir), 0u);
  // One JSON object per line; one "done" line per unit, with its rate and records.
  const std::string final_log = worker.output();
  std::stringstream lines(final_log);
  size_t n = 0;
  for (std::string line; std::getline(lines, line); ++n) {
    ASSERT_TRUE(line.size() > 2 && line.front() == '{' && line.back() == '}') << line;
    EXPECT_NE(line.find("\"msg\":\""), std::string::npos) << line;
  }
  EXPECT_GT(n, 10u);
  EXPECT_EQ(CountOccurrences(final_log, "numbers/s"), 9u) << final_log;
  EXPECT_NE(final_log.find("self-test passed on the CPU path"), std::string::npos);
  EXPECT_NE(final_log.find("cpu: unit 1 [1, 1048576) done in"), std::string::npos) << final_log;
}

// collatz-worker-test is a test build: a server refuses it unless told --allow-test-builds
// (the tests below that run it pass the flag), and the worker stops.
TEST(WorkerEndToEnd, TestBuildIsRefusedWithoutTheFlag) {
  TempDir dir;
  Server server(dir.path(), 0, "server.log");
  ASSERT_TRUE(server.ok()) << server.child().output();
  Child tester(COLLATZ_TEST_WORKER_BINARY, WorkerArgs(server, dir, {"--skip-self-test"}), dir.File("worker.log"));
  ASSERT_EQ(tester.Wait(60000), 1) << tester.output();
  EXPECT_NE(tester.output().find("is a test build"), std::string::npos) << tester.output();
  EXPECT_NE(tester.output().find("--allow-test-builds"), std::string::npos) << tester.output();
}

TEST(WorkerEndToEnd, SpooledResultSurvivesSigkillBeforeItWasSent) {
  TempDir dir;
  // The crashing worker is collatz-worker-test: a test build.
  Server server(dir.path(), 0, "server.log", {"--lease-seconds", "4", "--allow-test-builds"});
  ASSERT_TRUE(server.ok()) << server.child().output();
  ASSERT_EQ(server.Submit(1, Pow2(24), Pow2(21)).units(), 9u);
  {
    Child crashing(COLLATZ_TEST_WORKER_BINARY, WorkerArgs(server, dir, {"--test-crash-after-spool"}),
                   dir.File("worker1.log"));
    ASSERT_EQ(crashing.Wait(120000), kKilled) << crashing.output();
  }
  ASSERT_EQ(SpooledResults(dir), 1u);
  EXPECT_EQ(server.Status().units_finished(), 0u);

  Child worker(COLLATZ_WORKER_BINARY, WorkerArgs(server, dir, {"--max-idle-seconds", "6"}), dir.File("worker2.log"));
  ASSERT_EQ(worker.Wait(120000), 0) << worker.output();
  const std::string log = worker.output();
  // The spool went out first, and the server took it (not a re-run: it was the first result).
  const size_t resent = log.find("re-sending 1 finished result(s)");
  const size_t accepted = log.find("unit 1 result sent: accepted");
  const size_t loop = log.find("lease loop started");
  ASSERT_NE(resent, std::string::npos) << log;
  ASSERT_NE(accepted, std::string::npos) << log;
  EXPECT_LT(resent, accepted);
  EXPECT_LT(accepted, loop);
  EXPECT_EQ(SpooledResults(dir), 0u);
  ASSERT_TRUE(server.WaitAllFinished(10000));
  ExpectRecordsEqualReference(server, Pow2(24));
}

TEST(WorkerEndToEnd, CorruptSpoolFileIsMovedAsideNotFatal) {
  TempDir dir;
  Server server(dir.path(), 0, "server.log");
  ASSERT_TRUE(server.ok()) << server.child().output();
  std::filesystem::create_directories(dir.File("spool"));
  {
    std::ofstream(dir.File("spool/u00000000000000000001-deadbeef.result")) << "CLZSPOL1 but then garbage";
  }
  ASSERT_EQ(server.Submit(1, Pow2(22), Pow2(21)).units(), 3u);
  Child worker(COLLATZ_WORKER_BINARY, WorkerArgs(server, dir, {"--max-idle-seconds", "1"}), dir.File("worker.log"));
  ASSERT_EQ(worker.Wait(120000), 0) << worker.output();
  EXPECT_NE(worker.output().find("is unreadable"), std::string::npos) << worker.output();
  EXPECT_TRUE(std::filesystem::exists(dir.File("spool/corrupt/u00000000000000000001-deadbeef.result")));
  ExpectRecordsEqualReference(server, Pow2(22));
}

TEST(WorkerEndToEnd, ServerUnreachableForAWhile) {
  TempDir dir;
  auto server = std::make_unique<Server>(dir.path(), 0, "server1.log", std::vector<std::string>{"--lease-seconds", "3"});
  ASSERT_TRUE(server->ok()) << server->child().output();
  const int port = server->port();
  ASSERT_EQ(server->Submit(1, Pow2(26), Pow2(22)).units(), 17u);
  Child worker(COLLATZ_WORKER_BINARY, WorkerArgs(*server, dir, {"--max-idle-seconds", "8"}), dir.File("worker.log"));
  ASSERT_TRUE(worker.WaitForOutput("done in", 120000)) << worker.output();
  // The coordinator dies (no clean shutdown) while the worker is in the middle of the range.
  // A lease it granted in its last moment may never have reached the worker: it expires
  // after 3 s and is leased again, so the worker waits 8 s for work before it exits.
  server->child().Signal(SIGKILL);
  ASSERT_EQ(server->child().Wait(10000), kKilled);
  server.reset();
  std::this_thread::sleep_for(std::chrono::seconds(4));
  ASSERT_TRUE(worker.running()) << worker.output();
  server = std::make_unique<Server>(dir.path(), port, "server2.log", std::vector<std::string>{"--lease-seconds", "3"});
  ASSERT_TRUE(server->ok()) << server->child().output();
  ASSERT_EQ(worker.Wait(180000), 0) << worker.output();
  const std::string log = worker.output();
  EXPECT_TRUE(log.find("retrying") != std::string::npos) << log;
  ASSERT_TRUE(server->WaitAllFinished(30000));
  ExpectRecordsEqualReference(*server, Pow2(26));
  EXPECT_EQ(SpooledResults(dir), 0u);
}

// The worker logs "<device>: unit N [a, b) started (floor ...)" when it starts searching a
// unit; "lease loop started" comes before any lease, so waiting for "started" alone could
// signal a worker that holds no unit yet.
constexpr char kUnitStarted[] = ") started (floor ";

// SIGTERM has to find the worker inside a unit: it is sent once the unit's start is in the
// log, and acted on within the worker's 100 ms monitor tick, so the unit must last well
// beyond that. A unit from 1 is cut at 2^20 by the coordinator (server/submission_units.h),
// and units above it search with a floor and early termination and end quickly; so the
// range is first [2^27, 2^29) in units of 2^27, with nothing below it covered: each unit is
// searched in full (no record table, so no early termination; its floor, 950, comes from the
// published records below 2^27, docs/FLOOR.md), about 1.3 s on one thread of the 2-core build
// host and still about 0.5 s on a fast core, many times the signal's latency. [1, 2^27) is submitted
// before the last worker, which finishes everything.
TEST(WorkerEndToEnd, SigtermMidUnitReleasesTheLeaseAndLosesNothing) {
  TempDir dir;
  Server server(dir.path(), 0, "server.log", {"--lease-seconds", "60"});
  ASSERT_TRUE(server.ok()) << server.child().output();
  ASSERT_EQ(server.Submit(Pow2(27), Pow2(29), Pow2(27)).units(), 3u);
  {
    Child worker(COLLATZ_WORKER_BINARY, WorkerArgs(server, dir, {"--grace-seconds", "0"}), dir.File("worker1.log"));
    ASSERT_TRUE(worker.WaitForOutput("unit 1 [134217728, 268435456) started (floor 950, 0 known records, 19-bit sieve)", 60000)) << worker.output();
    worker.Signal(SIGTERM);
    ASSERT_EQ(worker.Wait(20000), 0) << worker.output();
    const std::string log = worker.output();
    ASSERT_EQ(log.find(") done in"), std::string::npos) << "the unit ended before the signal took effect\n" << log;
    EXPECT_NE(log.find("unit 1 [134217728, 268435456) released: worker shutting down"), std::string::npos) << log;
  }
  v1::StatusResponse s = server.Status();
  EXPECT_EQ(s.units_leased(), 0u);
  EXPECT_EQ(s.units_finished(), 0u);
  EXPECT_EQ(s.units_pending(), 3u);

  // With a grace period the running unit is finished and delivered; nothing new is taken.
  size_t accepted = 0;
  {
    Child worker(COLLATZ_WORKER_BINARY, WorkerArgs(server, dir, {"--grace-seconds", "120", "--prefetch-fraction", "0"}),
                 dir.File("worker2.log"));
    ASSERT_TRUE(worker.WaitForOutput(kUnitStarted, 60000)) << worker.output();
    worker.Signal(SIGTERM);
    ASSERT_EQ(worker.Wait(120000), 0) << worker.output();
    const std::string log = worker.output();
    accepted = CountOccurrences(log, "result sent: accepted");
    // The unit running at the signal (normally the only one): started, done, delivered.
    EXPECT_GE(accepted, 1u) << log;
    EXPECT_EQ(CountOccurrences(log, ") done in"), accepted) << log;
  }
  s = server.Status();
  EXPECT_EQ(s.units_leased(), 0u);
  EXPECT_EQ(s.units_finished(), accepted);
  EXPECT_EQ(s.units_pending(), 3u - accepted);
  EXPECT_EQ(SpooledResults(dir), 0u);

  // Nothing was lost: a fresh worker finishes the range from 1 ([1, 2^20), [2^20, 2^24),
  // [2^24, 2^27) added) and the records are exact.
  ASSERT_EQ(server.Submit(1, Pow2(27), Pow2(27)).units(), 3u);
  Child worker(COLLATZ_WORKER_BINARY, WorkerArgs(server, dir, {"--max-idle-seconds", "1"}, "2"),
               dir.File("worker3.log"));
  ASSERT_EQ(worker.Wait(240000), 0) << worker.output();
  ASSERT_TRUE(server.WaitAllFinished(10000));
  ExpectRecordsEqualReference(server, Pow2(29));
}

// A server that cuts its delay+class units of 2^21 numbers with a 21-bit sieve (its base is
// 19: --class-sieve-bits 21 --class-sieve-min-numbers 2^21, as 25 bits for 2^46 by default):
// the worker builds and self-tests a 21-bit engine at the first such unit, searches those
// units with it and the smaller first units with its 19-bit one; the server accepts every
// result (it verifies each with the unit's width) and the records are exact.
TEST(WorkerEndToEnd, SearchesEachUnitWithTheSieveWidthItWasCutWith) {
  TempDir dir;
  Server server(dir.path(), 0, "server.log",
                {"--unit-size", "2^21", "--class-sieve-bits", "21", "--class-sieve-min-numbers", "2^21"});
  ASSERT_TRUE(server.ok()) << server.child().output();
  // [1, 2^20) and [2^20, 2^21) at 19 bits, then 7 units of 2^21 at 21 bits.
  ASSERT_EQ(server.Submit(1, Pow2(24), Pow2(21)).units(), 9u);
  Child worker(COLLATZ_WORKER_BINARY, WorkerArgs(server, dir, {"--max-idle-seconds", "3"}), dir.File("worker.log"));
  ASSERT_TRUE(server.WaitAllFinished(120000)) << worker.output();
  ASSERT_EQ(worker.Wait(30000), 0) << worker.output();
  ExpectRecordsEqualReference(server, Pow2(24));
  const std::string log = worker.output(), server_log = server.child().output();
  EXPECT_NE(log.find("wide class units of 21 bits"), std::string::npos) << log;
  EXPECT_EQ(CountOccurrences(log, "building the engine of a 21-bit sieve"), 1u) << log;
  EXPECT_EQ(CountOccurrences(log, "self-test passed on the 21-bit sieve engine"), 1u) << log;
  EXPECT_EQ(CountOccurrences(log, "known records, 21-bit sieve)"), 7u) << log;
  EXPECT_EQ(CountOccurrences(log, "known records, 19-bit sieve)"), 2u) << log;
  EXPECT_EQ(CountOccurrences(log, "result sent: accepted"), 9u) << log;
  EXPECT_EQ(CountOccurrences(server_log, "sieve 21 bits"), 7u) << server_log;
  EXPECT_EQ(CountOccurrences(server_log, "REJECTED"), 0u) << server_log;
}

TEST(WorkerEndToEnd, RefusesAServerWithAnotherSieve) {
  TempDir dir;
  Server server(dir.path(), 0, "server.log", {"--sieve-bits", "12"});
  ASSERT_TRUE(server.ok()) << server.child().output();
  Child worker(COLLATZ_WORKER_BINARY, WorkerArgs(server, dir), dir.File("worker.log"));
  EXPECT_EQ(worker.Wait(60000), 1) << worker.output();
  EXPECT_NE(worker.output().find("refuses registration"), std::string::npos) << worker.output();
}

}  // namespace
}  // namespace collatz::worker::e2e
