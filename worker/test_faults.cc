#include "worker/test_faults.h"

#include <signal.h>
#include <spdlog/spdlog.h>

namespace collatz::worker {

namespace {

class CrashAfterSpool final : public SpoolWriter {
 public:
  explicit CrashAfterSpool(SpoolWriter* spool) : spool_(spool) {}
  Status Write(const v1::CompleteRequest& request, std::string* name) override {
    Status st = spool_->Write(request, name);
    if (st.ok()) {
      spdlog::warn("test fault --test-crash-after-spool: SIGKILL with {} spooled and not sent", *name);
      spdlog::shutdown();
      raise(SIGKILL);
    }
    return st;
  }

 private:
  SpoolWriter* spool_;
};

class LyingStatsEngine final : public StatsEngine {
 public:
  explicit LyingStatsEngine(std::unique_ptr<StatsEngine> engine) : engine_(std::move(engine)) {}
  Status Compute(u128 from, u128 to, uint32_t batch, std::vector<BatchStats>* out, std::atomic<uint64_t>* done,
                 const std::atomic<bool>* cancel) override {
    Status st = engine_->Compute(from, to, batch, out, done, cancel);
    if (st.ok() && !out->empty()) {
      spdlog::warn("test fault --test-lie-stats: reporting a wrong sum for the last batch of [{}, {})", ToDecimal(from),
                   ToDecimal(to));
      out->back().sum += 1;
    }
    return st;
  }
  std::string Describe() const override { return engine_->Describe(); }

 private:
  std::unique_ptr<StatsEngine> engine_;
};

}  // namespace

std::unique_ptr<SpoolWriter> MakeCrashAfterSpool(SpoolWriter* spool) { return std::make_unique<CrashAfterSpool>(spool); }

std::unique_ptr<StatsEngine> MakeLyingStatsEngine(std::unique_ptr<StatsEngine> engine) {
  return std::make_unique<LyingStatsEngine>(std::move(engine));
}

}  // namespace collatz::worker
