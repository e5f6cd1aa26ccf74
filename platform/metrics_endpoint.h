// The /metrics endpoint of the server and the worker: prometheus-cpp's Exposer, started with
// a clear error instead of an exception, and the port it bound.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"

namespace prometheus {
class Collectable;
class Exposer;
}  // namespace prometheus

namespace collatz::platform {

// Serves `source` as /metrics on `address` ("127.0.0.1:9465"; port 0 picks a free one).
Status ServeMetrics(const std::string& address, const std::shared_ptr<prometheus::Collectable>& source,
                    std::unique_ptr<prometheus::Exposer>* out);

// The port `exposer` listens on; 0 when it is null.
int MetricsPort(const prometheus::Exposer* exposer);

}  // namespace collatz::platform
