// The test-support helpers themselves: exit codes, signals, timeouts, output capture.
#include "tests/support/child_process.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "tests/support/temp_dir.h"

namespace collatz::test_support {
namespace {

TEST(ChildProcess, ReportsTheExitStatusAndTheOutputOfEachStream) {
  TempDir dir;
  ChildProcess child("/bin/sh", {"-c", "echo out; echo err >&2; pwd; exit 3"}, dir.File("out"), dir.File("err"),
                     dir.path());
  EXPECT_EQ(child.Wait(), 3);
  EXPECT_EQ(child.output(), "out\n" + dir.path() + "\n");
  EXPECT_EQ(child.errors(), "err\n");
  EXPECT_FALSE(child.running());
  EXPECT_EQ(child.Wait(0), 3);  // reaped once, answered again
}

TEST(ChildProcess, OneLogFileForBothStreams) {
  TempDir dir;
  ChildProcess child("/bin/sh", {"-c", "echo a; echo b >&2; echo c"}, dir.File("log"));
  EXPECT_EQ(child.Wait(), 0);
  EXPECT_EQ(child.output(), "a\nb\nc\n");
}

TEST(ChildProcess, SignalsTimeoutsAndWaitingForOutput) {
  TempDir dir;
  ChildProcess child("/bin/sh", {"-c", "echo ready; echo ready; exec sleep 60"}, dir.File("log"));
  EXPECT_TRUE(child.WaitForOutput("ready", 10000, 2)) << child.output();
  EXPECT_FALSE(child.WaitForOutput("ready", 50, 3));
  EXPECT_EQ(child.Wait(50), -1);
  EXPECT_TRUE(child.running());
  child.Signal(SIGTERM);
  EXPECT_EQ(child.Wait(10000), 128 + SIGTERM);
  child.Signal(SIGKILL);  // reaped already: nothing is sent, nothing changes
  EXPECT_EQ(child.Wait(), 128 + SIGTERM);
}

TEST(ChildProcess, WaitingForOutputEndsWhenTheChildExits) {
  TempDir dir;
  ChildProcess child("/bin/sh", {"-c", "echo something else"}, dir.File("log"));
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(child.WaitForOutput("never printed", 60000));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
}

TEST(ChildProcess, MissingBinaryExits127AndARunningChildIsKilledAtScopeEnd) {
  TempDir dir;
  ChildProcess missing(dir.File("no-such-binary"), {}, dir.File("log"));
  EXPECT_EQ(missing.Wait(), 127);
  pid_t pid = -1;
  {
    ChildProcess sleeper("/bin/sleep", {"60"}, dir.File("log2"));
    pid = sleeper.pid();
    ASSERT_GT(pid, 0);
    EXPECT_EQ(::kill(pid, 0), 0);
  }
  EXPECT_EQ(::kill(pid, 0), -1);  // killed and reaped: no such process
  EXPECT_EQ(errno, ESRCH);
}

TEST(FreeTcpPort, GivesAPortThatCanBeBound) {
  const int port = FreeTcpPort();
  ASSERT_GT(port, 0);
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ::close(fd);
}

TEST(TempDir, IsRemovedWithItsFiles) {
  std::string path;
  {
    TempDir dir;
    path = dir.path();
    ChildProcess touch("/bin/sh", {"-c", "echo x > file"}, dir.File("log"), dir.File("log"), dir.path());
    ASSERT_EQ(touch.Wait(), 0);
    EXPECT_EQ(ReadFileOrEmpty(dir.File("file")), "x\n");
    EXPECT_TRUE(FileExists(dir.File("file")));
  }
  EXPECT_FALSE(FileExists(path));
  EXPECT_EQ(CountOccurrences("abcabcab", "abc"), 2u);
  EXPECT_EQ(CountOccurrences("aaaa", "aa"), 2u);
}

}  // namespace
}  // namespace collatz::test_support
