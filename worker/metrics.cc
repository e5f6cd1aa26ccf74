#include "worker/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include "platform/metrics_endpoint.h"

namespace collatz::worker {

struct WorkerMetrics::Device {
  prometheus::Counter* numbers;
  prometheus::Counter* done;
  prometheus::Counter* failed;
  prometheus::Gauge* rate;
};

WorkerMetrics::WorkerMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
  numbers_ = &prometheus::BuildCounter()
                  .Name("collatz_worker_numbers_searched_total")
                  .Help("Numbers of finished units searched (every N of each range counts)")
                  .Register(*registry_);
  units_done_ = &prometheus::BuildCounter()
                     .Name("collatz_worker_units_done_total")
                     .Help("Units searched to the end and spooled")
                     .Register(*registry_);
  units_failed_ = &prometheus::BuildCounter()
                       .Name("collatz_worker_units_failed_total")
                       .Help("Units whose search failed (released as failed)")
                       .Register(*registry_);
  rate_ = &prometheus::BuildGauge()
               .Name("collatz_worker_numbers_per_second")
               .Help("Search rate of the last finished unit, per device")
               .Register(*registry_);
  spool_pending_ = &prometheus::BuildGauge()
                        .Name("collatz_worker_spool_pending")
                        .Help("Finished results in the spool, not yet acknowledged by the server")
                        .Register(*registry_)
                        .Add({});
  acknowledged_ = &prometheus::BuildCounter()
                       .Name("collatz_worker_results_acknowledged_total")
                       .Help("Results the server acknowledged (accepted, duplicate or audit)")
                       .Register(*registry_)
                       .Add({});
}

WorkerMetrics::~WorkerMetrics() = default;

Status WorkerMetrics::Listen(const std::string& address) {
  return platform::ServeMetrics(address, registry_, &exposer_);
}

int WorkerMetrics::port() const { return platform::MetricsPort(exposer_.get()); }

WorkerMetrics::Device& WorkerMetrics::For(const std::string& device) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& d = devices_[device];
  if (!d) {
    d = std::make_unique<Device>();
    d->numbers = &numbers_->Add({{"device", device}});
    d->done = &units_done_->Add({{"device", device}});
    d->failed = &units_failed_->Add({{"device", device}});
    d->rate = &rate_->Add({{"device", device}});
  }
  return *d;
}

void WorkerMetrics::AddNumbers(const std::string& device, double numbers) { For(device).numbers->Increment(numbers); }
void WorkerMetrics::UnitDone(const std::string& device, double numbers_per_second) {
  Device& d = For(device);
  d.done->Increment();
  d.rate->Set(numbers_per_second);
}
void WorkerMetrics::UnitFailed(const std::string& device) { For(device).failed->Increment(); }
void WorkerMetrics::SetSpoolPending(double results) { spool_pending_->Set(results); }
void WorkerMetrics::ResultAcknowledged() { acknowledged_->Increment(); }

}  // namespace collatz::worker
