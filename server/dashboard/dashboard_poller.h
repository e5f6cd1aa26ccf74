// Simulated browsers for the coordinator benchmark: B threads, each polling the dashboard
// API as the page does (status, workers, both record lists, the hour of throughput), with
// a pause of poll_ms between rounds (0: back to back).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace collatz::server {

class DashboardPoller {
 public:
  DashboardPoller(int port, const std::string& token, int browsers, int poll_ms);
  ~DashboardPoller() { Stop(); }

  struct Counts {
    uint64_t requests = 0, failures = 0;  // failures: no answer or not 200
  };
  Counts Stop();  // joins the browsers

 private:
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> requests_{0}, failures_{0};
  std::vector<std::thread> threads_;
};

}  // namespace collatz::server
