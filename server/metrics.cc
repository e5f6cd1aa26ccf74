#include "server/metrics.h"

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <utility>
#include <vector>

#include "platform/metrics_endpoint.h"
#include "server/coordinator.h"

namespace collatz::server {

class ServerMetrics::Snapshot : public prometheus::Collectable {
 public:
  explicit Snapshot(Coordinator* c) : c_(c) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    const CoordinatorStatus s = c_->GetStatus();
    const CoordinatorCounters n = c_->Counters();
    uint64_t flagged = 0, busy = 0, idle = 0;
    // Each worker's unit limit, once its lease requests have given one (a worker limited
    // below the units waiting leases none of them: docs/OPERATIONS.md section 13).
    std::vector<std::pair<std::string, double>> unit_limits;
    for (const WorkerReport& w : c_->ListWorkers()) {
      if (w.max_unit_numbers) unit_limits.emplace_back(std::to_string(w.w.id), static_cast<double>(*w.max_unit_numbers));
      if (w.w.flagged) {
        ++flagged;
      } else if (w.active_leases > 0) {
        ++busy;
      } else {
        ++idle;
      }
    }
    std::vector<prometheus::MetricFamily> out;
    Family(&out, "collatz_server_units", "Search units by state (pending: queued, not quarantined)", kGauge, "state",
           {{"pending", s.pending}, {"leased", s.leased}, {"finished", s.finished}, {"quarantined", s.quarantined}});
    Family(&out, "collatz_server_audits_pending", "Finished units waiting for their audit", kGauge, "", {{"", s.audits_pending}});
    Family(&out, "collatz_server_audits_blocked", "Pending audits no active worker is independent enough to take", kGauge, "",
           {{"", s.audits_blocked}});
    Family(&out, "collatz_server_covered_prefix", "P: [1, P) is searched (delay records final below it)", kGauge, "",
           {{"", static_cast<double>(s.covered_prefix)}});
    Family(&out, "collatz_server_class_covered_prefix", "The covered prefix of class-searched units and imports", kGauge, "",
           {{"", static_cast<double>(s.class_covered_prefix)}});
    Family(&out, "collatz_server_numbers", "Numbers of the submitted ranges", kGauge, "state",
           {{"submitted", static_cast<double>(s.numbers_total)}, {"finished", static_cast<double>(s.numbers_finished)}});
    Family(&out, "collatz_server_numbers_per_second", "Numbers of units finished in the last 10 minutes, per second",
           kGauge, "", {{"", s.numbers_per_second}});
    Family(&out, "collatz_server_eta_seconds", "Time to finish the submitted ranges at that rate (-1: unknown)", kGauge,
           "", {{"", s.eta_seconds}});
    Family(&out, "collatz_server_draining", "1 while the server shuts down (no new leases)", kGauge, "",
           {{"", s.draining ? 1.0 : 0.0}});
    Family(&out, "collatz_server_workers", "Registered workers: with an active lease, without, flagged (refused)",
           kGauge, "state", {{"busy", busy}, {"idle", idle}, {"flagged", flagged}});
    Family(&out, "collatz_server_worker_max_unit_numbers",
           "The largest unit each worker leases (collatz-worker --max-unit-numbers; 0: no limit), from its last "
           "lease request since the server started",
           kGauge, "worker", unit_limits);
    Family(&out, "collatz_server_leases_total", "Leases granted since the server started", kCounter, "purpose",
           {{"search", n.leases_search}, {"audit", n.leases_audit}, {"stats", n.leases_stats}});
    Family(&out, "collatz_server_leases_expired_total", "Leases that ran past their deadline", kCounter, "",
           {{"", n.leases_expired}});
    Family(&out, "collatz_server_results_total",
           "Results handed in (search, audit and stats units); refused: answered with an error", kCounter, "outcome",
           {{"accepted", n.results_accepted},
            {"duplicate", n.results_duplicate},
            {"audit_matched", n.results_audit_matched},
            {"audit_mismatched", n.results_audit_mismatched},
            {"refused", n.results_refused}});
    Family(&out, "collatz_server_class_member_searches_total",
           "Class-member searches of leases (core/class_members.h): run, or reused from the last one", kCounter,
           "result", {{"searched", n.member_searches}, {"reused", n.member_search_reuses}});
    Family(&out, "collatz_server_known_points", "Known points held (collatzctl import --points): they close classes",
           kGauge, "", {{"", n.known_points}});
    Family(&out, "collatz_server_check_table_merges_total",
           "Checks whose search's record table was merged again from every finished unit below it", kCounter, "",
           {{"", n.check_table_merges}});
    return out;
  }

 private:
  static constexpr prometheus::MetricType kGauge = prometheus::MetricType::Gauge;
  static constexpr prometheus::MetricType kCounter = prometheus::MetricType::Counter;

  // One family; `label` names the label of the values ("" for a single unlabelled value).
  static void Family(std::vector<prometheus::MetricFamily>* out, const char* name, const char* help,
                     prometheus::MetricType type, const std::string& label,
                     const std::vector<std::pair<std::string, double>>& values) {
    prometheus::MetricFamily f;
    f.name = name;
    f.help = help;
    f.type = type;
    for (const auto& [label_value, value] : values) {
      prometheus::ClientMetric m;
      if (!label.empty()) m.label.push_back({label, label_value});
      if (type == prometheus::MetricType::Counter) {
        m.counter.value = value;
      } else {
        m.gauge.value = value;
      }
      f.metric.push_back(std::move(m));
    }
    out->push_back(std::move(f));
  }

  Coordinator* c_;
};

ServerMetrics::ServerMetrics(Coordinator* coordinator) : snapshot_(std::make_shared<Snapshot>(coordinator)) {}

ServerMetrics::~ServerMetrics() = default;

Status ServerMetrics::Listen(const std::string& address) {
  return platform::ServeMetrics(address, snapshot_, &exposer_);
}

int ServerMetrics::port() const { return platform::MetricsPort(exposer_.get()); }

std::string ServerMetrics::Text() const { return prometheus::TextSerializer().Serialize(snapshot_->Collect()); }

}  // namespace collatz::server
