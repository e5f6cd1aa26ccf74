// End to end on 127.0.0.1 with the real collatz-server binary and in-process test workers
// (server/test_worker.h): a search of [1, 2^26) while one worker abandons its unit
// mid-way (as if killed) and the server is killed with SIGKILL and restarted; the final
// records equal shared/data, every unit is finished exactly once, and the database
// passes PRAGMA integrity_check after a graceful SIGTERM.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <thread>

#include "core/records_csv.h"
#include "core/test_support.h"
#include "core/work_hash.h"
#include "proto/wire.h"
#include "client/channel.h"
#include "client/worker_client.h"
#include "server/test_worker.h"
#include "storage/record_db.h"
#include "tests/support/child_process.h"
#include "tests/support/temp_dir.h"

namespace collatz::server {
namespace {

using test_support::ChildProcess;
using client::AddToken;
using client::MakeChannel;

constexpr const char* kToken = "e2e-token";
// [1, 2^26) in units of 2^22: [1, 2^20), [2^20, 2^22), then 15 units of 2^22
// (server/submission_units.h).
constexpr uint64_t kUnits = 17;

std::vector<Record> Reference(const char* file, RecordCsvKind kind, u128 below) {
  std::vector<Record> r = testing_support::ReferenceRecords(file, kind);
  std::erase_if(r, [below](const Record& x) { return x.n >= below; });
  return r;
}

grpc::Status GetStatus(v1::Admin::Stub* admin, v1::StatusResponse* s) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  return admin->Status(&ctx, v1::StatusRequest(), s);
}

// Submits [1, end) for delay and class records; the number of units.
uint64_t SubmitFromOne(v1::Admin::Stub* admin, u128 end) {
  grpc::ClientContext ctx;
  AddToken(&ctx, kToken);
  v1::SubmitRequest req;
  wire::ToWire(1, req.mutable_begin());
  wire::ToWire(end, req.mutable_end());
  req.set_kinds(v1::KINDS_DELAY_AND_CLASS);
  v1::SubmitResponse resp;
  EXPECT_TRUE(admin->Submit(&ctx, req, &resp).ok());
  return resp.units();
}

// The server's final records equal the reference below `end`.
void ExpectReferenceRecords(v1::Admin::Stub* admin, u128 end) {
  for (auto [kind, file, csv] : {std::tuple{v1::RECORD_KIND_DELAY, "delay_records_below_2p28.csv", RecordCsvKind::kDelay},
                                 std::tuple{v1::RECORD_KIND_CLASS, "class_records_below_2p28.csv", RecordCsvKind::kClass}}) {
    grpc::ClientContext ctx;
    v1::QueryRecordsRequest q;
    q.set_kind(kind);
    v1::QueryRecordsResponse r;
    ASSERT_TRUE(admin->QueryRecords(&ctx, q, &r).ok());
    EXPECT_EQ(wire::RecordsFromWire(r.final_records()), Reference(file, csv, end)) << file;
  }
}

TEST(EndToEnd, SearchWithWorkerLossAndServerKillEqualsReference) {
  test_support::TempDir dir;
  const std::string db = dir.File("e2e.db");
  std::ofstream(dir.File("token")) << kToken << "\n";
  // The server is restarted on the same port, so the port is chosen here.
  const int port = test_support::FreeTcpPort();
  ASSERT_GT(port, 0);
  const std::string address = "127.0.0.1:" + std::to_string(port);
  const u128 end = Pow2(26);
  const std::vector<std::string> server_args = {"--listen", address, "--db", db, "--token-file", dir.File("token"),
                                                "--sieve-bits", "16", "--unit-size", "2^22", "--lease-seconds", "3",
                                                "--audit-fraction", "0.25", "--double-check", "none", "--log-level", "info"};
  auto start_server = [&] {
    return std::make_unique<ChildProcess>(COLLATZ_SERVER_BINARY, server_args, dir.File("server.log"));
  };
  std::unique_ptr<ChildProcess> server = start_server();

  std::shared_ptr<grpc::Channel> channel;
  ASSERT_TRUE(MakeChannel(address, "", &channel).ok());
  auto admin = v1::Admin::NewStub(channel);
  auto status = [&](v1::StatusResponse* s) { return GetStatus(admin.get(), s); };
  auto wait_up = [&] {
    v1::StatusResponse s;
    for (int i = 0; i < 300; ++i) {
      if (status(&s).ok()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  };
  ASSERT_TRUE(wait_up()) << "server did not come up";
  EXPECT_EQ(SubmitFromOne(admin.get(), end), kUnits);

  std::shared_ptr<const SearchTables> tables;
  ASSERT_TRUE(SearchTables::Build(16, 16, 18, &tables).ok());
  // A worker that dies mid-unit: it leases and never comes back; its lease expires.
  {
    client::WorkerClient lost(channel, kToken, client::WorkerIdentity{"lost", {}, "", "", "cpu", 16, "", true});
    lost.set_accepts_stats(false);
    ASSERT_TRUE(lost.Register().ok());
    client::Lease lease;
    bool has_unit = false;
    uint64_t retry_after_ms = 0;
    ASSERT_TRUE(lost.LeaseUnit(&lease, &has_unit, &retry_after_ms).ok());
    ASSERT_TRUE(has_unit);
  }
  std::atomic<bool> stop{false};
  TestWorkerOptions wo;
  wo.address = address;
  wo.token = kToken;
  wo.idle_exit_ms = 15000;
  TestWorkerStats s1, s2;
  // Hosts of their own: audits never come from the host of the result they check.
  TestWorkerOptions wo2 = wo;
  wo.host = "test-worker-1";
  wo2.host = "test-worker-2";
  std::thread t1([&] { s1 = RunTestWorker(wo, tables, &stop); });
  std::thread t2([&] { s2 = RunTestWorker(wo2, tables, &stop); });

  // Kill the server with SIGKILL once a few units are done, and restart it.
  for (int i = 0; i < 1200; ++i) {
    v1::StatusResponse s;
    if (status(&s).ok() && s.units_finished() >= 5) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  server->Signal(SIGKILL);
  server->Wait();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  server = start_server();
  ASSERT_TRUE(wait_up()) << "server did not come back";

  v1::StatusResponse final_status;
  for (int i = 0; i < 3000; ++i) {
    if (status(&final_status).ok() && final_status.units_finished() == kUnits && final_status.audits_pending() == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  stop = true;
  t1.join();
  t2.join();
  EXPECT_EQ(final_status.units_finished(), kUnits);
  EXPECT_EQ(final_status.units_pending() + final_status.units_leased() + final_status.units_quarantined(), 0u);
  EXPECT_EQ(final_status.audits_failed(), 0u);
  EXPECT_TRUE(wire::FromWire(final_status.covered_prefix()) == end);
  EXPECT_EQ(s1.errors + s2.errors, 0);
  EXPECT_GE(s1.accepted + s2.accepted, 12);  // some units may have finished before the kill, twice counted never

  ExpectReferenceRecords(admin.get(), end);
  // Graceful stop, then check the file itself: 17 finished units tile [1, 2^26) exactly.
  server->Signal(SIGTERM);
  EXPECT_EQ(server->Wait(), 0);
  std::unique_ptr<RecordDb> rdb;
  ASSERT_TRUE(RecordDb::Open(db, RecordDb::OpenMode::kExistingOnly, &rdb).ok());
  std::vector<FinishedUnit> units;
  ASSERT_TRUE(rdb->LoadFinishedUnits(&units).ok());
  ASSERT_EQ(units.size(), kUnits);
  u128 at = 1;
  for (const FinishedUnit& u : units) {
    EXPECT_TRUE(u.begin == at);
    at = u.end;
  }
  EXPECT_TRUE(at == end);
  rdb.reset();
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw, "PRAGMA integrity_check", -1, &stmt, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)), "ok");
  sqlite3_finalize(stmt);
  ASSERT_EQ(sqlite3_prepare_v2(raw, "SELECT count(*) FROM unit_results", -1, &stmt, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(stmt, 0), static_cast<int>(kUnits));
  sqlite3_finalize(stmt);
  sqlite3_close_v2(raw);
  std::printf("workers: accepted %d+%d, duplicates %d+%d, audits %d+%d, reconnects %d+%d; audits passed %llu\n",
              s1.accepted, s2.accepted, s1.duplicates, s2.duplicates, s1.audits, s2.audits, s1.reconnects,
              s2.reconnects, static_cast<unsigned long long>(final_status.audits_passed()));
}

// One lying test worker (one number's delay one off in every tally it reports) beside two
// honest ones, over gRPC against the real server with every unit audited and no server
// re-runs: the liar is flagged alone (by third workers' audits), the records equal the
// reference, and no audit is left pending.
TEST(EndToEnd, LyingWorkerAmongHonestOnesIsFlaggedAlone) {
  test_support::TempDir dir;
  std::ofstream(dir.File("token")) << kToken << "\n";
  const int port = test_support::FreeTcpPort();
  ASSERT_GT(port, 0);
  const std::string address = "127.0.0.1:" + std::to_string(port);
  const u128 end = Pow2(21);
  ChildProcess server(COLLATZ_SERVER_BINARY,
                      {"--listen", address, "--db", dir.File("e2e.db"), "--token-file", dir.File("token"), "--sieve-bits",
                       "16", "--unit-size", "2^17", "--lease-seconds", "60", "--audit-fraction", "1",
                       "--referee-max-numbers", "0", "--double-check", "none", "--log-level", "info"},
                      dir.File("server.log"));
  std::shared_ptr<grpc::Channel> channel;
  ASSERT_TRUE(MakeChannel(address, "", &channel).ok());
  auto admin = v1::Admin::NewStub(channel);
  auto status = [&](v1::StatusResponse* s) { return GetStatus(admin.get(), s); };
  v1::StatusResponse s;
  for (int i = 0; i < 300 && !status(&s).ok(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const uint64_t units = SubmitFromOne(admin.get(), end);
  ASSERT_GT(units, 0u);
  std::shared_ptr<const SearchTables> tables;
  ASSERT_TRUE(SearchTables::Build(16, 16, 18, &tables).ok());
  std::atomic<bool> stop{false};
  TestWorkerOptions honest;
  honest.address = address;
  honest.token = kToken;
  honest.idle_exit_ms = 15000;
  TestWorkerOptions liar = honest;
  liar.host = "liar";
  liar.tamper = [](UnitResult* r) { r->tally_sum += 1; };
  TestWorkerStats s1, s2, s3;
  TestWorkerOptions honest2 = honest;
  honest.host = "honest-1";
  honest2.host = "honest-2";
  std::thread t1([&] { s1 = RunTestWorker(honest, tables, &stop); });
  std::thread t2([&] { s2 = RunTestWorker(honest2, tables, &stop); });
  std::thread t3([&] { s3 = RunTestWorker(liar, tables, &stop); });
  for (int i = 0; i < 1200; ++i) {
    if (status(&s).ok() && s.units_finished() == units && s.audits_pending() == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  stop = true;
  t1.join();
  t2.join();
  t3.join();
  EXPECT_EQ(s.units_finished(), units);
  EXPECT_EQ(s.audits_pending(), 0u);
  EXPECT_EQ(s.audits_passed(), units);
  EXPECT_GE(s.audits_failed(), 1u);
  EXPECT_TRUE(wire::FromWire(s.covered_prefix()) == end);
  EXPECT_EQ(s1.errors + s2.errors, 0) << s1.last_error << " / " << s2.last_error;
  {
    grpc::ClientContext ctx;
    v1::ListWorkersResponse workers;
    ASSERT_TRUE(admin->ListWorkers(&ctx, v1::ListWorkersRequest(), &workers).ok());
    ASSERT_EQ(workers.workers_size(), 3);
    for (const auto& w : workers.workers()) EXPECT_EQ(w.flagged(), w.host() == "liar") << w.host() << ": " << w.flag_reason();
  }
  ExpectReferenceRecords(admin.get(), end);
}  // the server is SIGKILLed: its graceful stop is the other test's

// The coordinator path on an empty database, no import: a window of 2^23 numbers around a
// published record at 2^60 is leased with the floor of the published records below it
// (recomputed, not trusted), a CPU worker finds the record, and it is a candidate with its
// delay (nothing below the window is covered, so nothing is final).
TEST(EndToEnd, EmptyServerAt2p60LeasesAFloorAndFindsThePublishedRecord) {
  test_support::TempDir dir;
  std::ofstream(dir.File("token")) << kToken << "\n";
  const int port = test_support::FreeTcpPort();
  ASSERT_GT(port, 0);
  const std::string address = "127.0.0.1:" + std::to_string(port);
  ChildProcess server(COLLATZ_SERVER_BINARY,
                      {"--listen", address, "--db", dir.File("frontier.db"), "--token-file", dir.File("token"),
                       "--sieve-bits", "16", "--unit-size", "2^22", "--double-check", "none", "--log-level", "info"},
                      dir.File("server.log"));
  std::shared_ptr<grpc::Channel> channel;
  ASSERT_TRUE(MakeChannel(address, "", &channel).ok());
  auto admin = v1::Admin::NewStub(channel);
  auto status = [&](v1::StatusResponse* s) { return GetStatus(admin.get(), s); };
  v1::StatusResponse st;
  for (int i = 0; i < 300 && !status(&st).ok(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(status(&st).ok()) << "server did not come up";

  const std::vector<Record> published = Reference("delay_records.csv", RecordCsvKind::kDelay, kU128Max);
  auto it = std::find_if(published.begin(), published.end(), [](const Record& r) { return r.n > Pow2(60); });
  ASSERT_NE(it, published.end());
  const Record record = *it;  // 1278775404785934855, delay 2286
  const u128 begin = record.n - Pow2(22), end = record.n + Pow2(22);
  {
    grpc::ClientContext ctx;
    AddToken(&ctx, kToken);
    v1::SubmitRequest req;
    wire::ToWire(begin, req.mutable_begin());
    wire::ToWire(end, req.mutable_end());
    req.set_kinds(v1::KINDS_DELAY);
    v1::SubmitResponse resp;
    ASSERT_TRUE(admin->Submit(&ctx, req, &resp).ok());
    EXPECT_GE(resp.units(), 2u);
  }
  std::shared_ptr<const SearchTables> tables;
  ASSERT_TRUE(SearchTables::Build(16, 16, 18, &tables).ok());
  std::atomic<bool> stop{false};
  TestWorkerOptions wo;
  wo.address = address;
  wo.token = kToken;
  wo.threads = 2;
  wo.idle_exit_ms = 2000;
  const TestWorkerStats ws = RunTestWorker(wo, tables, &stop);
  EXPECT_EQ(ws.errors, 0);
  ASSERT_TRUE(status(&st).ok());
  EXPECT_GE(st.units_finished(), 2u);
  EXPECT_EQ(st.units_pending() + st.units_leased(), 0u);

  grpc::ClientContext ctx;
  v1::QueryRecordsRequest q;
  q.set_kind(v1::RECORD_KIND_DELAY);
  q.set_include_candidates(true);
  v1::QueryRecordsResponse r;
  ASSERT_TRUE(admin->QueryRecords(&ctx, q, &r).ok());
  EXPECT_TRUE(wire::RecordsFromWire(r.final_records()).empty());
  const std::vector<Record> candidates = wire::RecordsFromWire(r.candidates());
  EXPECT_NE(std::find(candidates.begin(), candidates.end(), record), candidates.end())
      << ToDecimal(record.n) << " not among " << candidates.size() << " candidates";
  // Every unit was leased with a floor from the published records below it: at least the
  // delay of the record before this one (the largest below the window), never 0.
  server.Signal(SIGTERM);
  EXPECT_EQ(server.Wait(), 0);
  const std::string log = test_support::ReadFileOrEmpty(dir.File("server.log"));
  const std::regex lease(R"(search: \[(\d+), (\d+)\) floor (\d+) holes 0)");
  size_t leases = 0;
  for (auto m = std::sregex_iterator(log.begin(), log.end(), lease); m != std::sregex_iterator(); ++m, ++leases) {
    const unsigned floor = static_cast<unsigned>(std::stoul((*m)[3].str()));
    EXPECT_GE(floor, std::prev(it)->delay) << (*m)[0].str();
    u128 unit_begin = 0;
    ASSERT_TRUE(ParseDecimalU128((*m)[1].str(), &unit_begin).ok());
    if (unit_begin <= record.n) EXPECT_EQ(floor, std::prev(it)->delay) << (*m)[0].str();
  }
  EXPECT_EQ(leases, st.units_finished()) << log;
}

// The server's default widths (--sieve-bits 19; --class-sieve-bits 25 for delay+class units
// of at least 2^46 numbers, the default unit size) on the wire: leases name each unit's
// width, an older worker (no RegisterRequest.unit_sieve_bits) is refused with "upgrade the
// worker", and a restart with --class-sieve-bits 0 keeps the widths the units were cut with
// while new class units get 19 bits. Nothing is searched: 2^46 numbers are too many here.
TEST(EndToEnd, DefaultSieveWidthsReachTheWireAndSurviveARestartWithOtherOptions) {
  test_support::TempDir dir;
  std::ofstream(dir.File("token")) << kToken << "\n";
  const int port = test_support::FreeTcpPort();
  ASSERT_GT(port, 0);
  const std::string address = "127.0.0.1:" + std::to_string(port);
  const u128 unit = Pow2(46);

  // One server run: started with `flags`, driven by `body` over a channel of its own (closed
  // before the server is stopped, which then stops at once), stopped with SIGTERM.
  auto run_server = [&](const std::vector<std::string>& flags, const char* log,
                        const std::function<void(const std::shared_ptr<grpc::Channel>&, v1::Admin::Stub*)>& body) {
    std::vector<std::string> args = {"--listen", address, "--db", dir.File("widths.db"), "--token-file",
                                     dir.File("token"), "--log-level", "info"};
    args.insert(args.end(), flags.begin(), flags.end());
    ChildProcess server(COLLATZ_SERVER_BINARY, args, dir.File(log));
    {
      // The server builds its tables first: retry the connection often meanwhile.
      grpc::ChannelArguments ca;
      ca.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
      ca.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
      ca.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 200);
      std::shared_ptr<grpc::Channel> channel = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), ca);
      auto admin = v1::Admin::NewStub(channel);
      v1::StatusResponse s;
      for (int i = 0; i < 300 && !GetStatus(admin.get(), &s).ok(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      ASSERT_TRUE(GetStatus(admin.get(), &s).ok()) << "server did not come up";
      body(channel, admin.get());
    }
    server.Signal(SIGTERM);
    EXPECT_EQ(server.Wait(), 0);
  };
  auto submit = [](v1::Admin::Stub* admin, u128 begin, u128 end, v1::Kinds kinds) {
    grpc::ClientContext ctx;
    AddToken(&ctx, kToken);
    v1::SubmitRequest req;
    wire::ToWire(begin, req.mutable_begin());
    wire::ToWire(end, req.mutable_end());
    req.set_kinds(kinds);
    v1::SubmitResponse resp;
    EXPECT_TRUE(admin->Submit(&ctx, req, &resp).ok());
    return resp.units();
  };
  // A worker binary from before the field: one width for every unit.
  auto old_worker_refused = [](const std::shared_ptr<grpc::Channel>& channel) {
    auto stub = v1::Worker::NewStub(channel);
    v1::RegisterRequest req;
    req.set_host("old");
    req.set_backend("cpu");
    req.set_sieve_bits(19);
    req.set_work_hash_version(kWorkHashVersion);
    v1::RegisterResponse resp;
    grpc::ClientContext ctx;
    AddToken(&ctx, kToken);
    const grpc::Status st = stub->Register(&ctx, req, &resp);
    EXPECT_NE(st.error_message().find("upgrade the worker"), std::string::npos) << st.error_message();
    return st.error_code() == grpc::StatusCode::FAILED_PRECONDITION;
  };
  // Every unit leased until none is left (or `want` units are seen: expired leases come back),
  // by begin, with the width its lease names.
  auto lease_all = [](const std::shared_ptr<grpc::Channel>& channel, size_t want, client::Registration* reg) {
    client::WorkerClient worker(channel, kToken,
                                client::WorkerIdentity{"new", {}, "", "", "cpu", 19, "", true});
    worker.set_accepts_stats(false);
    EXPECT_TRUE(worker.Register(reg).ok());
    std::map<u128, int> widths;
    for (int i = 0; i < 100 && widths.size() < want; ++i) {
      client::Lease lease;
      bool has_unit = false;
      uint64_t retry_after_ms = 0;
      EXPECT_TRUE(worker.LeaseUnit(&lease, &has_unit, &retry_after_ms).ok());
      if (has_unit) widths[lease.spec.begin] = lease.sieve_bits;
      else std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return widths;
  };

  run_server({}, "server1.log", [&](const std::shared_ptr<grpc::Channel>& channel, v1::Admin::Stub* admin) {
    EXPECT_EQ(submit(admin, Pow2(50), Pow2(50) + 2 * unit, v1::KINDS_DELAY_AND_CLASS), 2u);
    EXPECT_EQ(submit(admin, Pow2(60), Pow2(60) + unit, v1::KINDS_DELAY), 1u);
    EXPECT_TRUE(old_worker_refused(channel));
    client::Registration reg;
    EXPECT_EQ(lease_all(channel, 3, &reg),
              (std::map<u128, int>{{Pow2(50), 25}, {Pow2(50) + unit, 25}, {Pow2(60), 19}}));
    EXPECT_EQ(reg.server_sieve_bits, 19);
    EXPECT_EQ(reg.server_class_sieve_bits, 25);
    EXPECT_EQ(reg.server_delay_sieve_bits, 19);  // units of 2^46: the 28-bit tables are not built
  });
  // The leases above get a second from the restart, then their units are leased again.
  run_server({"--class-sieve-bits", "0", "--lease-seconds", "1"}, "server2.log",
             [&](const std::shared_ptr<grpc::Channel>& channel, v1::Admin::Stub* admin) {
               EXPECT_TRUE(old_worker_refused(channel));  // units of 25 bits remain
               EXPECT_EQ(submit(admin, Pow2(52), Pow2(52) + unit, v1::KINDS_DELAY_AND_CLASS), 1u);
               client::Registration reg;
               EXPECT_EQ(lease_all(channel, 4, &reg), (std::map<u128, int>{{Pow2(50), 25}, {Pow2(50) + unit, 25},
                                                                             {Pow2(52), 19}, {Pow2(60), 19}}));
               EXPECT_EQ(reg.server_class_sieve_bits, 19);
             });
}

}  // namespace
}  // namespace collatz::server
