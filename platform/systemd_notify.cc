#include "platform/systemd_notify.h"

#include <cstring>

#if COLLATZ_HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

namespace collatz::platform {

namespace {

Status Notify(const std::string& message) {
#if COLLATZ_HAVE_LIBSYSTEMD
  // sd_notify returns 0 when NOTIFY_SOCKET is unset: not under systemd, nothing to do.
  int r = sd_notify(0, message.c_str());
  if (r < 0) return Status::IOError("sd_notify(" + message + "): " + std::strerror(-r));
#else
  (void)message;
#endif
  return Status::Ok();
}

std::string WithStatus(const char* head, const std::string& status_text) {
  std::string m = head;
  if (!status_text.empty()) m += "\nSTATUS=" + status_text;
  return m;
}

}  // namespace

Status NotifyReady(const std::string& status_text) { return Notify(WithStatus("READY=1", status_text)); }
Status NotifyStopping(const std::string& status_text) { return Notify(WithStatus("STOPPING=1", status_text)); }
Status NotifyStatus(const std::string& status_text) { return Notify("STATUS=" + status_text); }
Status WatchdogPing() { return Notify("WATCHDOG=1"); }

std::chrono::microseconds WatchdogInterval() {
#if COLLATZ_HAVE_LIBSYSTEMD
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) > 0) return std::chrono::microseconds(usec);
#endif
  return std::chrono::microseconds(0);
}

WatchdogPinger::WatchdogPinger(std::function<bool()> healthy) : healthy_(std::move(healthy)) {
  const std::chrono::microseconds interval = WatchdogInterval();
  if (interval.count() == 0) return;
  thread_ = std::thread([this, period = interval / 2] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!cv_.wait_for(lock, period, [this] { return stop_; })) {
      if (healthy_()) (void)WatchdogPing();
    }
  });
}

WatchdogPinger::~WatchdogPinger() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace collatz::platform
