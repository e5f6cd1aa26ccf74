#include "server/fleet_simulation.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <queue>
#include <sstream>
#include <thread>
#include <vector>

#include "client/worker_client.h"
#include "core/merge.h"
#include "core/sieve.h"

extern char** environ;

namespace collatz::server {

namespace {

using SteadyTime = std::chrono::steady_clock::time_point;

double Seconds(SteadyTime a, SteadyTime b) { return std::chrono::duration<double>(b - a).count(); }

// A free loopback port (the server is told it; a race with another program is harmless
// here: the server then fails to start and the bench says so).
int FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  close(fd);
  return port;
}

struct ProcUsage {
  double cpu_s = 0;  // user + system
  double rss_mb = 0;
};

// /proc/PID/stat: utime and stime (fields 14 and 15, clock ticks) and rss (24, pages).
bool ReadProcUsage(pid_t pid, ProcUsage* out) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  const size_t paren = line.rfind(')');
  if (paren == std::string::npos) return false;
  std::istringstream fields(line.substr(paren + 2));  // from field 3 (state) on
  std::vector<std::string> f;
  for (std::string s; fields >> s;) f.push_back(s);
  if (f.size() < 22) return false;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  out->cpu_s = (std::stod(f[11]) + std::stod(f[12])) / ticks;
  out->rss_mb = std::stod(f[21]) * static_cast<double>(sysconf(_SC_PAGESIZE)) / 1e6;
  return true;
}

struct SimGpu {
  int index = 0;  // in the fleet
  client::WorkerClient* worker = nullptr;
  client::Lease lease;
  bool has_lease = false;
  SteadyTime due;
};

// The sieve of each width the leases name (generated on first use; the client threads
// share them), for the candidate count of a unit.
class SimSieves {
 public:
  // The registered width's sieve is made now, before anything is measured.
  explicit SimSieves(int registered_bits) : registered_bits_(registered_bits) {
    std::lock_guard<std::mutex> lock(mu_);
    Find(registered_bits);
  }
  u128 CountExamined(const client::Lease& lease) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto* s = Find(lease.sieve_bits == 0 ? registered_bits_ : lease.sieve_bits);
    if (s == nullptr) return 0;  // the server then refuses the result
    return collatz::CountExamined(*s, lease.spec.kinds, lease.spec.begin, lease.spec.end);
  }

 private:
  const Sieve* Find(int bits) {
    auto it = sieves_.find(bits);
    if (it == sieves_.end()) {
      std::shared_ptr<const Sieve> sieve;
      if (!Sieve::Generate(bits, &sieve).ok()) return nullptr;
      it = sieves_.emplace(bits, std::move(sieve)).first;
    }
    return it->second.get();
  }

  const int registered_bits_;
  std::mutex mu_;
  std::map<int, std::shared_ptr<const Sieve>> sieves_;
};

// What a real worker reports for a delay-only unit whose numbers all stay at or below the
// floor: no ladder, no open tallies, and the candidates of the unit's sieve (the server
// checks them exactly); the work hash is not computed but fixed by the unit, so that a check
// (--sim-double-check) agrees.
UnitResult EmptyLadderResult(const client::Lease& lease, SimSieves* sieves) {
  UnitResult r;
  r.candidates = static_cast<uint64_t>(std::min<u128>(sieves->CountExamined(lease), UINT64_MAX));
  r.work_hash = Mix64(static_cast<uint64_t>(lease.spec.begin));
  return r;
}

struct Counters {
  std::atomic<uint64_t> completed{0}, accepted{0}, matched{0}, leases{0}, failures{0}, no_unit{0}, drained{0};
  std::atomic<int64_t> max_lag_us{0};
};

// Leases the first unit of every GPU of this thread; false if a call failed.
bool LeaseFirst(std::vector<SimGpu>& gpus, Counters* c) {
  for (SimGpu& g : gpus) {
    bool has = false;
    uint64_t retry = 0;
    if (!g.worker->LeaseUnit(&g.lease, &has, &retry).ok()) {
      ++c->failures;
      return false;
    }
    g.has_lease = has;
    if (has) ++c->leases;
  }
  return true;
}

// Until `end`: at each GPU's due time, complete its unit and lease the next.
void DriveGpus(std::vector<SimGpu>& gpus, SteadyTime end, std::chrono::microseconds interval, SimSieves* sieves,
               Counters* c) {
  auto later = [&](size_t a, size_t b) { return gpus[a].due > gpus[b].due; };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> heap(later);
  for (size_t i = 0; i < gpus.size(); ++i) heap.push(i);
  while (!heap.empty()) {
    const size_t i = heap.top();
    SimGpu& g = gpus[i];
    if (g.due >= end || std::chrono::steady_clock::now() >= end) return;  // a server behind schedule ends it too
    heap.pop();
    std::this_thread::sleep_until(g.due);
    const int64_t lag = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - g.due).count();
    int64_t seen = c->max_lag_us.load();
    while (lag > seen && !c->max_lag_us.compare_exchange_weak(seen, lag)) {
    }
    if (g.has_lease) {
      v1::Disposition d;
      if (g.worker->Complete(g.lease, EmptyLadderResult(g.lease, sieves), interval.count() / 1e6, "simulated", &d).ok()) {
        ++c->completed;
        if (d == v1::DISPOSITION_ACCEPTED) ++c->accepted;
        if (d == v1::DISPOSITION_AUDIT_MATCHED) ++c->matched;
      } else {
        ++c->failures;
      }
    }
    bool has = false;
    uint64_t retry = 0;
    if (g.worker->LeaseUnit(&g.lease, &has, &retry).ok()) {
      g.has_lease = has;
      if (has) ++c->leases; else ++c->no_unit;
    } else {
      g.has_lease = false;
      ++c->failures;
    }
    g.due += interval;
    heap.push(i);
  }
}

// After the measured window: completes the units still leased, so that the database holds
// whole units only (its growth per completion is then exact).
void CompleteOutstanding(std::vector<SimGpu>& gpus, SimSieves* sieves, Counters* c) {
  for (SimGpu& g : gpus) {
    if (!g.has_lease) continue;
    v1::Disposition d;
    if (g.worker->Complete(g.lease, EmptyLadderResult(g.lease, sieves), 1, "simulated", &d).ok() &&
        (d == v1::DISPOSITION_ACCEPTED || d == v1::DISPOSITION_AUDIT_MATCHED)) {
      ++c->drained;
    } else {
      ++c->failures;
    }
    g.has_lease = false;
  }
}

}  // namespace

int RunFleetSimulation(const FleetOptions& o) {
  const int port = FreeLoopbackPort();
  const std::string token_file = o.db + ".token", log_file = o.db + ".server.log";
  std::ofstream(token_file) << "fleet-token\n";
  const std::string listen = "127.0.0.1:" + std::to_string(port);
  std::vector<std::string> args = {o.server_binary, "--db", o.db, "--listen", listen, "--token-file", token_file,
                                   "--sieve-bits", std::to_string(o.sieve_bits), "--log-level", "warn",
                                   // The shared token is no identity: the workers' host names and
                                   // GPU UUIDs keep checks off the finisher's own host.
                                   "--double-check", o.double_check};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, o.server_binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (port == 0 || spawned != 0) {
    std::fprintf(stderr, "cannot start %s on %s\n", o.server_binary.c_str(), listen.c_str());
    return 1;
  }
  auto stop_server = [&] {
    kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  };

  // One channel (connection) per client thread; eight simulated GPUs per registered worker.
  const int worker_count = (o.gpus + o.gpus_per_worker - 1) / o.gpus_per_worker;
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int t = 0; t < o.threads; ++t) {
    grpc::ChannelArguments ca;
    ca.SetInt("grpc.channel_id", t);
    channels.push_back(grpc::CreateCustomChannel(listen, grpc::InsecureChannelCredentials(), ca));
  }
  std::vector<std::unique_ptr<client::WorkerClient>> workers;
  for (int w = 0; w < worker_count; ++w) {
    client::WorkerIdentity id;
    id.host = "sim-host-" + std::to_string(w);
    for (int k = 0; k < o.gpus_per_worker; ++k) id.gpus.emplace_back("simulated GPU", "GPU-sim-" + std::to_string(w) + "-" + std::to_string(k));
    id.backend = "gpu";
    id.binary_version = "coordinator_bench --simulate-gpus";
    id.sieve_bits = o.sieve_bits;
    id.unit_sieve_bits = true;  // each result counts the candidates of its unit's width
    char instance[40];
    std::snprintf(instance, sizeof instance, "%032x", w + 1);
    id.instance_id = instance;
    auto c = std::make_unique<client::WorkerClient>(channels[w % o.threads], "fleet-token", id);
    c->set_accepts_stats(false);
    workers.push_back(std::move(c));
  }
  // The server builds its tables first: wait (at most a minute) until it registers us.
  const auto wait_until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!workers[0]->Register().ok()) {
    if (std::chrono::steady_clock::now() > wait_until || waitpid(pid, nullptr, WNOHANG) != 0) {
      std::fprintf(stderr, "collatz-server did not come up on %s (see %s)\n", listen.c_str(), log_file.c_str());
      stop_server();
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  for (int w = 1; w < worker_count; ++w) {
    if (grpc::Status st = workers[w]->Register(); !st.ok()) {
      std::fprintf(stderr, "register: %s\n", st.error_message().c_str());
      stop_server();
      return 1;
    }
  }

  // GPUs by thread; a worker's GPUs stay in one thread with its channel.
  std::vector<std::vector<SimGpu>> by_thread(o.threads);
  for (int g = 0; g < o.gpus; ++g) {
    SimGpu s;
    s.index = g;
    s.worker = workers[g / o.gpus_per_worker].get();
    by_thread[(g / o.gpus_per_worker) % o.threads].push_back(s);
  }
  Counters counters;
  SimSieves sieves(o.sieve_bits);
  auto run_threads = [&](auto body) {
    std::vector<std::thread> threads;
    for (int t = 0; t < o.threads; ++t) threads.emplace_back([&, t] { body(t); });
    for (auto& th : threads) th.join();
  };
  const auto t_lease = std::chrono::steady_clock::now();
  run_threads([&](int t) { LeaseFirst(by_thread[t], &counters); });
  const double first_leases_s = Seconds(t_lease, std::chrono::steady_clock::now());
  if (counters.failures > 0) {
    std::fprintf(stderr, "leasing the first units failed\n");
    stop_server();
    return 1;
  }

  // Staggered: GPU k of n first completes at start + interval * (k + 1) / n.
  const auto interval = std::chrono::microseconds(static_cast<int64_t>(o.result_interval_s * 1e6));
  const auto start = std::chrono::steady_clock::now();
  for (auto& list : by_thread) {
    for (SimGpu& g : list) g.due = start + interval * (g.index + 1) / o.gpus;
  }
  ProcUsage before{}, after{};
  ReadProcUsage(pid, &before);
  const auto end = start + std::chrono::microseconds(static_cast<int64_t>(o.duration_s * 1e6));
  run_threads([&](int t) { DriveGpus(by_thread[t], end, interval, &sieves, &counters); });
  const double wall = Seconds(start, std::chrono::steady_clock::now());
  const bool alive = ReadProcUsage(pid, &after);
  run_threads([&](int t) { CompleteOutstanding(by_thread[t], &sieves, &counters); });
  const int status = stop_server();
  const uint64_t db_bytes = std::filesystem::exists(o.db) ? std::filesystem::file_size(o.db) : 0;

  const double cpu = after.cpu_s - before.cpu_s, n = static_cast<double>(counters.completed.load());
  const double target = o.gpus / o.result_interval_s;
  std::printf("simulated fleet: %d GPUs (%d workers of %d), one result per GPU every %.1f s = %.0f results/s offered; "
              "%d client threads; units of %s numbers at %s; --double-check %s\n",
              o.gpus, worker_count, o.gpus_per_worker, o.result_interval_s, target, o.threads, ToDecimal(o.unit_size).c_str(),
              ToDecimal(o.begin).c_str(), o.double_check.c_str());
  std::printf("first leases: %d in %.2f s\n", o.gpus, first_leases_s);
  std::printf("measured %.1f s: %.0f completions (%llu accepted, %llu checks agreeing), %.0f results/s sustained (%.0f%% of offered), "
              "%llu leases, %llu without work, %llu failed calls, worst lag behind schedule %.2f s\n",
              wall, n, static_cast<unsigned long long>(counters.accepted.load()),
              static_cast<unsigned long long>(counters.matched.load()), n / wall, 100 * n / wall / target,
              static_cast<unsigned long long>(counters.leases.load()), static_cast<unsigned long long>(counters.no_unit.load()),
              static_cast<unsigned long long>(counters.failures.load()), counters.max_lag_us.load() / 1e6);
  if (!alive) {
    std::fprintf(stderr, "collatz-server died during the run (see %s)\n", log_file.c_str());
    return 1;
  }
  std::printf("collatz-server (pid %d): %.2f CPU s in %.1f s = %.3f cores; %.0f us CPU per result (lease + completion); "
              "RSS %.0f MB; exit status %d\n",
              static_cast<int>(pid), cpu, wall, cpu / wall, n > 0 ? cpu / n * 1e6 : 0.0, after.rss_mb, status);
  // Every unit has its submission rows from the start; a completion adds its lease and
  // result (every lease was completed before the server stopped).
  const double all_completed = n + static_cast<double>(counters.drained.load());
  const double per_submitted = static_cast<double>(o.db_bytes_submitted) / o.units;
  const double per_completion = n > 0 ? (static_cast<double>(db_bytes) - o.db_bytes_submitted) / all_completed : 0;
  const double per_unit = per_submitted + per_completion;
  const double units_per_1e20 = 1e20 / static_cast<double>(o.unit_size);
  std::printf("database: %llu bytes with %d units submitted (%.0f bytes each), %llu after %.0f completions "
              "(+%.0f bytes each, leases included): %.0f bytes per unit, %.0f units and %.2f GB per 10^20 numbers\n",
              static_cast<unsigned long long>(o.db_bytes_submitted), o.units, per_submitted,
              static_cast<unsigned long long>(db_bytes), all_completed, per_completion, per_unit, units_per_1e20,
              per_unit * units_per_1e20 / 1e9);

  // The server re-merges every finished unit (at most once a second, and at most once per
  // 20 times a merge's duration: Coordinator::kMergeCostFactor): the cost of one merge once
  // the finished units of 10^20 numbers are in memory, measured here in this process.
  std::vector<FinishedUnit> finished(static_cast<size_t>(std::ceil(units_per_1e20)));
  for (size_t i = 0; i < finished.size(); ++i) {
    finished[i].begin = o.begin + o.unit_size * i;
    finished[i].end = finished[i].begin + o.unit_size;
    finished[i].kinds = Kinds::kDelay;
    finished[i].result.candidates = static_cast<uint64_t>(o.unit_size / 64);
  }
  const auto m0 = std::chrono::steady_clock::now();
  std::vector<FinishedUnit> inputs = finished;  // MergeInputs copies them out of the unit map
  const MergedRecords merged = MergeRecords(o.imports, inputs);
  std::printf("one merge of %zu finished units (10^20 numbers): %.3f s of one core (the server then merges at most every "
              "20 times that); covered prefix %s\n", finished.size(),
              Seconds(m0, std::chrono::steady_clock::now()), ToDecimal(merged.covered_prefix).c_str());
  return counters.failures == 0 && counters.accepted == counters.completed ? 0 : 1;
}

}  // namespace collatz::server
