// collatz-server: the coordinator. Wiring only: options, logging, the gRPC server with
// the Worker and Admin services, health and reflection, a lease sweeper, and graceful
// shutdown on SIGTERM/SIGINT (stop leasing, finish in-flight calls, close the database).
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <sstream>
#include <thread>
#include <tuple>

#include "client/channel.h"
#include "core/u128.h"
#include "engines/engine_factory.h"
#include "engines/unit_size.h"
#include "platform/systemd_notify.h"
#include "server/auth.h"
#include "server/coordinator.h"
#include "server/dashboard/dashboard_server.h"
#include "server/listen_address.h"
#include "server/metrics.h"
#include "server/services.h"
#include "storage/coordinator_store.h"
#include "storage/token_store.h"

namespace {

std::string ReadFile(const std::string& path, bool* ok) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  *ok = static_cast<bool>(in);
  return ss.str();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace collatz;
  using namespace collatz::server;
  CLI::App app{"collatz-server: the coordinator of a distributed Collatz delay-record search"};
  std::string listen = "127.0.0.1:50051", db_path, token_file, tls_cert, tls_key, unit_size_text = "2^46";
  std::string log_level = "info", stats_unit_size_text = "2^30", metrics_listen, referee_max_text = "2^28", http_listen;
  std::string sieve_file, class_sieve_min_text = "2^46", delay_sieve_min_text = "2^48";
  std::string class_unit_size_text = "2^" + std::to_string(engines::kMaxDefaultClassUnitBits);
  double lease_seconds = 600, audit_fraction = 0;
  int max_failures = 3, sieve_bits = kDefaultSieveBits, stats_audit_batches = 4, referee_threads = 1;
  int class_sieve_bits = engines::kWideUnitClassSieveBits, delay_sieve_bits = engines::kWideUnitDelaySieveBits;
  bool insecure = false;
  bool allow_test_builds = false;
  app.add_option("--listen", listen, "Address to listen on (host:port)")->capture_default_str();
  app.add_option("--db", db_path, "Record database (SQLite; created if missing)")->required();
  app.add_option("--token-file", token_file,
                 "File holding the shared token, role admin (else $COLLATZ_TOKEN); besides it the tokens of "
                 "collatzctl tokens add are accepted. With neither: open to everyone");
  app.add_flag("--insecure", insecure,
               "Listen beyond loopback (--listen, --http-listen) with no token at all: anyone who can reach the port "
               "may submit, cancel, import or feed results");
  app.add_option("--tls-cert", tls_cert, "PEM certificate chain for TLS");
  app.add_option("--tls-key", tls_key, "PEM private key for TLS");
  app.add_option("--unit-size", unit_size_text, "Default numbers per work unit")->capture_default_str();
  app.add_option("--class-unit-size", class_unit_size_text,
                 "Delay+class submissions without a unit size take the smaller of --unit-size and this (at 2^66 an "
                 "H200 searches a delay+class unit of 2^52 in about 15 minutes)")
      ->capture_default_str();
  app.add_option("--lease-seconds", lease_seconds, "Lease lifetime after each heartbeat")->capture_default_str();
  app.add_option("--max-failures", max_failures, "Failed attempts before a unit is quarantined")->capture_default_str();
  std::string double_check_text = "all";
  double adaptive_floor = 0.05;
  app.add_option("--double-check", double_check_text,
                 "Trust policy: all (every unit counts once two independent workers agree), adaptive (workers are "
                 "checked at a rate falling with their agreeing checks, never below --adaptive-floor), none (one "
                 "search counts: a private fleet that accepts the risk); docs/OPERATIONS.md")
      ->check(CLI::IsMember({"all", "adaptive", "none"}))
      ->capture_default_str();
  app.add_option("--adaptive-floor", adaptive_floor, "Least fraction of a trusted worker's results checked (adaptive)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--audit-fraction", audit_fraction, "With --double-check none: fraction of units re-run by a second worker")
      ->capture_default_str();
  app.add_option("--referee-max-numbers", referee_max_text,
                 "Audit mismatches on units of at most this many numbers are settled by a re-run on the server's "
                 "CPU; larger ones by a third worker (0: never re-run)")
      ->capture_default_str();
  app.add_option("--referee-threads", referee_threads, "Threads of that re-run")->capture_default_str();
  app.add_option("--sieve-bits", sieve_bits,
                 "Join-sieve width of every unit but wide class units (below); every worker registers with it")
      ->capture_default_str();
  app.add_option("--sieve", sieve_file, "Join sieve from a collatz-sieve file (its width wins over --sieve-bits)");
  app.add_option("--class-sieve-bits", class_sieve_bits,
                 "Join-sieve width of delay+class units of at least --class-sieve-min-numbers numbers (GPUs search "
                 "2^46-number class units 18% faster with 25 bits; from --delay-sieve-min-numbers on they take the "
                 "wider of this and --delay-sieve-bits); 0: the same sieve as every other unit. Each unit keeps the "
                 "width it was cut with")
      ->capture_default_str();
  app.add_option("--class-sieve-min-numbers", class_sieve_min_text,
                 "Delay+class units of at least this many numbers get --class-sieve-bits")
      ->capture_default_str();
  app.add_option("--delay-sieve-bits", delay_sieve_bits,
                 "Join-sieve width of the wide units, those of at least --delay-sieve-min-numbers numbers: delay-only "
                 "ones take it (GPUs search 2^49-number units 18% faster with 28 bits than with 19, and 2^48- to "
                 "2^51-number units 1.9-3.0% faster with 30 than with 28), delay+class ones the wider of it and "
                 "--class-sieve-bits (2^48-number class units 4.8% faster with 30 bits than with 25); 0: no wide "
                 "units. Its tables are built at the start (30 bits: about 42 s on two cores, 3.0 GB at the peak and "
                 "1.6 GB kept; 28 bits: 12 s and 1 GB) only when --unit-size reaches that size or stored units have "
                 "the width")
      ->capture_default_str();
  app.add_option("--delay-sieve-min-numbers", delay_sieve_min_text,
                 "Units of at least this many numbers are wide (--delay-sieve-bits)")
      ->capture_default_str();
  app.add_option("--stats-unit-size", stats_unit_size_text,
                 "Default numbers per stats unit (whole batches, at most 2^20 batches per unit)")
      ->capture_default_str();
  app.add_option("--stats-audit-batches", stats_audit_batches,
                 "Batches of every stats result recomputed on the server (first, last, the rest at random)")
      ->capture_default_str();
  app.add_option("--metrics-listen", metrics_listen,
                 "Serve Prometheus /metrics on this address (host:port; port 0 picks one); none: not served");
  app.add_option("--http-listen", http_listen,
                 "Serve the web dashboard and its JSON API on this address (host:port; port 0 picks one; "
                 "the --token-file token is required there too); none: not served");
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error, off")->capture_default_str();
  app.add_flag("--allow-test-builds", allow_test_builds,
               "Let workers of a test, debug or GPU-mutation build register (they say so at registration); "
               "for tests only: their results may be wrong by design");
  CLI11_PARSE(app, argc, argv);

  auto logger = spdlog::stderr_color_mt("collatz-server");
  logger->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%^%l%$] %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(log_level));

  u128 unit_size = 0;
  if (Status st = ParseU128(unit_size_text, &unit_size); !st.ok() || unit_size == 0) {
    spdlog::error("bad --unit-size: {}", st.ok() ? "must be positive" : st.message());
    return 2;
  }
  u128 class_unit_size = 0;
  if (Status st = ParseU128(class_unit_size_text, &class_unit_size); !st.ok() || class_unit_size == 0) {
    spdlog::error("bad --class-unit-size: {}", st.ok() ? "must be positive" : st.message());
    return 2;
  }
  u128 stats_unit_size = 0;
  if (Status st = ParseU128(stats_unit_size_text, &stats_unit_size); !st.ok() || stats_unit_size == 0) {
    spdlog::error("bad --stats-unit-size: {}", st.ok() ? "must be positive" : st.message());
    return 2;
  }
  u128 referee_max = 0;
  if (Status st = ParseU128(referee_max_text, &referee_max); !st.ok() || referee_threads < 1) {
    spdlog::error("bad --referee-max-numbers or --referee-threads: {}", st.ok() ? "threads must be >= 1" : st.message());
    return 2;
  }
  // The wide units of each kind: a width (0: the base one) and the size from which they get it.
  u128 class_sieve_min = 0, delay_sieve_min = 0;
  for (auto [kind, bits, zero, text, min] :
       {std::tuple{"class", class_sieve_bits, "one width", &class_sieve_min_text, &class_sieve_min},
        std::tuple{"delay", delay_sieve_bits, "the base width", &delay_sieve_min_text, &delay_sieve_min}}) {
    if (bits != 0 && !engines::IsUnitSieveBits(bits)) {
      spdlog::error("--{}-sieve-bits must be 0 ({}) or 1 to {}", kind, zero, engines::kMaxUnitSieveBits);
      return 2;
    }
    if (Status st = ParseU128(*text, min); !st.ok() || *min == 0) {
      spdlog::error("bad --{}-sieve-min-numbers: {}", kind, st.ok() ? "must be positive" : st.message());
      return 2;
    }
  }
  if (stats_audit_batches < 1) {
    spdlog::error("--stats-audit-batches must be at least 1");
    return 2;
  }
  if ((tls_cert.empty()) != (tls_key.empty())) {
    spdlog::error("--tls-cert and --tls-key go together");
    return 2;
  }
  if (audit_fraction < 0 || audit_fraction > 1 || lease_seconds <= 0 || max_failures < 1) {
    spdlog::error("--audit-fraction must be in [0, 1], --lease-seconds > 0, --max-failures >= 1");
    return 2;
  }
  std::string token;
  if (Status st = client::LoadToken(token_file, &token); !st.ok()) {
    spdlog::error("{}", st.message());
    return 2;
  }

  // Signals are taken by one thread with sigwait; block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::shared_ptr<const SearchTables> tables;
  if (Status st = engines::BuildSearchTables(sieve_file, sieve_bits, &tables); !st.ok()) {
    spdlog::error("building tables: {}", st.message());
    return 1;
  }
  std::unique_ptr<CoordinatorStore> store;
  if (Status st = CoordinatorStore::Open(db_path, &store); !st.ok()) {
    spdlog::error("{}", st.message());
    return 1;
  }
  SystemClock clock;
  CoordinatorOptions options;
  options.default_unit_size = unit_size;
  options.default_class_unit_size = class_unit_size;
  options.lease_duration_ms = static_cast<int64_t>(lease_seconds * 1000);
  options.max_failures = max_failures;
  options.audit_fraction = audit_fraction;
  ParseDoubleCheck(double_check_text, &options.double_check);  // CLI::IsMember checked it
  options.adaptive_floor = adaptive_floor;
  options.allow_test_builds = allow_test_builds;
  options.merge_interval_ms = 1000;
  options.default_stats_unit_size = stats_unit_size;
  options.stats_audit_batches = stats_audit_batches;
  options.referee_max_numbers = referee_max;
  options.referee_threads = referee_threads;
  options.class_sieve_bits = class_sieve_bits;
  options.class_sieve_min_numbers = class_sieve_min;
  options.delay_sieve_bits = delay_sieve_bits;
  options.delay_sieve_min_numbers = delay_sieve_min;
  // Other widths (the class width, the delay width, widths stored with units): generated on
  // the host (a 25-bit sieve in about a second, 30 bits in about 40 s on two cores), sharing
  // the base tables' step and tail tables, without the CPU engine's mod-9 offset table: the
  // server counts and checks results with the sieve alone, and only its re-runs of small
  // disputed units (Coordinator::Complete) search, adding it then (1.7 GB less at 30 bits).
  options.build_tables = [delay = tables->delay](int bits, std::shared_ptr<const SearchTables>* out) {
    return engines::BuildSearchTables("", bits, out, delay, /*cpu_offsets=*/false);
  };
  std::unique_ptr<Coordinator> coordinator;
  if (grpc::Status st = Coordinator::Open(std::move(store), tables, &clock, options, &coordinator); !st.ok()) {
    spdlog::error("{}", st.error_message());
    return 1;
  }
  // The stored tokens (collatzctl tokens), on a connection of their own; the database is
  // migrated by now.
  std::unique_ptr<TokenStore> token_store;
  if (Status st = TokenStore::Open(db_path, &token_store); !st.ok()) {
    spdlog::error("{}", st.message());
    return 1;
  }
  TokenAuth auth(token, token_store.get(), &clock);
  for (const std::string* address : {&listen, &http_listen}) {
    if (address->empty() || IsLoopbackAddress(*address) || auth.enabled()) continue;
    if (!insecure) {
      spdlog::error("refusing to listen on {} without a token: anyone who can reach that port could submit, cancel, "
                    "import or feed results. Give --token-file (a shared token; then collatzctl tokens add issues one "
                    "per host), listen on loopback (127.0.0.1), or pass --insecure on a network you trust",
                    *address);
      return 2;
    }
    spdlog::warn("listening on {} with no token (--insecure): anyone who can reach it may change this server",
                 *address);
  }

  // Destroyed before the coordinator: a scrape reads it.
  std::unique_ptr<ServerMetrics> metrics;
  if (!metrics_listen.empty()) {
    metrics = std::make_unique<ServerMetrics>(coordinator.get());
    if (Status st = metrics->Listen(metrics_listen); !st.ok()) {
      spdlog::error("{}", st.message());
      return 1;
    }
    spdlog::info("metrics on {} (port {})", metrics_listen, metrics->port());
  }

  // The dashboard reads the coordinator and, on a read-only connection, the database;
  // destroyed before the coordinator.
  std::unique_ptr<DashboardData> dashboard_data;
  std::unique_ptr<DashboardServer> dashboard;
  if (!http_listen.empty()) {
    std::unique_ptr<DashboardReader> reader;
    if (Status st = DashboardReader::Open(db_path, &reader); !st.ok()) {
      spdlog::error("{}", st.message());
      return 1;
    }
    dashboard_data = std::make_unique<DashboardData>(coordinator.get(), std::move(reader), &clock, DashboardOptions{});
    dashboard = std::make_unique<DashboardServer>(dashboard_data.get(), &auth);
    if (Status st = dashboard->Listen(http_listen); !st.ok()) {
      spdlog::error("{}", st.message());
      return st.code() == Status::Code::kInvalidArgument ? 2 : 1;
    }
    spdlog::info("dashboard on http://{} (port {}){}", http_listen, dashboard->port(),
                 auth.enabled() ? ", token required" : "");
  }

  WorkerService worker_service(coordinator.get(), &auth);
  AdminService admin_service(coordinator.get(), &auth);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  std::shared_ptr<grpc::ServerCredentials> creds = grpc::InsecureServerCredentials();
  if (!tls_cert.empty()) {
    bool ok_cert = false, ok_key = false;
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({ReadFile(tls_key, &ok_key), ReadFile(tls_cert, &ok_cert)});
    if (!ok_cert || !ok_key) {
      spdlog::error("cannot read the TLS certificate or key");
      return 2;
    }
    creds = grpc::SslServerCredentials(ssl);
  }
  int port = 0;
  builder.AddListeningPort(listen, creds, &port);
  builder.SetMaxReceiveMessageSize(16 << 20);
  builder.RegisterService(&worker_service);
  builder.RegisterService(&admin_service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    spdlog::error("cannot listen on {}", listen);
    return 1;
  }
  spdlog::info("collatz-server listening on {} (port {}){}{}, sieve {} bits (class units of {}+ numbers: {} bits, "
               "delay-only units of {}+: {} bits), unit size {} (delay+class units {}), lease {} s, double check {}{}",
               listen, port, tls_cert.empty() ? "" : " with TLS", auth.enabled() ? ", token required" : ", no token",
               coordinator->sieve_bits(), ToDecimal(class_sieve_min), coordinator->class_sieve_bits(),
               ToDecimal(delay_sieve_min), coordinator->delay_sieve_bits(),
               ToDecimal(unit_size), ToDecimal(coordinator->default_unit_size(Kinds::kDelayAndClass)), lease_seconds, double_check_text,
               options.double_check == DoubleCheck::kNone ? " (audits " + std::to_string(audit_fraction) + ")" : "");
  if (options.double_check != DoubleCheck::kNone) {
    spdlog::info("results count once checked by a worker of another host, GPU and token: give each host its own "
                 "token (collatzctl tokens add); a fleet of one host checks nothing (--double-check none)");
  }
  if (allow_test_builds) spdlog::warn("--allow-test-builds: workers of test, debug and mutation builds may register");
  (void)platform::NotifyReady("listening on " + listen + " (port " + std::to_string(port) + ")");  // systemd Type=notify

  // Expired leases go back to the queue even when nobody asks for work.
  std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;
  std::thread sweeper([&] {
    std::unique_lock<std::mutex> lock(mu);
    int seconds = 0;
    while (!cv.wait_for(lock, std::chrono::seconds(1), [&] { return stopping; })) {
      lock.unlock();
      coordinator->ExpireLeases();
      // Tokens' last use: once a minute, one transaction for all of them.
      if (++seconds % 60 == 0) {
        if (Status st = auth.FlushLastUsed(); !st.ok()) spdlog::warn("tokens' last use: {}", st.message());
      }
      if (grpc::Status st = coordinator->FlushMerged(/*fresh=*/false); !st.ok()) spdlog::error("{}", st.error_message());
      (void)platform::WatchdogPing();  // the sweeper is the server's main loop: stuck here, systemd restarts it
      lock.lock();
    }
  });

  int sig = 0;
  sigwait(&signals, &sig);
  spdlog::info("signal {}: no new leases; finishing in-flight calls", sig);
  (void)platform::NotifyStopping("finishing in-flight calls");
  coordinator->StopLeasing();
  server->GetHealthCheckService()->SetServingStatus(false);
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(30));
  {
    std::lock_guard<std::mutex> lock(mu);
    stopping = true;
  }
  cv.notify_all();
  sweeper.join();
  if (Status st = auth.FlushLastUsed(); !st.ok()) spdlog::warn("tokens' last use: {}", st.message());
  metrics.reset();
  dashboard.reset();
  dashboard_data.reset();
  coordinator.reset();  // closes the database
  spdlog::info("collatz-server stopped cleanly");
  return 0;
}
