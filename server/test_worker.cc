#include "server/test_worker.h"

#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <thread>

#include "client/channel.h"

namespace collatz::server {

TestWorkerStats RunTestWorker(const TestWorkerOptions& options, std::shared_ptr<const SearchTables> tables,
                              const std::atomic<bool>* stop) {
  TestWorkerStats stats;
  std::shared_ptr<grpc::Channel> channel;
  if (!client::MakeChannel(options.address, "", &channel).ok()) return stats;
  client::WorkerIdentity id;
  id.host = options.host;
  id.instance_id = options.instance_id;
  if (id.instance_id.empty()) {
    std::random_device rd;
    char buf[17];
    std::snprintf(buf, sizeof buf, "%08x%08x", rd(), rd());
    id.instance_id = buf;
  }
  id.sieve_bits = tables->sieve->bits();
  id.unit_sieve_bits = !options.one_width;
  client::WorkerClient client(channel, options.token, id, 10000);
  client.set_accepts_stats(false);  // searches only
  CpuEngineOptions eo;
  eo.threads = options.threads;
  std::map<int, std::unique_ptr<CpuEngine>> engines;  // by sieve width
  engines[id.sieve_bits] = std::make_unique<CpuEngine>(tables, eo);
  auto engine_for = [&](int bits, CpuEngine** out) -> Status {
    if (bits == 0 || options.one_width) bits = id.sieve_bits;
    auto it = engines.find(bits);
    if (it == engines.end()) {
      std::shared_ptr<const Sieve> sieve;
      Status st = Sieve::Generate(bits, &sieve);
      std::shared_ptr<const SearchTables> t;
      if (st.ok()) st = SearchTables::FromSieve(std::move(sieve), tables->delay, &t);
      if (!st.ok()) return st;
      it = engines.emplace(bits, std::make_unique<CpuEngine>(std::move(t), eo)).first;
    }
    *out = it->second.get();
    return Status::Ok();
  };
  auto now_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  int64_t idle_since = now_ms();
  bool registered = false;
  while (stop == nullptr || !stop->load()) {
    if (!registered) {
      grpc::Status st = client.Register();
      if (!st.ok()) {
        ++stats.reconnects;
        if (now_ms() - idle_since > 60000) return stats;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      registered = true;
    }
    client::Lease lease;
    bool has_unit = false;
    uint64_t retry_after_ms = 0;
    grpc::Status st = client.LeaseUnit(&lease, &has_unit, &retry_after_ms);
    if (st.error_code() == grpc::StatusCode::NOT_FOUND) {
      registered = false;  // a fresh database: register again
      continue;
    }
    if (st.error_code() == grpc::StatusCode::PERMISSION_DENIED) return stats;  // flagged
    if (!st.ok()) {
      ++stats.reconnects;
      if (now_ms() - idle_since > 60000) return stats;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    if (!has_unit) {
      if (now_ms() - idle_since > options.idle_exit_ms) return stats;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    const auto t0 = std::chrono::steady_clock::now();
    UnitResult result;
    CpuEngine* engine = nullptr;
    Status ss = engine_for(lease.sieve_bits, &engine);
    if (ss.ok()) ss = engine->Search(lease.spec, &result);
    if (!ss.ok()) {
      client.Release(lease, true, ss.message());
      ++stats.errors;
      stats.last_error = "search: " + ss.ToString();
      continue;
    }
    if (options.tamper) options.tamper(&result);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // Retry the completion across a server restart: the same token stays valid.
    for (int attempt = 0; attempt < 600; ++attempt) {
      v1::Disposition d = v1::DISPOSITION_UNSPECIFIED;
      st = client.Complete(lease, result, secs, engine->Describe(), &d);
      if (st.error_code() == grpc::StatusCode::UNAVAILABLE || st.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
        ++stats.reconnects;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      if (st.error_code() == grpc::StatusCode::FAILED_PRECONDITION &&
          st.error_message().find("revoked") != std::string::npos) {
        ++stats.revoked;  // the server's decision (a flagged worker's results go), not this worker's error
      } else if (!st.ok()) {
        ++stats.errors;
        stats.last_error = "complete: " + st.error_message();
        if (st.error_code() == grpc::StatusCode::PERMISSION_DENIED) return stats;
      } else if (d == v1::DISPOSITION_ACCEPTED) {
        ++stats.accepted;
      } else if (d == v1::DISPOSITION_DUPLICATE) {
        ++stats.duplicates;
      } else {
        ++stats.audits;
      }
      break;
    }
    idle_since = now_ms();
    if (options.max_units > 0 && stats.accepted + stats.audits >= options.max_units) return stats;
  }
  return stats;
}

}  // namespace collatz::server
