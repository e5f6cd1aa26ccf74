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

class LyingSpool final : public SpoolWriter {
 public:
  LyingSpool(SpoolWriter* spool, LieKind kind, int after) : spool_(spool), kind_(kind), after_(after) {}
  // The first `after` results that could carry the lie go in honest (to earn trust): counting
  // only those, a liar lies as soon as it has had after + 1 chances (counting every result, a
  // liar whose first units held nothing to lie about could run out of units unheard).
  Status Write(const v1::CompleteRequest& request, std::string* name) override {
    if (!request.has_result()) return spool_->Write(request, name);
    v1::CompleteRequest lie = request;
    v1::UnitResult* r = lie.mutable_result();
    const char* what = nullptr;
    switch (kind_) {
      case LieKind::kOmitRecord:
      case LieKind::kSelfCheck:
        // A record left out: the last ladder entry, or in a unit without one the last class
        // minimum (a class record candidate), so that every unit can carry the lie.
        if (r->ladder_size() > 0) {
          r->mutable_ladder()->RemoveLast();
          what = "left the last ladder entry out";
        } else if (r->class_minima_size() > 0) {
          r->mutable_class_minima()->RemoveLast();
          what = "left the last class minimum out (no ladder entry)";
        }
        break;
      case LieKind::kDropClassMinimum:
        if (r->class_minima_size() > 0) {
          r->mutable_class_minima()->RemoveLast();
          what = "left the last class minimum out";
        }
        break;
      case LieKind::kWrongCount:
        r->set_candidates(r->candidates() + 1);
        what = "reported one candidate more";
        break;
      case LieKind::kNone: break;
    }
    if (what == nullptr || seen_++ < after_) return spool_->Write(request, name);
    spdlog::warn("test fault --test-lie: unit {} {}", request.unit_id(), what);
    return spool_->Write(lie, name);
  }

 private:
  SpoolWriter* spool_;
  const LieKind kind_;
  const int after_;
  int seen_ = 0;
};

}  // namespace

bool ParseLieKind(const std::string& text, LieKind* out) {
  static const std::pair<const char*, LieKind> kKinds[] = {{"omit-record", LieKind::kOmitRecord},
                                                           {"drop-class-minimum", LieKind::kDropClassMinimum},
                                                           {"wrong-count", LieKind::kWrongCount},
                                                           {"self-check", LieKind::kSelfCheck}};
  for (const auto& [name, kind] : kKinds) {
    if (text == name) {
      *out = kind;
      return true;
    }
  }
  return false;
}

std::unique_ptr<SpoolWriter> MakeLyingSpool(SpoolWriter* spool, LieKind kind, int after) {
  return std::make_unique<LyingSpool>(spool, kind, after);
}

std::unique_ptr<SpoolWriter> MakeCrashAfterSpool(SpoolWriter* spool) { return std::make_unique<CrashAfterSpool>(spool); }

std::unique_ptr<StatsEngine> MakeLyingStatsEngine(std::unique_ptr<StatsEngine> engine) {
  return std::make_unique<LyingStatsEngine>(std::move(engine));
}

}  // namespace collatz::worker
