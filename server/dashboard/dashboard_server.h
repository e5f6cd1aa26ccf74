// The coordinator's web dashboard over HTTP (docs/HTTP.md): the page (GET /, its script)
// and the read-only JSON API it uses, on a thread pool of its own (cpp-httplib), apart
// from the gRPC service. With authentication on (server/auth.h) every request must carry
// an admin token or the shared token ("Authorization: Bearer TOKEN", or the cookie that
// GET /?token=TOKEN sets); a worker token is refused (403). Bad requests get a clear
// 4xx: 401 without the token, 404 for an unknown path, 405 for anything but GET/HEAD,
// 400 for an unknown query parameter or value, 414 for a request line over 8 KiB.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "core/status.h"
#include "server/auth.h"
#include "server/dashboard/dashboard_data.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace collatz::server {

class DashboardServer {
 public:
  // `data` must outlive this object. An empty token serves everyone.
  DashboardServer(DashboardData* data, std::string token);
  // The server's authentication (shared and stored tokens); `auth` must outlive this object.
  DashboardServer(DashboardData* data, const TokenAuth* auth);
  ~DashboardServer();  // stops serving

  // Serves on `address` ("127.0.0.1:8080"; port 0 picks a free one) from its own threads.
  Status Listen(const std::string& address);
  int port() const { return port_; }
  void Stop();

  static constexpr int kThreads = 8;

 private:
  void Route();

  DashboardData* data_;
  std::unique_ptr<TokenAuth> owned_auth_;  // the token-string constructor's
  const TokenAuth* auth_;
  std::unique_ptr<httplib::Server> http_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace collatz::server
