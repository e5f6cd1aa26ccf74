#include "worker/worker_app.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "client/channel.h"
#include "client/worker_client.h"
#include "core/u128.h"
#include "engines/engine_factory.h"
#include "platform/systemd_notify.h"
#include "worker/build_flavour.h"
#include "worker/build_version.h"
#include "worker/gpu_discovery.h"
#include "worker/lease_loop.h"
#include "worker/log_setup.h"
#include "worker/metrics.h"
#include "worker/result_sender.h"
#include "worker/self_test.h"
#include "worker/spool.h"
#include "worker/stats_engines.h"
#include "worker/unit_engines.h"

namespace collatz::worker {

namespace {

constexpr int kExitFatal = 1;
constexpr int kExitUsage = 2;

std::string HostName() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "unknown-host";
  return buf;
}

std::unique_ptr<StatsEngine> WrapStats(const WorkerSeams& seams, std::unique_ptr<StatsEngine> engine) {
  return seams.wrap_stats ? seams.wrap_stats(std::move(engine)) : std::move(engine);
}

struct Device {
  std::string label;  // "cpu", "gpu0"
  std::string description;
  std::unique_ptr<SearchEngine> engine;  // the startup width's
  std::unique_ptr<UnitEngines> engines;  // this one and one per other unit width
  std::unique_ptr<StatsEngine> stats;    // units of stats jobs
};

// A worker's search tables of `bits` (or of `sieve_file`): a wide generated sieve is built on
// `gpu` (seconds on the host otherwise), else on the host. `cpu_offsets`: the tables also serve
// the CPU engine (the startup tables, whose CPU path every worker self-tests), so they get the
// host's mod-9 offset table; a GPU's tables of another unit width do without it (only the CPU
// engine reads it, not the GPU engine, its host finish or the self-test's reference path; at
// 30 bits it is 1.7 GB of host memory and seconds a worker process). `delay`: step and tail
// tables to share (null: new ones, which always carry the offset table).
Status BuildWorkerTables(const GpuInfo* gpu, const std::string& sieve_file, int bits,
                         std::shared_ptr<const FastDelay> delay, bool cpu_offsets,
                         std::shared_ptr<const SearchTables>* out) {
  if (gpu != nullptr && engines::BuildsSieveOnGpu(engines::Backend::kGpu, sieve_file, bits)) {
    std::shared_ptr<const SearchTables> built;
    Status st = engines::BuildGpuSearchTables(gpu->index, bits, std::move(delay), &built);
    if (st.ok()) *out = cpu_offsets ? SearchTables::WithCpuOffsets(std::move(built)) : std::move(built);
    return st;
  }
  return engines::BuildSearchTables(sieve_file, bits, out, std::move(delay), cpu_offsets);
}

// The tables of unit widths other than the startup one (Unit.sieve_bits), shared by the
// devices: the first device that needs a width builds them (on its GPU when that width is
// built there, else on the host; the CPU's offset table only for the CPU), sharing the startup
// tables' step and tail tables. The CPU asking for tables a GPU built gets them with the
// offset table added.
class WidthTables {
 public:
  explicit WidthTables(std::shared_ptr<const FastDelay> delay) : delay_(std::move(delay)) {}

  // gpu: the device asking (null: the CPU).
  Status Get(int bits, const GpuInfo* gpu, std::shared_ptr<const SearchTables>* out) {
    std::lock_guard<std::mutex> lock(mu_);  // another device waits rather than build it twice
    auto it = by_bits_.find(bits);
    if (it != by_bits_.end()) {
      if (gpu == nullptr) it->second = SearchTables::WithCpuOffsets(it->second);  // itself where it has them
      *out = it->second;
      return Status::Ok();
    }
    const Status st = BuildWorkerTables(gpu, "", bits, delay_, /*cpu_offsets=*/gpu == nullptr, out);
    if (st.ok()) by_bits_[bits] = *out;
    return st;
  }

 private:
  const std::shared_ptr<const FastDelay> delay_;
  std::mutex mu_;
  std::map<int, std::shared_ptr<const SearchTables>> by_bits_;
};

// The largest unit a CPU worker leases by default (--max-unit-numbers auto).
constexpr u128 kCpuWorkerMaxUnitNumbers = static_cast<u128>(1) << 40;

}  // namespace

int WorkerMain(int argc, char** argv, const WorkerSeams& seams) {
  engines::PrepareProcessForGpu();
  CLI::App app{"collatz-worker: searches work units of a collatz-server on this machine's GPUs (or CPU)"};
  std::string server_address, token_file, tls_ca, gpus_flag = "all", backend = "auto", spool_dir = "collatz-spool";
  std::string sieve_file, log_format = "text", log_level = "info", metrics_listen, host_name;
  std::string max_unit_text = "auto";
  int threads = 0, sieve_bits = kDefaultSieveBits, max_idle_seconds = 0;
  int own_table_bits = engines::kDaemonOwnTableBits;
  double grace_seconds = 60, heartbeat_seconds = 0, prefetch_fraction = 0.5, backoff_cap_seconds = 30;
  bool skip_self_test = false, validate_only = false;
  app.add_option("--server", server_address, "Coordinator address (HOST:PORT)")->required();
  app.add_option("--token-file", token_file, "File holding the access token (else $COLLATZ_TOKEN)");
  app.add_option("--tls-ca", tls_ca, "PEM root certificate: connect with TLS");
  app.add_option("--host-name", host_name,
                 "The host name this worker reports (default: the system's); checks of a result never come from "
                 "the same host, so each machine needs a name of its own");
  app.add_option("--gpus", gpus_flag, "all, or indices and/or UUIDs: 0,2 or GPU-8d1c...")->capture_default_str();
  app.add_option("--backend", backend, "gpu, cpu or auto (GPUs when there are any)")->capture_default_str();
  app.add_option("--threads", threads, "CPU backend threads (0: all cores)")->capture_default_str();
  app.add_option("--spool", spool_dir, "Directory for finished results not yet acknowledged")->capture_default_str();
  app.add_option("--sieve", sieve_file, "Sieve file (collatz-sieve); else a generated --sieve-bits sieve");
  app.add_option("--sieve-bits", sieve_bits, "Width of the generated sieve (must equal the server's)")->capture_default_str();
  app.add_option("--gpu-own-table-bits", own_table_bits,
                 "GPU: the engine's own record table (below 2^B, built once) for units leased without one; 0: none")
      ->check(CLI::Range(0, 48))
      ->capture_default_str();
  app.add_option("--log-format", log_format, "text or json")->capture_default_str();
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")->capture_default_str();
  app.add_option("--metrics-listen", metrics_listen, "Serve Prometheus /metrics on ADDR (e.g. 0.0.0.0:9464)");
  app.add_option("--grace-seconds", grace_seconds, "On SIGTERM/SIGINT: time to finish running units before releasing them")
      ->capture_default_str();
  app.add_option("--heartbeat-seconds", heartbeat_seconds, "Heartbeat interval (0: a quarter of the server's lease)")
      ->capture_default_str();
  app.add_option("--prefetch-fraction", prefetch_fraction, "Lease the next unit when this much of the current is done")
      ->capture_default_str();
  app.add_option("--backoff-cap-seconds", backoff_cap_seconds, "Longest wait between retries while the server is away")
      ->capture_default_str();
  app.add_option("--max-idle-seconds", max_idle_seconds, "Exit 0 after this long without work (0: never)")
      ->capture_default_str();
  app.add_option("--max-unit-numbers", max_unit_text,
                 "Lease no search unit or check larger than this: auto (GPU: any; CPU: 2^40), any, or N")
      ->capture_default_str();
  app.add_flag("--skip-self-test", skip_self_test, "Do not run the startup known-answer test (not recommended)");
  app.add_flag("--validate-only", validate_only, "Check the flags and the token file, then exit 0 (deployment checks)");
  const std::string build_flavour = BuildFlavour(ThisBuild(seams.test_binary));
  const std::string binary_version = VersionWithFlavour(COLLATZ_WORKER_BINARY_VERSION, build_flavour);
  app.set_version_flag("--version", binary_version,
                       "Print the version (the commit built from, and the flavour of a test, debug or mutation "
                       "build) and exit");
  if (seams.add_flags) seams.add_flags(&app);
  CLI11_PARSE(app, argc, argv);

  if (Status st = SetUpLogging(log_format, log_level); !st.ok()) {
    std::fprintf(stderr, "collatz-worker: %s\n", st.message().c_str());
    return kExitUsage;
  }
  if (!build_flavour.empty()) {
    spdlog::warn("{} is a {} build: not fit to search a campaign (servers refuse it without --allow-test-builds)",
                 binary_version, build_flavour);
  }
  if (backend != "gpu" && backend != "cpu" && backend != "auto") {
    spdlog::error("--backend must be gpu, cpu or auto, not {}", backend);
    return kExitUsage;
  }
  if (grace_seconds < 0 || prefetch_fraction < 0 || prefetch_fraction > 1 || threads < 0 || backoff_cap_seconds <= 0) {
    spdlog::error("--grace-seconds >= 0, --prefetch-fraction in [0, 1], --threads >= 0, --backoff-cap-seconds > 0");
    return kExitUsage;
  }
  // auto: a CPU backend leases nothing it would hold for days (a GPU campaign's units of
  // 2^52 take an H200 two minutes and two CPU cores about two months; 2^40: about half an hour).
  u128 max_unit_numbers = 0;
  if (max_unit_text != "auto" && max_unit_text != "any") {
    if (Status st = ParseU128(max_unit_text, &max_unit_numbers); !st.ok() || max_unit_numbers == 0) {
      spdlog::error("--max-unit-numbers must be auto, any or a positive count (2^40), not {}", max_unit_text);
      return kExitUsage;
    }
  }
  std::string token;
  if (Status st = client::LoadToken(token_file, &token); !st.ok()) {
    spdlog::error("{}", st.message());
    return kExitUsage;
  }
  if (validate_only) {
    // The devices the backend would use: GPUs for gpu and auto, threads for cpu.
    const std::string devices = backend == "cpu" ? "threads " + (threads == 0 ? std::string("all cores") : std::to_string(threads))
                                                 : "gpus " + gpus_flag;
    std::printf("collatz-worker: flags valid (server %s, backend %s, %s, spool %s)\n", server_address.c_str(),
                backend.c_str(), devices.c_str(), spool_dir.c_str());
    return 0;
  }

  // Signals go to one thread (sigwait); block them before any other thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ShutdownState shutdown;
  std::atomic<bool> exiting{false};
  std::thread signal_thread([&] {
    for (int count = 0;; ++count) {
      int sig = 0;
      sigwait(&signals, &sig);
      if (exiting.load()) return;
      if (count == 0) {
        spdlog::info("signal {}: taking no new work; running units get {} s to finish, then are released", sig,
                     grace_seconds);
        shutdown.grace_deadline_ms = SteadyNowMs() + static_cast<int64_t>(grace_seconds * 1000);
        shutdown.stop_taking_work = true;
        (void)platform::NotifyStopping("draining");
      } else {
        spdlog::warn("signal {} again: releasing running units now", sig);
        shutdown.grace_deadline_ms = SteadyNowMs();
      }
    }
  });
  // systemd watchdog (WatchdogSec=): pinged while no lane hit a fatal error.
  platform::WatchdogPinger watchdog([&] { return !shutdown.fatal.load(); });
  auto finish = [&](int code) {
    exiting = true;
    pthread_kill(signal_thread.native_handle(), SIGTERM);
    signal_thread.join();
    spdlog::info("collatz-worker exits with status {}", code);
    spdlog::shutdown();
    return code;
  };

  // The engines.
  std::string driver;
  std::vector<GpuInfo> gpus;
  if (backend != "cpu") {
    std::vector<GpuInfo> visible = DiscoverGpus(&driver);
    if (Status st = SelectGpus(gpus_flag, visible, &gpus); !st.ok()) {
      spdlog::error("{}", st.message());
      return finish(kExitUsage);
    }
    spdlog::info("{} GPU(s) visible{}, {} selected{}", visible.size(), BuildHasGpu() ? "" : " (this build has no CUDA)",
                 gpus.size(), driver.empty() ? "" : ", driver " + driver);
    if (backend == "gpu" && gpus.empty()) {
      spdlog::error("--backend gpu: no usable GPU{}", BuildHasGpu() ? "" : " (this build has no CUDA engine)");
      return finish(kExitFatal);
    }
  }
  const bool use_gpu = !gpus.empty();
  std::shared_ptr<const SearchTables> tables;
  const Status tables_st = BuildWorkerTables(use_gpu ? &gpus.front() : nullptr, sieve_file, sieve_bits, nullptr,
                                             /*cpu_offsets=*/true, &tables);
  if (!tables_st.ok()) {
    spdlog::error("search tables: {}", tables_st.ToString());
    return finish(kExitFatal);
  }
  spdlog::info("sieve: {} bits, {} odd residues{}", tables->sieve->bits(), tables->sieve->size(),
               sieve_file.empty() ? " (generated)" : " from " + sieve_file);
  // Units of another width (Unit.sieve_bits) get an engine of their own on each device, built
  // at the first such unit and self-tested like these.
  WidthTables width_tables(tables->delay);
  auto self_test = [skip_self_test](bool gpu) -> UnitEngines::SelfTest {
    return [skip_self_test, gpu](SearchEngine& engine, const SearchTables& t, std::string* summary) {
      if (skip_self_test) {
        *summary = "skipped (--skip-self-test)";
        return Status::Ok();
      }
      // As the startup engines' below: a GPU's production-kind case takes 2^40 numbers.
      return gpu ? RunSelfTest(engine, t, summary, Pow2(40)) : RunSelfTest(engine, t, summary);
    };
  };

  // The CPU path is always tested: it is the CPU engine, and the GPU engine's host finish.
  std::vector<Device> devices;
  {
    Device cpu{"cpu", "", nullptr, nullptr, WrapStats(seams, MakeCpuStatsEngine(tables->delay, threads))};
    (void)engines::MakeEngine(engines::Backend::kCpu, tables, threads, &cpu.engine);
    cpu.description = cpu.engine->Describe();
    std::string summary;
    Status st = skip_self_test ? Status::Ok() : RunSelfTest(*cpu.engine, *tables, &summary);
    if (!st.ok()) {
      spdlog::error("self-test FAILED on the CPU path ({}): {}; refusing to work", cpu.description, st.message());
      return finish(kExitFatal);
    }
    if (!skip_self_test) spdlog::info("self-test passed on the CPU path ({}): {}", cpu.description, summary);
    if (!use_gpu) {
      cpu.engines = std::make_unique<UnitEngines>(
          "cpu", tables->sieve->bits(), cpu.engine.get(),
          [&width_tables, threads](int bits, std::unique_ptr<SearchEngine>* engine,
                                   std::shared_ptr<const SearchTables>* t) {
            Status st = width_tables.Get(bits, nullptr, t);
            if (st.ok()) st = engines::MakeEngine(engines::Backend::kCpu, *t, threads, engine);
            return st;
          },
          self_test(false));
      devices.push_back(std::move(cpu));
    }
  }
  client::WorkerIdentity identity;
  for (const GpuInfo& g : gpus) {
    Device d{"gpu" + std::to_string(g.index), g.model + " " + g.uuid, nullptr, nullptr, nullptr};
    // Stats units on this GPU when the build has the GPU stats engine, else on the CPU.
    if (!MakeGpuStatsEngine(g.index, tables->delay, threads, &d.stats).ok()) d.stats = MakeCpuStatsEngine(tables->delay, threads);
    d.stats = WrapStats(seams, std::move(d.stats));
    Status st = engines::MakeEngine(engines::Backend::kGpu, tables, threads, &d.engine, g.index, own_table_bits);
    if (st.ok()) spdlog::debug("GPU {} engine set-up: {}", g.index, d.engine->SetupNote());
    std::string summary;
    // A GPU's production-kind case takes 2^40 numbers (its residue groups and walks).
    if (st.ok() && !skip_self_test) st = RunSelfTest(*d.engine, *tables, &summary, Pow2(40));
    if (!st.ok()) {
      spdlog::error("GPU {} ({}) REFUSED: self-test failed: {}", g.index, d.description, st.message());
      continue;
    }
    if (!skip_self_test) spdlog::info("self-test passed on GPU {} ({}): {}", g.index, d.description, summary);
    d.engines = std::make_unique<UnitEngines>(
        d.label, tables->sieve->bits(), d.engine.get(),
        [&width_tables, threads, own_table_bits, g](int bits, std::unique_ptr<SearchEngine>* engine,
                                                    std::shared_ptr<const SearchTables>* t) {
          Status st = width_tables.Get(bits, &g, t);
          if (st.ok()) st = engines::MakeEngine(engines::Backend::kGpu, *t, threads, engine, g.index, own_table_bits);
          return st;
        },
        self_test(true));
    identity.gpus.emplace_back(g.model, g.uuid);
    devices.push_back(std::move(d));
  }
  if (devices.empty()) {
    spdlog::error("no GPU passed its self-test; refusing to work");
    return finish(kExitFatal);
  }

  WorkerMetrics metrics;
  if (!metrics_listen.empty()) {
    if (Status st = metrics.Listen(metrics_listen); !st.ok()) {
      spdlog::error("{}", st.message());
      return finish(kExitFatal);
    }
    spdlog::info("metrics on {} (port {})", metrics_listen, metrics.port());
  }
  std::unique_ptr<Spool> spool;
  if (Status st = Spool::Open(spool_dir, &spool); !st.ok()) {
    spdlog::error("spool: {}", st.ToString());
    return finish(kExitFatal);
  }

  std::shared_ptr<grpc::Channel> channel;
  if (Status st = client::MakeChannel(server_address, tls_ca, &channel); !st.ok()) {
    spdlog::error("{}", st.message());
    return finish(kExitUsage);
  }
  identity.host = host_name.empty() ? HostName() : host_name;
  if (Status st = spool->InstanceId(&identity.instance_id); !st.ok()) {
    spdlog::error("spool: {}", st.ToString());
    return finish(kExitFatal);
  }
  identity.driver = driver;
  identity.binary_version = binary_version;
  identity.build_flavour = build_flavour;
  identity.backend = use_gpu ? "gpu" : "cpu";
  identity.sieve_bits = tables->sieve->bits();
  identity.unit_sieve_bits = true;  // each lane searches a unit with the engine of its width
  if (seams.adjust_identity) seams.adjust_identity(&identity);
  client::WorkerClient connection(channel, token, identity);
  if (max_unit_text == "auto" && !use_gpu) max_unit_numbers = kCpuWorkerMaxUnitNumbers;
  connection.set_max_unit_numbers(max_unit_numbers);
  if (max_unit_numbers != 0) {
    spdlog::info("leasing search units and checks of at most {} numbers (--max-unit-numbers)", ToDecimal(max_unit_numbers));
  }

  BackoffOptions backoff;
  backoff.cap = std::chrono::milliseconds(static_cast<int64_t>(backoff_cap_seconds * 1000));
  {
    Backoff retry(backoff);
    bool logged = false;
    for (;;) {
      client::Registration reg;
      grpc::Status st = connection.Register(&reg);
      if (st.ok()) {
        const auto wide = [&](int bits, const char* what) {
          return bits != 0 && bits != reg.server_sieve_bits
                     ? std::string(", wide ") + what + " units of " + std::to_string(bits) +
                           " bits (an engine of that width is built at the first)"
                     : std::string();
        };
        spdlog::info("registered with {} as worker {} ({} on {}, {} device(s)); lease {} ms; units of {} bits{}{}",
                     server_address, reg.worker_id, identity.backend, identity.host, devices.size(),
                     reg.lease_duration_ms, reg.server_sieve_bits, wide(reg.server_class_sieve_bits, "class"),
                     wide(reg.server_delay_sieve_bits, "delay-only"));
        (void)platform::NotifyReady("registered with " + server_address + " as worker " + std::to_string(reg.worker_id));
        break;
      }
      if (!client::IsTransient(st)) {
        spdlog::error("the server refuses registration: {}", client::Describe(st));
        return finish(kExitFatal);
      }
      if (!logged) spdlog::warn("cannot reach {} ({}); retrying with backoff", server_address, client::Describe(st));
      logged = true;
      if (!SleepUnlessStopped(retry.Next(), shutdown.stop_taking_work)) {
        spdlog::info("stopped before registering; {} result(s) stay in the spool", spool->List().size());
        return finish(0);
      }
    }
  }

  ResultSender sender(spool.get(), &connection, &metrics, backoff);
  if (!sender.Drain(shutdown.stop_taking_work)) {
    spdlog::info("stopped while re-sending the spool; {} result(s) stay in it", spool->List().size());
    return finish(0);
  }
  sender.Start();

  std::unique_ptr<SpoolWriter> wrapped_spool = seams.wrap_spool ? seams.wrap_spool(spool.get()) : nullptr;
  SpoolWriter* spool_writer = wrapped_spool != nullptr ? wrapped_spool.get() : spool.get();
  std::vector<std::unique_ptr<LeaseLoop>> loops;
  for (Device& d : devices) {
    LeaseLoopOptions o;
    o.device = d.label;
    o.prefetch_fraction = prefetch_fraction;
    o.heartbeat_interval = std::chrono::milliseconds(static_cast<int64_t>(heartbeat_seconds * 1000));
    o.max_idle_seconds = max_idle_seconds;
    o.backoff = backoff;
    loops.push_back(std::make_unique<LeaseLoop>(d.engines.get(), d.stats.get(), &connection, spool_writer, &sender,
                                                &metrics, &shutdown, o));
  }
  for (auto& loop : loops) loop->Start();
  for (auto& loop : loops) loop->Join();
  const bool all_gave_up = std::all_of(loops.begin(), loops.end(), [](const auto& l) { return l->gave_up(); });
  if (all_gave_up) spdlog::error("every device failed unit after unit; exiting");

  // Results still to send get what is left of the grace period (at least a few seconds).
  const int64_t now = SteadyNowMs();
  const int64_t until = std::max(now + 5000, std::min(shutdown.grace_deadline_ms.load(), now + 60000));
  const size_t left = sender.Finish(std::chrono::steady_clock::now() + std::chrono::milliseconds(until - now));
  if (left > 0) spdlog::warn("{} result(s) not yet acknowledged stay in {}; they are sent on the next start", left, spool_dir);
  return finish(shutdown.fatal.load() || all_gave_up ? kExitFatal : 0);
}

}  // namespace collatz::worker
