// The dashboard's HTTP API against an in-process coordinator (fake clock): what it
// answers follows the coordinator, snapshots are shared for max_age_ms, and bad requests
// get clear 4xx answers.
#include "server/dashboard/dashboard_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "core/records_csv.h"
#include "server/coordinator_test_fixture.h"

namespace collatz::server {
namespace {

using nlohmann::json;

constexpr const char* kToken = "dash-token";

class DashboardServerTest : public CoordinatorFixture {
 protected:
  DashboardServerTest() : CoordinatorFixture("dashboard_test_") {}

  void Serve(int64_t max_age_ms, const std::string& token = kToken) {
    std::unique_ptr<DashboardReader> reader;
    ASSERT_TRUE(DashboardReader::Open(db_, &reader).ok());
    DashboardOptions o;
    o.max_age_ms = max_age_ms;
    data_ = std::make_unique<DashboardData>(c_.get(), std::move(reader), &clock_, o);
    server_ = std::make_unique<DashboardServer>(data_.get(), token);
    ASSERT_TRUE(server_->Listen("127.0.0.1:0").ok());
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_bearer_token_auth(token.c_str());
  }
  void TearDown() override {
    client_.reset();
    server_.reset();
    data_.reset();
    CoordinatorFixture::TearDown();
  }
  // GET with the token; the body parsed as JSON (200 expected).
  json Get(const std::string& path) {
    auto res = client_->Get(path.c_str());
    EXPECT_TRUE(res) << path;
    if (!res) return json();
    EXPECT_EQ(res->status, 200) << path << ": " << res->body;
    EXPECT_EQ(res->get_header_value("Content-Type"), "application/json") << path;
    return json::parse(res->body, nullptr, false);
  }
  // A finished unit by a fresh worker.
  void FinishOne(int64_t worker) {
    LeaseGrant g;
    ASSERT_TRUE(c_->Lease(worker, &g).ok());
    ASSERT_TRUE(g.has_unit);
    Disposition d;
    ASSERT_TRUE(c_->Complete(worker, g.unit_id, g.token, Search(g.spec), 1, "cpu", &d).ok());
  }

  std::unique_ptr<DashboardData> data_;
  std::unique_ptr<DashboardServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(DashboardServerTest, AnswersFollowTheCoordinator) {
  Serve(0);
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, 4 << 14, Kinds::kDelayAndClass, 1 << 14, 0, &out).ok());
  json s = Get("/api/status");
  EXPECT_EQ(s["covered_prefix"], "1");
  EXPECT_EQ(s["target"], std::to_string(4 << 14));
  EXPECT_EQ(s["progress"], 0.0);
  EXPECT_EQ(s["units"]["pending"], 4);
  ASSERT_EQ(s["submissions"].size(), 1u);
  EXPECT_EQ(s["submissions"][0]["units_total"], 4);
  EXPECT_TRUE(s["eta_seconds"].is_null());

  const int64_t w = NewWorker();
  FinishOne(w);
  FinishOne(w);
  s = Get("/api/status");
  EXPECT_EQ(s["covered_prefix"], std::to_string(2 << 14));
  EXPECT_DOUBLE_EQ(s["progress"].get<double>(), ((2 << 14) - 1.0) / ((4 << 14) - 1.0));
  EXPECT_EQ(s["units"]["finished"], 2);
  EXPECT_EQ(s["submissions"][0]["units_finished"], 2);
  EXPECT_TRUE(s["eta_seconds"].is_number());

  // Records: the coordinator's merge, as JSON and as the CSV collatzctl server-records prints.
  const MergedRecords m = c_->Records();
  ASSERT_FALSE(m.delay_final.empty());
  json d = Get("/api/records?kind=delay");
  ASSERT_EQ(d["records"].size(), m.delay_final.size());
  EXPECT_EQ(d["records"].back()["n"], ToDecimal(m.delay_final.back().n));
  EXPECT_EQ(d["records"].back()["delay"], m.delay_final.back().delay);
  EXPECT_EQ(d["covered_prefix"], std::to_string(2 << 14));
  auto csv = client_->Get("/api/records?kind=class&format=csv");
  ASSERT_TRUE(csv);
  EXPECT_EQ(csv->status, 200);
  EXPECT_EQ(csv->body, FormatRecordsCsv(m.class_final, RecordCsvKind::kClass));
  EXPECT_NE(csv->get_header_value("Content-Disposition").find("class_records.csv"), std::string::npos);
  auto cands = client_->Get("/api/records?kind=delay&format=csv&list=candidates");
  ASSERT_TRUE(cands);
  EXPECT_EQ(cands->body, FormatRecordsCsv(m.delay_candidates, RecordCsvKind::kDelay));

  // Throughput: both units in the fake clock's minute, the last bucket of the hour.
  json t = Get("/api/throughput?range=hour");
  ASSERT_EQ(t["buckets"].size(), 60u);
  EXPECT_EQ(t["bucket_seconds"], 60);
  EXPECT_EQ(t["buckets"].back()["units"], 2);
  EXPECT_EQ(t["buckets"].back()["numbers"], std::to_string((2 << 14) - 1));
  EXPECT_EQ(t["buckets"].back()["stats_units"], 0);  // stats units count apart (none here)
  EXPECT_EQ(t["buckets"].back()["stats_numbers"], "0");
  EXPECT_EQ(Get("/api/throughput?range=week")["buckets"].size(), 168u);
  EXPECT_EQ(Get("/api/throughput?range=day")["buckets"].back()["units"], 2);

  // Workers and their states; a unit released as failed three times is quarantined.
  json ws = Get("/api/workers");
  ASSERT_EQ(ws["workers"].size(), 1u);
  EXPECT_EQ(ws["workers"][0]["state"], "idle");
  EXPECT_EQ(ws["workers"][0]["units_finished"], 2);
  EXPECT_EQ(ws["workers"][0]["numbers_finished"], std::to_string((2 << 14) - 1));
  for (int i = 0; i < 3; ++i) {
    LeaseGrant g;
    ASSERT_TRUE(c_->Lease(w, &g).ok());
    if (i == 0) EXPECT_EQ(Get("/api/workers")["workers"][0]["state"], "busy");
    ASSERT_TRUE(c_->Release(w, g.unit_id, g.token, true, "out of memory").ok());
  }
  ASSERT_TRUE(c_->FlushMerged().ok());  // final_records, as the server's sweeper writes them every second
  s = Get("/api/status");
  EXPECT_EQ(s["units"]["quarantined"], 1);
  ASSERT_EQ(s["quarantined_units"].size(), 1u);
  // (Records are found at the database's time, the quarantine at the fake clock's.)
  bool record_event = false, quarantine_event = false;
  for (const json& e : s["events"]) {
    record_event |= e["kind"] == "record";
    quarantine_event |= e["kind"] == "unit_quarantined" && e["at_ms"] == clock_.NowMs() &&
                        e["detail"] == "unit 3 [32768, 49152): released: out of memory";
  }
  EXPECT_TRUE(record_event && quarantine_event) << s["events"].dump();
  clock_.Advance(options_.lease_duration_ms + 1);
  EXPECT_EQ(Get("/api/workers")["workers"][0]["state"], "silent");
}

TEST_F(DashboardServerTest, SnapshotsAreSharedForMaxAge) {
  Serve(1000);
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, 4 << 14, Kinds::kDelay, 1 << 14, 0, &out).ok());
  EXPECT_EQ(Get("/api/status")["units"]["finished"], 0);
  FinishOne(NewWorker());
  EXPECT_EQ(Get("/api/status")["units"]["finished"], 0);  // the same snapshot
  clock_.Advance(1000);
  EXPECT_EQ(Get("/api/status")["units"]["finished"], 1);
}

TEST_F(DashboardServerTest, TheTokenIsRequiredAsBearerOrCookie) {
  Serve(0);
  httplib::Client anon("127.0.0.1", server_->port());
  auto res = anon.Get("/api/status");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_NE(res->body.find("token required"), std::string::npos);
  EXPECT_EQ(res->get_header_value("WWW-Authenticate"), "Bearer realm=\"collatz-server\"");
  res = anon.Get("/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_NE(res->body.find("/?token=TOKEN"), std::string::npos);
  res = anon.Get("/api/status", {{"Authorization", "Bearer wrong"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_NE(res->body.find("wrong token"), std::string::npos);
  res = anon.Get("/?token=wrong");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);

  // /?token=T sets a cookie and sends the browser to / without the token in the address.
  res = anon.Get("/?token=dash-token");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 303);
  EXPECT_EQ(res->get_header_value("Location"), "/");
  const std::string cookie = res->get_header_value("Set-Cookie");
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos);
  const std::string pair = cookie.substr(0, cookie.find(';'));
  res = anon.Get("/api/status", {{"Cookie", "other=1; " + pair}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  res = anon.Get("/api/status", {{"Cookie", pair + "00"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);

  // Without a token on the server everything is open.
  server_.reset();
  Serve(0, "");
  httplib::Client open("127.0.0.1", server_->port());
  res = open.Get("/api/workers");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST_F(DashboardServerTest, BadRequestsGetClearAnswers) {
  Serve(0);
  struct Case {
    std::string path;
    int status;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"/nope", 404, "no such path: /nope"},
      {"/api/status/x", 404, "no such path"},
      {"/api/records", 400, "'kind' is required"},
      {"/api/records?kind=both", 400, "bad value for 'kind': 'both' (one of: delay, class)"},
      {"/api/records?kind=delay&format=xml", 400, "bad value for 'format'"},
      {"/api/records?kind=delay&list=candidates", 400, "'list' goes with format=csv"},
      {"/api/records?kind=delay&kind=class", 400, "given more than once"},
      {"/api/throughput?range=year", 400, "bad value for 'range'"},
      {"/api/status?verbose=1", 400, "unknown query parameter 'verbose'"},
      {"/api/throughput?rnge=hour", 400, "allowed: range"},
      {"/api/workers?" + std::string(10000, 'x'), 414, "request line too long"},
      {"/api/records?kind=%FFdelay", 400, "bad value for 'kind': '\xEF\xBF\xBD" "delay'"},  // not UTF-8: U+FFFD
  };
  for (const Case& c : cases) {
    auto res = client_->Get(c.path.c_str());
    ASSERT_TRUE(res) << c.path;
    EXPECT_EQ(res->status, c.status) << c.path;
    EXPECT_NE(res->body.find(c.says), std::string::npos) << c.path.substr(0, 80) << ": " << res->body;
  }
  auto post = client_->Post("/api/status", "x", "text/plain");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(post->get_header_value("Allow"), "GET, HEAD");

  // The page and its script come from the server itself: nothing from elsewhere.
  auto page = client_->Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("<script src=\"/dashboard.js\"></script>"), std::string::npos);
  auto js = client_->Get("/dashboard.js");
  ASSERT_TRUE(js);
  EXPECT_EQ(js->status, 200);
  EXPECT_NE(js->body.find("/api/status"), std::string::npos);
  for (const std::string& body : {page->body, js->body}) {
    EXPECT_EQ(body.find("https://"), std::string::npos);
    EXPECT_EQ(body.find("http://"), body.find("http://www.w3.org/2000/svg"));  // only the SVG namespace
  }
  EXPECT_NE(page->get_header_value("Content-Security-Policy").find("default-src 'self'"), std::string::npos);
}

// With the server's authentication: an admin token (as bearer or through the cookie) opens
// the dashboard, a worker token gets 403, a revoked admin token 401 from its next request.
TEST_F(DashboardServerTest, StoredAdminTokensOpenItAndWorkerTokensDoNot) {
  std::unique_ptr<TokenStore> tokens;
  ASSERT_TRUE(TokenStore::Open(db_, &tokens).ok());
  TokenAuth auth("", tokens.get(), &clock_);
  std::string admin, worker;
  ASSERT_TRUE(auth.AddToken("ops", TokenRole::kAdmin, &admin).ok());
  ASSERT_TRUE(auth.AddToken("box", TokenRole::kWorker, &worker).ok());
  std::unique_ptr<DashboardReader> reader;
  ASSERT_TRUE(DashboardReader::Open(db_, &reader).ok());
  data_ = std::make_unique<DashboardData>(c_.get(), std::move(reader), &clock_, DashboardOptions{});
  server_ = std::make_unique<DashboardServer>(data_.get(), &auth);
  ASSERT_TRUE(server_->Listen("127.0.0.1:0").ok());
  httplib::Client http("127.0.0.1", server_->port());
  auto res = http.Get("/api/status", {{"Authorization", "Bearer " + admin}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  res = http.Get("/api/status", {{"Authorization", "Bearer " + worker}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403);
  EXPECT_NE(res->body.find("worker role"), std::string::npos) << res->body;
  res = http.Get(("/?token=" + worker).c_str());
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403);
  EXPECT_TRUE(res->get_header_value("Set-Cookie").empty());
  res = http.Get("/api/status");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  res = http.Get(("/?token=" + admin).c_str());
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 303);
  const std::string cookie = res->get_header_value("Set-Cookie");
  ASSERT_EQ(cookie.rfind("collatz_dashboard=", 0), 0u) << cookie;
  const std::string pair = cookie.substr(0, cookie.find(';'));
  res = http.Get("/api/workers", {{"Cookie", pair}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  ASSERT_TRUE(auth.AddToken("ops2", TokenRole::kAdmin, &worker).ok());
  ASSERT_TRUE(auth.RevokeToken("ops").ok());
  res = http.Get("/api/workers", {{"Cookie", pair}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  server_.reset();
}

}  // namespace
}  // namespace collatz::server
