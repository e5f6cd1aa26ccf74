#include "platform/metrics_endpoint.h"

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>

namespace collatz::platform {

Status ServeMetrics(const std::string& address, const std::shared_ptr<prometheus::Collectable>& source,
                    std::unique_ptr<prometheus::Exposer>* out) {
  try {
    *out = std::make_unique<prometheus::Exposer>(address);
  } catch (const std::exception& e) {
    return Status::IOError("cannot serve metrics on " + address + ": " + e.what());
  }
  (*out)->RegisterCollectable(source);
  return Status::Ok();
}

int MetricsPort(const prometheus::Exposer* exposer) {
  if (exposer == nullptr) return 0;
  const auto ports = exposer->GetListeningPorts();
  return ports.empty() ? 0 : ports.front();
}

}  // namespace collatz::platform
