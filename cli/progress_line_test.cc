// Progress without a terminal (cli/progress_line.h): a log line at the first report and
// then one per interval, on an injected clock (no sleeping); with a terminal none.
#include "cli/progress_line.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace collatz::cli {
namespace {

using Clock = ProgressOptions::Clock;

struct Fake {
  Clock::time_point now = Clock::time_point(std::chrono::hours(1));
  std::vector<std::string> lines;
  ProgressOptions Options(bool terminal) {
    ProgressOptions o;
    o.terminal = terminal;
    o.log_interval = std::chrono::seconds(30);
    o.now = [this] { return now; };
    o.log = [this](const std::string& line) { lines.push_back(line); };
    return o;
  }
};

TEST(ProgressLine, WithoutATerminalLogsAtTheStartThenOncePerInterval) {
  Fake fake;
  ProgressLine progress(1000, fake.Options(false));
  progress.Update(0, "unit 1/4");
  ASSERT_EQ(fake.lines.size(), 1u);
  // Engines report about five times a second: nothing more until 30 s have passed.
  for (int i = 1; i < 150; ++i) {
    fake.now += std::chrono::milliseconds(200);
    progress.Update(i, "unit 1/4");
  }
  EXPECT_EQ(fake.lines.size(), 1u);
  fake.now += std::chrono::milliseconds(200);  // 30 s after the first line
  progress.Update(250, "unit 2/4 [2^60, 2^60+2^38) floor 2283");
  ASSERT_EQ(fake.lines.size(), 2u);
  // done/total, numbers/s over the 30 s, the ETA and the current unit.
  EXPECT_NE(fake.lines[1].find(" 25.0%"), std::string::npos) << fake.lines[1];
  EXPECT_NE(fake.lines[1].find("250 of 1e+03 numbers"), std::string::npos) << fake.lines[1];
  EXPECT_NE(fake.lines[1].find("8.33 numbers/s"), std::string::npos) << fake.lines[1];
  EXPECT_NE(fake.lines[1].find("ETA 1m30s"), std::string::npos) << fake.lines[1];
  EXPECT_NE(fake.lines[1].find("unit 2/4 [2^60, 2^60+2^38) floor 2283"), std::string::npos) << fake.lines[1];
  // A long gap between reports (a unit being stored): the next report logs at once.
  fake.now += std::chrono::minutes(5);
  progress.Update(500, "unit 3/4");
  EXPECT_EQ(fake.lines.size(), 3u);
}

// A run's first report comes after the engine's one-time tables (its own record table takes
// about a second on an H100): the rate and ETA count from that report, not from the start.
TEST(ProgressLine, RateAndEtaCountFromTheFirstReport) {
  Fake fake;
  ProgressLine progress(1000, fake.Options(false));
  fake.now += std::chrono::seconds(100);
  progress.Update(10, "unit 1/1");
  ASSERT_EQ(fake.lines.size(), 1u);
  EXPECT_NE(fake.lines[0].find("? numbers/s"), std::string::npos) << fake.lines[0];
  EXPECT_NE(fake.lines[0].find("ETA ?"), std::string::npos) << fake.lines[0];
  EXPECT_NE(fake.lines[0].find("elapsed 1m40s"), std::string::npos) << fake.lines[0];
  fake.now += std::chrono::seconds(30);
  progress.Update(310, "unit 1/1");
  ASSERT_EQ(fake.lines.size(), 2u);
  EXPECT_NE(fake.lines[1].find("10 numbers/s"), std::string::npos) << fake.lines[1];
  EXPECT_NE(fake.lines[1].find("ETA 1m09s"), std::string::npos) << fake.lines[1];
}

TEST(ProgressLine, WithATerminalWritesNoLogLines) {
  Fake fake;
  ProgressLine progress(1000, fake.Options(true));
  for (int i = 0; i < 10; ++i) {
    fake.now += std::chrono::seconds(40);
    progress.Update(i, "unit 1/1");
  }
  progress.Clear();
  EXPECT_TRUE(fake.lines.empty());
}

}  // namespace
}  // namespace collatz::cli
