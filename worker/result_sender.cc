#include "worker/result_sender.h"

#include <spdlog/spdlog.h>

#include "core/u128.h"

namespace collatz::worker {
namespace {

const char* DispositionName(v1::Disposition d) {
  switch (d) {
    case v1::DISPOSITION_ACCEPTED: return "accepted";
    case v1::DISPOSITION_DUPLICATE: return "duplicate (the unit was already finished)";
    case v1::DISPOSITION_AUDIT_MATCHED: return "audit matched";
    case v1::DISPOSITION_AUDIT_MISMATCH: return "AUDIT MISMATCH";
    default: return "unspecified";
  }
}

}  // namespace

ResultSender::ResultSender(Spool* spool, client::WorkerConnection* connection, WorkerMetrics* metrics,
                           BackoffOptions backoff)
    : spool_(spool), connection_(connection), metrics_(metrics), backoff_(backoff) {}

ResultSender::~ResultSender() {
  if (thread_.joinable()) Finish(std::chrono::steady_clock::now());
}

ResultSender::Pass ResultSender::SendAll() {
  const std::vector<std::string> names = spool_->List();
  metrics_->SetSpoolPending(static_cast<double>(names.size()));
  size_t left = names.size();
  for (const std::string& name : names) {
    if (stop_now_.load()) return Pass::kRetryLater;
    v1::CompleteRequest request;
    Status rs = spool_->Read(name, &request);
    if (rs.code() == Status::Code::kNotFound) {
      --left;
      continue;
    }
    if (!rs.ok()) {
      Status ms = spool_->MoveAside(name, "corrupt");
      spdlog::error("spool: {} is unreadable ({}); moved to {}/corrupt/{}; its unit will be searched again "
                    "when its lease expires{}",
                    name, rs.message(), spool_->dir(), name, ms.ok() ? "" : " (the move failed: " + ms.message() + ")");
      --left;
      continue;
    }
    const std::string unit = "unit " + std::to_string(request.unit_id());
    v1::Disposition disposition = v1::DISPOSITION_UNSPECIFIED;
    grpc::Status st = connection_->Complete(request, &disposition);
    if (st.ok()) {
      Status del = spool_->Remove(name);
      if (!del.ok()) spdlog::error("spool: cannot remove acknowledged {}: {}", name, del.message());
      metrics_->ResultAcknowledged();
      if (disposition == v1::DISPOSITION_AUDIT_MISMATCH) {
        spdlog::warn("{} result sent: {}", unit, DispositionName(disposition));
      } else {
        spdlog::info("{} result sent: {}", unit, DispositionName(disposition));
      }
      --left;
      metrics_->SetSpoolPending(static_cast<double>(left));
      continue;
    }
    if (client::IsTransient(st)) {
      if (!unreachable_logged_) {
        spdlog::warn("{} result not sent yet ({}); kept in the spool, retrying with backoff", unit, client::Describe(st));
      } else {
        spdlog::debug("{} result not sent yet ({})", unit, client::Describe(st));
      }
      unreachable_logged_ = true;
      return Pass::kRetryLater;
    }
    unreachable_logged_ = false;
    // Refused for good (stale lease, unknown unit, rejected): never retried, kept for a human.
    Status ms = spool_->MoveAside(name, "rejected");
    spdlog::error("{} result refused by the server ({}); moved to {}/rejected/{}", unit, client::Describe(st), spool_->dir(),
                  name);
    if (!ms.ok()) spdlog::error("spool: {}", ms.message());
    --left;
  }
  metrics_->SetSpoolPending(0);
  return Pass::kEmpty;
}

bool ResultSender::Drain(const std::atomic<bool>& stop) {
  const size_t initial = spool_->List().size();
  if (initial > 0) spdlog::info("spool: re-sending {} finished result(s) from {} before taking work", initial, spool_->dir());
  while (SendAll() != Pass::kEmpty) {
    if (!SleepUnlessStopped(backoff_.Next(), stop)) return spool_->List().empty();
  }
  backoff_.Reset();
  return true;
}

void ResultSender::Start() { thread_ = std::thread([this] { Run(); }); }

void ResultSender::Notify() {
  std::lock_guard<std::mutex> lock(mu_);
  pending_ = true;
  idle_empty_ = false;
  cv_.notify_all();
}

void ResultSender::Run() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return pending_ || finishing_ || stop_now_.load(); });
      if (stop_now_.load()) return;
      pending_ = false;
    }
    while (SendAll() != Pass::kEmpty) {
      if (!SleepUnlessStopped(backoff_.Next(), stop_now_)) return;
    }
    backoff_.Reset();
    std::lock_guard<std::mutex> lock(mu_);
    if (!pending_) {
      idle_empty_ = true;
      cv_.notify_all();
      if (finishing_) return;
    }
  }
}

size_t ResultSender::Finish(std::chrono::steady_clock::time_point deadline) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    finishing_ = true;
    pending_ = true;  // one more pass, whatever was notified
    idle_empty_ = false;
    cv_.notify_all();
    cv_.wait_until(lock, deadline, [&] { return idle_empty_; });
    stop_now_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  return spool_->List().size();
}

}  // namespace collatz::worker
