// Leases plus completions per second over loopback: an in-process collatz.v1 server on
// 127.0.0.1 and W simulated workers (one channel each) that lease tiny delay-only units
// above an imported prefix, search them for real with the CPU engine, and complete them.
// Also reports the database bytes per million units. --at 2^60 --kinds delay,class leases
// class units at a frontier instead (the published delay records below --at imported, as
// collatzctl bench does): each lease then closes open classes with a class-member search.
// --browsers B serves the web dashboard beside it, polled by B HTTP clients the way the
// page polls (every --poll-ms; 0: back to back), to show that browsers do not slow leases.
//   coordinator_bench [--workers W] [--units K] [--unit-size S] [--db PATH] [--at X] [--kinds K]
//                     [--browsers B] [--poll-ms MS]
// --simulate-gpus G instead runs the real collatz-server on the prepared database with G
// simulated GPUs that do not search (server/fleet_simulation.h):
//   coordinator_bench --simulate-gpus 10000 --result-interval-s 10 --duration-s 60 --at 2^66
//       --sim-unit-size 2^46 --units 40000
#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "client/worker_client.h"
#include "core/cpu_engine.h"
#include "core/records_csv.h"
#include "server/dashboard/dashboard_server.h"
#include "server/dashboard/dashboard_poller.h"
#include "server/fleet_simulation.h"
#include "server/services.h"

int main(int argc, char** argv) {
  using namespace collatz;
  using namespace collatz::server;
  CLI::App app{"coordinator_bench"};
  int workers = 16, units = 20000, unit_size = 64;
  std::string db = "/tmp/coordinator_bench.db", records = std::string(COLLATZ_SHARED_DATA) + "/delay_records_below_2p28.csv";
  std::string at_text = "2^28", kinds_text = "delay";
  int browsers = 0, poll_ms = 2000;
  app.add_option("--workers", workers)->capture_default_str();
  app.add_option("--units", units)->capture_default_str();
  app.add_option("--unit-size", unit_size)->capture_default_str();
  app.add_option("--db", db)->capture_default_str();
  app.add_option("--at", at_text, "First unit's start; above 2^28 the published delay records below it are imported")
      ->capture_default_str();
  app.add_option("--kinds", kinds_text, "delay or delay,class")->capture_default_str();
  app.add_option("--browsers", browsers, "HTTP clients polling the dashboard meanwhile")->capture_default_str();
  app.add_option("--poll-ms", poll_ms, "Pause between a browser's polls (the page: 2000)")->capture_default_str();
  FleetOptions fleet;
  std::string sim_unit_size_text = "2^46";
  app.add_option("--simulate-gpus", fleet.gpus, "Simulated GPUs against the real collatz-server (0: the worker bench)")
      ->default_val(0);
  app.add_option("--result-interval-s", fleet.result_interval_s, "Seconds between one simulated GPU's results")
      ->capture_default_str();
  app.add_option("--duration-s", fleet.duration_s, "Measured seconds of the simulation")->capture_default_str();
  app.add_option("--sim-unit-size", sim_unit_size_text, "Numbers per unit of the simulation")->capture_default_str();
  app.add_option("--sim-threads", fleet.threads, "Client threads driving the simulated GPUs")->capture_default_str();
  app.add_option("--server-binary", fleet.server_binary, "collatz-server (default: beside this program)");
  app.add_option("--sim-double-check", fleet.double_check, "The server's trust policy in the simulation")
      ->check(CLI::IsMember({"none", "adaptive", "all"}))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (fleet.gpus > 0) {
    // Bounded: a loopback run of at most 100,000 GPUs for at most 10 minutes.
    if (!ParseU128(sim_unit_size_text, &fleet.unit_size).ok() || fleet.unit_size < 64 || fleet.gpus > 100000 ||
        fleet.result_interval_s <= 0 || fleet.duration_s <= 0 || fleet.duration_s > 600 || fleet.threads < 1 ||
        fleet.threads > 256 || units < fleet.gpus || kinds_text != "delay") {
      std::fprintf(stderr, "--simulate-gpus at most 100000 (delay units only, --units at least as many), "
                           "--sim-unit-size at least 64, --duration-s in (0, 600], --sim-threads in [1, 256]\n");
      return 2;
    }
    if (fleet.server_binary.empty()) {
      fleet.server_binary = (std::filesystem::canonical("/proc/self/exe").parent_path() / "collatz-server").string();
    }
  }
  u128 begin = 0;
  if (!ParseU128(at_text, &begin).ok() || begin < Pow2(28) || (kinds_text != "delay" && kinds_text != "delay,class")) {
    std::fprintf(stderr, "--at must be 2^28 or above, --kinds delay or delay,class\n");
    return 2;
  }
  spdlog::set_level(spdlog::level::warn);
  std::filesystem::remove(db);
  std::filesystem::remove(db + "-wal");
  std::filesystem::remove(db + "-shm");

  std::shared_ptr<const SearchTables> tables;
  if (!SearchTables::Build(16, 16, 18, &tables).ok()) return 1;
  std::unique_ptr<CoordinatorStore> store;
  if (Status st = CoordinatorStore::Open(db, &store); !st.ok()) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 1;
  }
  SystemClock clock;
  std::unique_ptr<Coordinator> c;
  CoordinatorOptions options;
  options.merge_interval_ms = 1000;
  if (!Coordinator::Open(std::move(store), tables, &clock, options, &c).ok()) return 1;
  TrustedImport imp;
  imp.complete_below = Pow2(28);
  if (!ReadRecordsCsv(records, RecordCsvKind::kDelay, &imp.delay_records).ok()) return 1;
  u128 covered;
  if (!c->Import(imp, "bench", &covered).ok()) return 1;
  TrustedImport high_import;
  if (begin > Pow2(28)) {
    TrustedImport& high = high_import;
    std::vector<Record> published;
    if (!ReadRecordsCsv(std::string(COLLATZ_SHARED_DATA) + "/delay_records.csv", RecordCsvKind::kDelay, &published).ok()) {
      return 1;
    }
    for (const Record& r : published) {
      if (r.n < begin) high.delay_records.push_back(r);
    }
    // The list is complete only up to its last row: above it, claiming more is refused
    // (core/import_check.h).
    high.complete_below = std::min(begin, published.back().n + 1);
    if (!c->Import(high, "bench-published", &covered).ok()) return 1;
  }
  const Kinds kinds = kinds_text == "delay" ? Kinds::kDelay : Kinds::kDelayAndClass;
  SubmitOutcome out;
  const u128 size = fleet.gpus > 0 ? fleet.unit_size : static_cast<u128>(unit_size);
  if (grpc::Status st = c->Submit(begin, begin + static_cast<u128>(units) * size, kinds, size, 0, &out); !st.ok()) {
    std::fprintf(stderr, "%s\n", st.error_message().c_str());
    return 1;
  }
  if (fleet.gpus > 0) {
    c.reset();  // closed: the database is checkpointed, and the server opens it
    fleet.db = db;
    fleet.begin = begin;
    fleet.units = units;
    fleet.db_bytes_submitted = std::filesystem::file_size(db);
    fleet.imports = {imp};
    if (begin > Pow2(28)) fleet.imports.push_back(high_import);
    return RunFleetSimulation(fleet);
  }
  TokenAuth auth("bench-token");
  WorkerService ws(c.get(), &auth);
  AdminService as(c.get(), &auth);
  grpc::ServerBuilder b;
  int port = 0;
  b.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  b.RegisterService(&ws);
  b.RegisterService(&as);
  auto server = b.BuildAndStart();
  const std::string address = "127.0.0.1:" + std::to_string(port);

  // The dashboard and its browsers, as collatz-server --http-listen runs it.
  std::unique_ptr<DashboardData> dashboard_data;
  std::unique_ptr<DashboardServer> dashboard;
  std::unique_ptr<DashboardPoller> poller;
  if (browsers > 0) {
    std::unique_ptr<DashboardReader> reader;
    if (!DashboardReader::Open(db, &reader).ok()) return 1;
    dashboard_data = std::make_unique<DashboardData>(c.get(), std::move(reader), &clock, DashboardOptions{});
    dashboard = std::make_unique<DashboardServer>(dashboard_data.get(), "bench-token");
    if (!dashboard->Listen("127.0.0.1:0").ok()) return 1;
    poller = std::make_unique<DashboardPoller>(dashboard->port(), "bench-token", browsers, poll_ms);
  }

  std::atomic<int> done{0};
  std::atomic<int> failures{0};
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < workers; ++i) {
    threads.emplace_back([&, i] {
      grpc::ChannelArguments args;
      args.SetInt("grpc.channel_id", i);  // one connection per simulated worker
      client::WorkerClient client(grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args),
                                  "bench-token", client::WorkerIdentity{"bench-" + std::to_string(i), {}, "", "", "cpu", 16, "", true});
      client.set_accepts_stats(false);
      if (!client.Register().ok()) {
        ++failures;
        return;
      }
      CpuEngineOptions eo;
      eo.threads = 1;
      CpuEngine engine(tables, eo);
      while (true) {
        client::Lease lease;
        bool has_unit = false;
        uint64_t retry_after_ms = 0;
        if (!client.LeaseUnit(&lease, &has_unit, &retry_after_ms).ok()) {
          ++failures;
          return;
        }
        if (!has_unit) return;
        UnitResult r;
        if (!engine.Search(lease.spec, &r).ok()) return;
        v1::Disposition d;
        if (!client.Complete(lease, r, 0.001, "cpu", &d).ok()) ++failures;
        ++done;
      }
    });
  }
  for (auto& t : threads) t.join();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string polled;
  if (poller) {
    const DashboardPoller::Counts n = poller->Stop();
    polled = ", " + std::to_string(browsers) + " browsers: " + std::to_string(n.requests) + " HTTP requests (" +
             std::to_string(static_cast<int>(n.requests / secs)) + "/s), " + std::to_string(n.failures) + " failed";
  }
  dashboard.reset();
  dashboard_data.reset();
  server->Shutdown();
  const CoordinatorStatus s = c->GetStatus();
  c.reset();
  const double bytes = static_cast<double>(std::filesystem::file_size(db));
  std::printf("%s units at %s: ", kinds_text.c_str(), at_text.c_str());
  std::printf("%d workers, %d units of %d numbers: %.2f s, %.0f leases+completions/s (%.0f RPCs/s), %d failures, "
              "finished %llu, covered prefix %s%s\n",
              workers, done.load(), unit_size, secs, done / secs, 2 * done / secs, failures.load(),
              static_cast<unsigned long long>(s.finished), ToDecimal(s.covered_prefix).c_str(), polled.c_str());
  std::printf("database: %.0f bytes for %d units = %.0f MB per million units\n", bytes, units, bytes / units * 1e6 / 1e6);
  return 0;
}
