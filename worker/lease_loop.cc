#include "worker/lease_loop.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <condition_variable>

#include "core/stats_file.h"
#include "proto/wire.h"

namespace collatz::worker {

LeaseLoop::LeaseLoop(UnitEngines* engines, StatsEngine* stats, client::WorkerConnection* connection,
                     SpoolWriter* spool, ResultSender* sender, WorkerMetrics* metrics, ShutdownState* shutdown,
                     LeaseLoopOptions options, const Clock* clock)
    : engines_(engines),
      stats_(stats),
      connection_(connection),
      spool_(spool),
      sender_(sender),
      metrics_(metrics),
      shutdown_(shutdown),
      options_(std::move(options)),
      clock_(clock != nullptr ? clock : &steady_clock_) {}

LeaseLoop::~LeaseLoop() { Join(); }

void LeaseLoop::Start() { thread_ = std::thread([this] { Run(); }); }

void LeaseLoop::Join() {
  if (thread_.joinable()) thread_.join();
}

std::chrono::milliseconds LeaseLoop::HeartbeatInterval() const {
  if (options_.heartbeat_interval.count() > 0) return options_.heartbeat_interval;
  const int64_t quarter = static_cast<int64_t>(connection_->lease_duration_ms() / 4);
  return std::chrono::milliseconds(std::clamp<int64_t>(quarter, 200, 60000));
}

std::string LeaseLoop::Name(const client::Lease& lease) const {
  return options_.device + (lease.stats ? ": stats unit " : ": unit ") + std::to_string(lease.unit_id) +
         (lease.audit ? " (audit)" : "") + " [" +
         ToDecimal(lease.spec.begin) + ", " + ToDecimal(lease.spec.end) + ")";
}

void LeaseLoop::Run() {
  spdlog::info("{}: lease loop started on {}", options_.device, engines_->startup()->Describe());
  while (!shutdown_->stop_taking_work.load() && !shutdown_->fatal.load()) {
    client::Lease lease;
    {
      std::lock_guard<std::mutex> lock(prefetch_mu_);
      if (prefetched_) {
        lease = *prefetched_;
        prefetched_.reset();
      }
    }
    if (lease.token.empty() && !AcquireLease(&lease)) break;
    if (shutdown_->stop_taking_work.load()) {
      // The signal came while the lease was on its way.
      Release(lease, false, "worker shutting down before starting the unit");
      break;
    }
    RunUnit(lease);
    if (consecutive_failures_ >= options_.max_consecutive_failures) {
      gave_up_ = true;
      spdlog::error("{}: {} consecutive units failed; this device takes no more work", options_.device,
                    consecutive_failures_);
      break;
    }
  }
  std::optional<client::Lease> left;
  {
    std::lock_guard<std::mutex> lock(prefetch_mu_);
    left.swap(prefetched_);
  }
  if (left) Release(*left, false, "worker shutting down before starting the unit");
  spdlog::info("{}: lease loop stopped after {} unit(s)", options_.device, units_done_.load());
}

bool LeaseLoop::AcquireLease(client::Lease* out) {
  Backoff backoff(options_.backoff);
  int64_t idle_since = clock_->NowMs();
  bool unreachable_logged = false;
  while (!shutdown_->stop_taking_work.load() && !shutdown_->fatal.load()) {
    bool has_unit = false;
    uint64_t retry_after_ms = 0;
    const uint64_t id = connection_->worker_id();
    grpc::Status st = connection_->LeaseUnit(out, &has_unit, &retry_after_ms);
    if (st.ok()) {
      if (unreachable_logged) spdlog::info("{}: server reachable again", options_.device);
      unreachable_logged = false;
      backoff.Reset();
      if (has_unit) return true;
      if (options_.max_idle_seconds > 0 && clock_->NowMs() - idle_since >= options_.max_idle_seconds * 1000LL) {
        spdlog::info("{}: no work for {} s; stopping (--max-idle-seconds)", options_.device, options_.max_idle_seconds);
        return false;
      }
      const auto wait = std::chrono::milliseconds(std::clamp<uint64_t>(retry_after_ms, 100, 30000));
      spdlog::debug("{}: no work now; asking again in {} ms", options_.device, wait.count());
      SleepUnlessStopped(wait, shutdown_->stop_taking_work);
      continue;
    }
    idle_since = clock_->NowMs();
    if (st.error_code() == grpc::StatusCode::NOT_FOUND) {
      spdlog::warn("{}: the server does not know worker {} ({}); registering again", options_.device, id, client::Describe(st));
      grpc::Status rs = connection_->RegisterAgainIfStill(id);
      if (rs.ok()) {
        spdlog::info("{}: registered as worker {}", options_.device, connection_->worker_id());
        continue;
      }
      st = rs;
    }
    if (client::IsTransient(st)) {
      const auto wait = backoff.Next();
      if (!unreachable_logged) {
        spdlog::warn("{}: cannot lease ({}); retrying with backoff", options_.device, client::Describe(st));
        unreachable_logged = true;
      }
      spdlog::debug("{}: lease attempt {} failed; next in {} ms", options_.device, backoff.attempt(), wait.count());
      SleepUnlessStopped(wait, shutdown_->stop_taking_work);
      continue;
    }
    spdlog::error("{}: the server refuses to lease ({}); stopping", options_.device, client::Describe(st));
    shutdown_->fatal = true;
    return false;
  }
  return false;
}

bool LeaseLoop::TryLease(client::Lease* out) {
  bool has_unit = false;
  uint64_t retry_after_ms = 0;
  grpc::Status st = connection_->LeaseUnit(out, &has_unit, &retry_after_ms);
  return st.ok() && has_unit;
}

void LeaseLoop::Release(const client::Lease& lease, bool failed, const std::string& reason) {
  // A few quick tries; if the server stays away the lease simply expires there.
  Backoff backoff({std::chrono::milliseconds(200), std::chrono::milliseconds(1000)});
  std::atomic<bool> never{false};
  for (int attempt = 0; attempt < 4; ++attempt) {
    grpc::Status st = connection_->Release(lease, failed, reason, 3000);
    if (st.ok()) {
      spdlog::info("{} released{}: {}", Name(lease), failed ? " as failed" : "", reason);
      return;
    }
    if (!client::IsTransient(st)) {
      spdlog::info("{}: release not needed ({})", Name(lease), client::Describe(st));
      return;
    }
    SleepUnlessStopped(backoff.Next(), never);
  }
  spdlog::warn("{}: could not release (server unreachable); the lease will expire on the server", Name(lease));
}

void LeaseLoop::RunUnit(const client::Lease& lease) {
  const uint64_t total = static_cast<uint64_t>(std::min<u128>(lease.spec.end - lease.spec.begin, UINT64_MAX));
  if (lease.stats) {
    spdlog::info("{} started (stats job {}, batch {})", Name(lease), lease.stats_job_id, lease.stats_batch);
  } else {
    spdlog::info("{} started (floor {}, {} known records, {}-bit sieve)", Name(lease), lease.spec.floor,
                 lease.spec.known_records.size(), lease.sieve_bits == 0 ? engines_->startup_bits() : lease.sieve_bits);
  }
  std::atomic<uint64_t> done{0};
  std::atomic<bool> cancel{false};
  std::atomic<CancelReason> reason{CancelReason::kNone};
  std::mutex mu;
  std::condition_variable cv;
  bool search_over = false;

  auto cancel_for = [&](CancelReason r) {
    CancelReason expected = CancelReason::kNone;
    if (reason.compare_exchange_strong(expected, r)) cancel = true;
  };

  std::thread monitor([&] {
    const int64_t interval = HeartbeatInterval().count();
    int64_t next_heartbeat = clock_->NowMs() + interval;
    int64_t next_prefetch = clock_->NowMs();
    bool unreachable_logged = false;
    std::unique_lock<std::mutex> lock(mu);
    while (!search_over) {
      cv.wait_for(lock, options_.poll_interval);
      if (search_over) break;
      lock.unlock();
      const int64_t now = clock_->NowMs();
      if (shutdown_->stop_taking_work.load()) {
        std::optional<client::Lease> left;
        {
          std::lock_guard<std::mutex> pl(prefetch_mu_);
          left.swap(prefetched_);
        }
        if (left) Release(*left, false, "worker shutting down before starting the unit");
        if (clock_->NowMs() >= shutdown_->grace_deadline_ms.load() && reason.load() == CancelReason::kNone) {
          spdlog::warn("{}: grace period over; cancelling at {} of {} numbers", Name(lease), done.load(), total);
          cancel_for(CancelReason::kShutdown);
        }
      } else if (now >= next_prefetch && done.load() >= options_.prefetch_fraction * static_cast<double>(total)) {
        bool have;
        {
          std::lock_guard<std::mutex> pl(prefetch_mu_);
          have = prefetched_.has_value();
        }
        if (!have) {
          client::Lease next;
          if (TryLease(&next)) {
            spdlog::debug("{}: prefetched unit {}", options_.device, next.unit_id);
            std::lock_guard<std::mutex> pl(prefetch_mu_);
            prefetched_ = next;
          } else {
            next_prefetch = now + 2000;
          }
        }
      }
      if (now >= next_heartbeat) {
        next_heartbeat = now + interval;
        bool stop = false;
        grpc::Status st = connection_->Heartbeat(lease, done.load(), &stop);
        if (st.ok() && stop) {
          spdlog::info("{}: the server no longer needs this unit; stopping it", Name(lease));
          cancel_for(CancelReason::kServerStop);
        } else if (!st.ok() && !client::IsTransient(st)) {
          spdlog::warn("{}: lease lost ({}); stopping the unit", Name(lease), client::Describe(st));
          cancel_for(CancelReason::kLeaseLost);
        } else if (!st.ok() && !unreachable_logged) {
          spdlog::warn("{}: heartbeat failed ({}); searching on, the result will be spooled", Name(lease),
                       client::Describe(st));
          unreachable_logged = true;
        } else if (st.ok()) {
          unreachable_logged = false;
        }
        std::optional<client::Lease> next;
        {
          std::lock_guard<std::mutex> pl(prefetch_mu_);
          next = prefetched_;
        }
        if (next) {
          bool next_stop = false;
          grpc::Status ns = connection_->Heartbeat(*next, 0, &next_stop);
          if ((ns.ok() && next_stop) || (!ns.ok() && !client::IsTransient(ns))) {
            std::lock_guard<std::mutex> pl(prefetch_mu_);
            if (prefetched_ && prefetched_->token == next->token) prefetched_.reset();
          }
        }
      }
      lock.lock();
    }
  });

  // A search unit's engine is that of its width: built and self-tested at the first unit of a
  // new one (heartbeats going meanwhile, the time not counted as the unit's); a width it
  // refuses fails the unit.
  SearchEngine* engine = nullptr;
  Status st = lease.stats ? Status::Ok() : engines_->EngineFor(lease.sieve_bits, &engine);
  const int64_t t0 = clock_->NowMs();
  UnitResult result;
  StatsFile stats_file;
  if (st.ok() && lease.stats) {
    stats_file.from = lease.spec.begin;
    stats_file.batch = lease.stats_batch;
    st = stats_ != nullptr ? stats_->Compute(lease.spec.begin, lease.spec.end, lease.stats_batch, &stats_file.batches,
                                             &done, &cancel)
                           : Status::FailedPrecondition("this lane has no stats engine");
  } else if (st.ok()) {
    st = engine->Search(lease.spec, &result, [&](uint64_t d, uint64_t) { done = d; }, &cancel);
  }
  const double seconds = static_cast<double>(clock_->NowMs() - t0) / 1000.0;
  {
    std::lock_guard<std::mutex> lock(mu);
    search_over = true;
  }
  cv.notify_all();
  monitor.join();

  if (st.ok()) {
    consecutive_failures_ = 0;
    v1::CompleteRequest request = client::CompletionFor(lease);
    if (lease.stats) {
      // The stats file encoding carries its own XXH64 checksums (docs/STATS_FORMAT.md).
      request.mutable_stats_result()->set_stats_file(EncodeStatsFile(stats_file));
      request.set_engine(stats_->Describe());
    } else {
      wire::ResultToWire(result, request.mutable_result());
      request.set_engine(engine->Describe());
    }
    request.set_seconds(seconds);
    std::string name;
    Status ws = spool_->Write(request, &name);
    const double numbers = static_cast<double>(lease.spec.end - lease.spec.begin);
    const double rate = seconds > 0 ? numbers / seconds : 0;
    metrics_->AddNumbers(options_.device, numbers);
    metrics_->UnitDone(options_.device, rate);
    units_done_++;
    if (lease.stats) {
      spdlog::info("{} done in {:.3f} s: {:.4g} numbers/s, {} batches", Name(lease), seconds, rate,
                   stats_file.batches.size());
    } else {
      spdlog::info("{} done in {:.3f} s: {:.4g} numbers/s, {} records found (ladder {}, class minima {}), {} computed",
                   Name(lease), seconds, rate, result.ladder.size() + result.class_minima.size(), result.ladder.size(),
                   result.class_minima.size(), result.candidates);
    }
    if (!ws.ok()) {
      // Without the spool the result can still go out directly, just not survive a crash.
      spdlog::error("{}: cannot spool the result ({}); sending it directly", Name(lease), ws.message());
      v1::Disposition disposition;
      grpc::Status cs = connection_->Complete(request, &disposition);
      if (!cs.ok()) {
        spdlog::error("{}: result lost with the spool unwritable ({}); releasing the unit", Name(lease), client::Describe(cs));
        Release(lease, false, "worker could not spool or send the result");
      }
      return;
    }
    if (sender_ != nullptr) sender_->Notify();
    return;
  }
  if (st.code() == Status::Code::kUnavailable && reason.load() != CancelReason::kNone) {
    if (reason.load() == CancelReason::kShutdown) Release(lease, false, "worker shutting down (grace period over)");
    return;
  }
  consecutive_failures_++;
  metrics_->UnitFailed(options_.device);
  spdlog::error("{} FAILED: {}", Name(lease), st.ToString());
  Release(lease, true, options_.device + ": " + st.ToString());
}

}  // namespace collatz::worker
