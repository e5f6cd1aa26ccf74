// Prometheus metrics (prometheus-cpp): numbers searched, units done and failed, the rate
// of each device, results waiting in the spool. Served on --metrics-listen when given.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/status.h"

namespace prometheus {
class Registry;
class Exposer;
class Counter;
class Gauge;
template <typename T>
class Family;
}  // namespace prometheus

namespace collatz::worker {

class WorkerMetrics {
 public:
  WorkerMetrics();
  ~WorkerMetrics();

  // Serves /metrics on `address` ("0.0.0.0:9464", "127.0.0.1:0" for any port).
  Status Listen(const std::string& address);
  // The port actually bound (after Listen), 0 when not serving.
  int port() const;

  // `device`: "cpu" or "gpu0", "gpu1", ...
  void AddNumbers(const std::string& device, double numbers);
  void UnitDone(const std::string& device, double numbers_per_second);
  void UnitFailed(const std::string& device);
  void SetSpoolPending(double results);
  void ResultAcknowledged();

 private:
  struct Device;
  Device& For(const std::string& device);

  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  prometheus::Family<prometheus::Counter>* numbers_;
  prometheus::Family<prometheus::Counter>* units_done_;
  prometheus::Family<prometheus::Counter>* units_failed_;
  prometheus::Family<prometheus::Gauge>* rate_;
  prometheus::Gauge* spool_pending_;
  prometheus::Counter* acknowledged_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<Device>> devices_;
};

}  // namespace collatz::worker
