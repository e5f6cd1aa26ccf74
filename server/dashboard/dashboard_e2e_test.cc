// The dashboard's API end to end: the real collatz-server (--http-listen) searches [1, 2^29)
// with a real CPU collatz-worker; while it runs the covered prefix grows, and at the end
// the API's status, workers, throughput and events tell what happened and its CSV records
// equal what `collatzctl server-records` prints.
#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "tests/support/child_process.h"
#include "tests/support/temp_dir.h"

namespace collatz::server {
namespace {

using nlohmann::json;
using test_support::ChildProcess;

constexpr const char* kToken = "dash-e2e-token";

int PortAfter(const std::string& log, const std::string& what) {
  std::smatch m;
  if (!std::regex_search(log, m, std::regex(what + R"( \S+ \(port (\d+)\))"))) return 0;
  return std::stoi(m[1].str());
}

// Runs collatzctl to the end; its stdout ("" and a test failure when it fails).
std::string Collatzctl(const test_support::TempDir& dir, const std::vector<std::string>& args) {
  static int run = 0;
  const std::string out = dir.File("ctl" + std::to_string(++run) + ".out");
  ChildProcess ctl(COLLATZCTL_BINARY, args, out, dir.File("ctl.err"));
  EXPECT_EQ(ctl.Wait(60000), 0) << ctl.errors();
  return ctl.output();
}

TEST(DashboardEndToEnd, ApiFollowsARealSearch) {
  test_support::TempDir dir;
  std::ofstream(dir.File("token")) << kToken << "\n";
  ChildProcess server(COLLATZ_SERVER_BINARY,
                      {"--db", dir.File("c.db"), "--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0",
                       "--token-file", dir.File("token"), "--unit-size", "2^24", "--double-check", "none"},
                      dir.File("server.log"));
  ASSERT_TRUE(server.WaitForOutput("listening on", 60000)) << server.output();
  const int http_port = PortAfter(server.output(), "dashboard on"),
            grpc_port = PortAfter(server.output(), "listening on");
  ASSERT_GT(http_port, 0) << server.output();
  ASSERT_GT(grpc_port, 0) << server.output();
  const std::string address = "127.0.0.1:" + std::to_string(grpc_port);
  httplib::Client http("127.0.0.1", http_port);
  http.set_bearer_token_auth(kToken);
  auto get = [&](const std::string& path) {
    auto res = http.Get(path.c_str());
    EXPECT_TRUE(res && res->status == 200) << path << ": " << (res ? res->body : "no answer");
    return res ? res->body : std::string();
  };

  Collatzctl(dir, {"submit", "--server", address, "--token-file", dir.File("token"), "--from", "1", "--to", "2^29",
                   "--kinds", "delay,class"});
  json s = json::parse(get("/api/status"));
  EXPECT_EQ(s["target"], "536870912");
  ASSERT_EQ(s["submissions"].size(), 1u);
  const int units = s["submissions"][0]["units_total"];
  EXPECT_EQ(units, 33);  // [1, 2^20), [2^20, 2^24), then 31 of 2^24

  ChildProcess worker(COLLATZ_WORKER_BINARY,
                      {"--server", address, "--token-file", dir.File("token"), "--backend", "cpu", "--threads", "1",
                       "--spool", dir.File("spool"), "--max-idle-seconds", "3", "--log-level", "warn"},
                      dir.File("worker.log"));
  std::set<std::string> prefixes;
  std::string seen;  // for a failure message
  for (int i = 0; i < 1200; ++i) {
    s = json::parse(get("/api/status"));
    if (prefixes.insert(s["covered_prefix"].get<std::string>()).second) {
      seen += s["covered_prefix"].get<std::string>() + " (" + s["units"]["finished"].dump() + " units) ";
    }
    if (s["units"]["finished"] == units && s["audits"]["pending"] == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(s["units"]["finished"], units) << s.dump(1) << worker.output();
  EXPECT_EQ(s["covered_prefix"], "536870912");
  EXPECT_EQ(s["progress"], 1.0);
  EXPECT_EQ(s["numbers_finished"], "536870911");
  EXPECT_EQ(s["submissions"][0]["units_finished"], units);
  EXPECT_GE(prefixes.size(), 3u) << "the covered prefix did not grow step by step: " << seen;
  // No audits were asked for (--audit-fraction 0).
  EXPECT_EQ(s["audits"]["failed"], 0);

  // The records: the CSV equals collatzctl's, the JSON holds the same list.
  for (const std::string kind : {"delay", "class"}) {
    const std::string ctl = Collatzctl(dir, {"server-records", "--server", address, "--kind", kind, "--format", "csv"});
    const std::string csv = get("/api/records?kind=" + kind + "&format=csv");
    EXPECT_GT(csv.size(), 100u);
    EXPECT_EQ(csv, ctl) << kind;
    json j = json::parse(get("/api/records?kind=" + kind));
    EXPECT_EQ(j["records"].size() + 1, static_cast<size_t>(std::count(csv.begin(), csv.end(), '\n'))) << kind;
  }
  // delay(268549803) = 964 is the last delay record below 2^29; it was found by a unit.
  json d = json::parse(get("/api/records?kind=delay"));
  EXPECT_EQ(d["records"].back()["n"], "268549803");
  EXPECT_EQ(d["records"].back()["delay"], 964);
  // Record events come from the stored merge, which the server writes every second.
  bool found = false, class_found = false;
  for (int i = 0; i < 50 && !(found && class_found); ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    s = json::parse(get("/api/status"));
    for (const json& e : s["events"]) {
      found |= e["detail"] == "delay record n = 268549803, delay 964 (unit [268435456, 285212672))";
      class_found |= e["detail"].get<std::string>().find(" class records up to delay ") != std::string::npos;
    }
  }
  EXPECT_TRUE(found && class_found) << s["events"].dump(1);

  json w = json::parse(get("/api/workers"));
  ASSERT_EQ(w["workers"].size(), 1u);
  EXPECT_EQ(w["workers"][0]["backend"], "cpu");
  EXPECT_FALSE(w["workers"][0]["host"].get<std::string>().empty());
  EXPECT_EQ(w["workers"][0]["units_finished"], units);
  EXPECT_GT(w["workers"][0]["numbers_per_second"].get<double>(), 0);
  EXPECT_TRUE(w["workers"][0]["last_seen_ms"].is_number());
  EXPECT_EQ(w["workers"][0]["max_unit_numbers"], std::to_string(uint64_t{1} << 40));  // a CPU worker's own limit

  // Throughput: every number finished in the last hour, day and week.
  for (const std::string range : {"hour", "day", "week"}) {
    json t = json::parse(get("/api/throughput?range=" + range));
    uint64_t sum_units = 0, sum_numbers = 0;
    for (const json& b : t["buckets"]) {
      sum_units += b["units"].get<uint64_t>();
      sum_numbers += std::stoull(b["numbers"].get<std::string>());
    }
    EXPECT_EQ(sum_units, static_cast<uint64_t>(units)) << range;
    EXPECT_EQ(sum_numbers, 536870911u) << range;
  }

  // Without the token: 401, however the request looks.
  httplib::Client anon("127.0.0.1", http_port);
  for (const char* path : {"/", "/api/status", "/api/records?kind=delay&format=csv", "/nope"}) {
    auto res = anon.Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 401) << path;
  }
  EXPECT_EQ(worker.Wait(60000), 0) << worker.output();
  server.Signal(SIGTERM);
  EXPECT_EQ(server.Wait(30000), 0) << server.output();
}

}  // namespace
}  // namespace collatz::server
