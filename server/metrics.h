// Prometheus /metrics of the coordinator (prometheus-cpp). Each scrape takes a snapshot of
// the coordinator's status, workers and event counters (Coordinator::GetStatus,
// ListWorkers, Counters), so the request paths pay nothing but a few counter increments.
// docs/OPERATIONS.md lists the metrics and useful alerts.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"

namespace prometheus {
class Exposer;
}  // namespace prometheus

namespace collatz::server {

class Coordinator;

class ServerMetrics {
 public:
  // `coordinator` must outlive this object.
  explicit ServerMetrics(Coordinator* coordinator);
  ~ServerMetrics();

  // Serves /metrics on `address` ("127.0.0.1:9465"; port 0 picks a free one).
  Status Listen(const std::string& address);
  // The port actually bound (after Listen), 0 when not serving.
  int port() const;
  // The exposition text a scrape would get now.
  std::string Text() const;

 private:
  class Snapshot;
  std::shared_ptr<Snapshot> snapshot_;
  std::unique_ptr<prometheus::Exposer> exposer_;
};

}  // namespace collatz::server
