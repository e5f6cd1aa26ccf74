// The notifications arrive on a real AF_UNIX datagram socket, as systemd would receive them.
#include "platform/systemd_notify.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <string>

namespace collatz::platform {
namespace {

class NotifySocket {
 public:
  NotifySocket() {
    path_ = "/tmp/collatz-notify-test-" + std::to_string(getpid());
    unlink(path_.c_str());
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path_.c_str());
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    setenv("NOTIFY_SOCKET", path_.c_str(), 1);
  }
  ~NotifySocket() {
    unsetenv("NOTIFY_SOCKET");
    close(fd_);
    unlink(path_.c_str());
  }
  // The next datagram, or "" when none arrives within `timeout_ms`.
  std::string Receive(int timeout_ms) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) != 1) return "";
    char buf[512];
    ssize_t n = recv(fd_, buf, sizeof buf, 0);
    return n > 0 ? std::string(buf, n) : "";
  }

 private:
  std::string path_;
  int fd_ = -1;
};

TEST(SystemdNotify, NoOpWithoutNotifySocket) {
  unsetenv("NOTIFY_SOCKET");
  unsetenv("WATCHDOG_USEC");
  EXPECT_TRUE(NotifyReady("ready").ok());
  EXPECT_TRUE(NotifyStopping().ok());
  EXPECT_TRUE(WatchdogPing().ok());
  EXPECT_EQ(WatchdogInterval().count(), 0);
  WatchdogPinger pinger([] { return true; });  // no thread, returns at once
}

#if COLLATZ_HAVE_LIBSYSTEMD
TEST(SystemdNotify, SendsReadyStatusStoppingAndWatchdog) {
  NotifySocket sock;
  ASSERT_TRUE(NotifyReady("listening on 127.0.0.1:50051").ok());
  EXPECT_EQ(sock.Receive(2000), "READY=1\nSTATUS=listening on 127.0.0.1:50051");
  ASSERT_TRUE(WatchdogPing().ok());
  EXPECT_EQ(sock.Receive(2000), "WATCHDOG=1");
  ASSERT_TRUE(NotifyStopping().ok());
  EXPECT_EQ(sock.Receive(2000), "STOPPING=1");
  ASSERT_TRUE(NotifyStatus("3 units running").ok());
  EXPECT_EQ(sock.Receive(2000), "STATUS=3 units running");
}

TEST(SystemdNotify, WatchdogIntervalFromEnvironment) {
  setenv("WATCHDOG_USEC", "4000000", 1);
  setenv("WATCHDOG_PID", std::to_string(getpid()).c_str(), 1);
  EXPECT_EQ(WatchdogInterval().count(), 4000000);
  setenv("WATCHDOG_PID", "1", 1);  // meant for another process
  EXPECT_EQ(WatchdogInterval().count(), 0);
  unsetenv("WATCHDOG_USEC");
  unsetenv("WATCHDOG_PID");
}

TEST(SystemdNotify, PingerPingsWhileHealthyOnly) {
  NotifySocket sock;
  setenv("WATCHDOG_USEC", "100000", 1);  // 100 ms: pings every 50 ms
  setenv("WATCHDOG_PID", std::to_string(getpid()).c_str(), 1);
  std::atomic<bool> healthy{true};
  {
    WatchdogPinger pinger([&] { return healthy.load(); });
    EXPECT_EQ(sock.Receive(2000), "WATCHDOG=1");
    EXPECT_EQ(sock.Receive(2000), "WATCHDOG=1");
    healthy = false;
    while (!sock.Receive(200).empty()) {
    }  // drain a ping that raced the switch
    EXPECT_EQ(sock.Receive(400), "");
  }
  unsetenv("WATCHDOG_USEC");
  unsetenv("WATCHDOG_PID");
}
#endif

}  // namespace
}  // namespace collatz::platform
