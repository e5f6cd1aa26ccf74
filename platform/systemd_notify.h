// systemd readiness and watchdog (sd_notify). Every call is a no-op returning Ok when the
// process was not started by systemd (NOTIFY_SOCKET unset) or the build has no libsystemd,
// so the daemons call them unconditionally.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "core/status.h"

namespace collatz::platform {

// READY=1 (Type=notify units leave "activating" on it), with an optional STATUS= line.
Status NotifyReady(const std::string& status_text = "");
// STOPPING=1: shutdown has begun (systemctl shows "deactivating").
Status NotifyStopping(const std::string& status_text = "");
// STATUS=...: free text shown by `systemctl status`.
Status NotifyStatus(const std::string& status_text);
// WATCHDOG=1: the main loop is alive.
Status WatchdogPing();
// The unit's WatchdogSec for this process (sd_watchdog_enabled), or zero when disabled.
std::chrono::microseconds WatchdogInterval();

// Pings the watchdog at half its interval from a small thread while `healthy()` holds;
// when it stops holding, pings stop and systemd restarts the unit. Does nothing when the
// watchdog is disabled.
class WatchdogPinger {
 public:
  explicit WatchdogPinger(std::function<bool()> healthy);
  ~WatchdogPinger();
  WatchdogPinger(const WatchdogPinger&) = delete;
  WatchdogPinger& operator=(const WatchdogPinger&) = delete;

 private:
  std::function<bool()> healthy_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace collatz::platform
