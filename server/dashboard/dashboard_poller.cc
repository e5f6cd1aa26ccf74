#include "server/dashboard/dashboard_poller.h"

#include <httplib.h>

#include <chrono>

namespace collatz::server {

DashboardPoller::DashboardPoller(int port, const std::string& token, int browsers, int poll_ms) {
  for (int i = 0; i < browsers; ++i) {
    threads_.emplace_back([this, port, token, poll_ms] {
      httplib::Client client("127.0.0.1", port);
      client.set_bearer_token_auth(token.c_str());
      while (!stop_.load()) {
        for (const char* path : {"/api/status", "/api/workers", "/api/records?kind=delay", "/api/records?kind=class",
                                 "/api/throughput?range=hour"}) {
          auto res = client.Get(path);
          ++requests_;
          if (!res || res->status != 200) ++failures_;
        }
        for (int waited = 0; waited < poll_ms && !stop_.load(); waited += 10) {
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
      }
    });
  }
}

DashboardPoller::Counts DashboardPoller::Stop() {
  stop_ = true;
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  return Counts{requests_.load(), failures_.load()};
}

}  // namespace collatz::server
