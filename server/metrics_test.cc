// The coordinator's /metrics: a scrape reports units, workers and events as they happen.
#include "server/metrics.h"

#include <gtest/gtest.h>

#include <string>

#include "server/coordinator_test_fixture.h"
#include "tests/support/http_get.h"

namespace collatz::server {
namespace {

class ServerMetricsTest : public CoordinatorFixture {
 protected:
  ServerMetricsTest() : CoordinatorFixture("metrics_test_") {}
};

bool Has(const std::string& text, const std::string& line) { return text.find(line + "\n") != std::string::npos; }

TEST_F(ServerMetricsTest, ScrapesFollowLeasesResultsExpiriesAndRefusals) {
  ServerMetrics metrics(c_.get());
  ASSERT_TRUE(metrics.Listen("127.0.0.1:0").ok());
  ASSERT_GT(metrics.port(), 0);
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, 4 << 14, Kinds::kDelayAndClass, 1 << 14, 0, &out).ok());
  std::string text = metrics.Text();
  EXPECT_TRUE(Has(text, "collatz_server_units{state=\"pending\"} 4")) << text;
  EXPECT_TRUE(Has(text, "collatz_server_leases_total{purpose=\"search\"} 0")) << text;

  const int64_t a = NewWorker(), b = NewWorker();
  LeaseGrant g;
  ASSERT_TRUE(c_->Lease(a, &g).ok());
  Disposition d;
  ASSERT_TRUE(c_->Complete(a, g.unit_id, g.token, Search(g.spec), 1, "cpu", &d).ok());
  ASSERT_TRUE(c_->Complete(a, g.unit_id, g.token, Search(g.spec), 1, "cpu", &d).ok());  // a retry
  EXPECT_EQ(d, Disposition::kDuplicate);
  // A lease that runs out.
  ASSERT_TRUE(c_->Lease(b, &g).ok());
  clock_.Advance(options_.lease_duration_ms + 1);
  EXPECT_EQ(c_->ExpireLeases(), 1);
  // A false result: refused, and its worker flagged.
  ASSERT_TRUE(c_->Lease(b, &g).ok());
  UnitResult lie = Search(g.spec);
  lie.ladder.insert(lie.ladder.begin(), Record{27, 111});  // a record outside the unit
  EXPECT_FALSE(c_->Complete(b, g.unit_id, g.token, lie, 1, "cpu", &d).ok());

  text = testing_support::HttpGet(metrics.port(), "/metrics");
  EXPECT_NE(text.find("200 OK"), std::string::npos) << text;
  EXPECT_TRUE(Has(text, "collatz_server_units{state=\"finished\"} 1")) << text;
  EXPECT_TRUE(Has(text, "collatz_server_units{state=\"pending\"} 3")) << text;
  EXPECT_TRUE(Has(text, "collatz_server_leases_total{purpose=\"search\"} 3")) << text;
  EXPECT_TRUE(Has(text, "collatz_server_leases_expired_total 1")) << text;
  EXPECT_TRUE(Has(text, "collatz_server_results_total{outcome=\"accepted\"} 1")) << text;
  EXPECT_TRUE(Has(text, "collatz_server_results_total{outcome=\"duplicate\"} 1")) << text;
  EXPECT_TRUE(Has(text, "collatz_server_results_total{outcome=\"refused\"} 1")) << text;
  EXPECT_TRUE(Has(text, "collatz_server_workers{state=\"flagged\"} 1")) << text;
  EXPECT_TRUE(Has(text, "collatz_server_workers{state=\"idle\"} 1")) << text;
  EXPECT_TRUE(Has(text, "collatz_server_covered_prefix 16384")) << text;
  EXPECT_NE(text.find("# TYPE collatz_server_class_member_searches_total counter"), std::string::npos) << text;
  EXPECT_NE(text.find("collatz_server_known_points 0"), std::string::npos) << text;
}

// Each worker's unit limit as its last lease request gave it; none before its first.
TEST_F(ServerMetricsTest, WorkersUnitLimitsFollowTheirLeaseRequests) {
  ServerMetrics metrics(c_.get());
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, 4 << 14, Kinds::kDelayAndClass, 1 << 14, 0, &out).ok());
  const int64_t limited = NewWorker(), unlimited = NewWorker(), silent = NewWorker();
  LeaseGrant g;
  ASSERT_TRUE(c_->Lease(limited, false, u128{1} << 20, &g).ok());
  ASSERT_TRUE(c_->Lease(unlimited, false, 0, &g).ok());
  const std::string series = "collatz_server_worker_max_unit_numbers{worker=\"";
  std::string text = metrics.Text();
  EXPECT_TRUE(Has(text, series + std::to_string(limited) + "\"} 1048576")) << text;
  EXPECT_TRUE(Has(text, series + std::to_string(unlimited) + "\"} 0")) << text;
  EXPECT_EQ(text.find(series + std::to_string(silent) + "\"}"), std::string::npos) << text;
  // A later request's limit replaces the earlier one.
  Disposition d;
  ASSERT_TRUE(c_->Complete(unlimited, g.unit_id, g.token, Search(g.spec), 1, "cpu", &d).ok());
  ASSERT_TRUE(c_->Lease(limited, false, u128{1} << 14, &g).ok());
  text = metrics.Text();
  EXPECT_TRUE(Has(text, series + std::to_string(limited) + "\"} 16384")) << text;
}

TEST_F(ServerMetricsTest, ABusyAddressIsAClearError) {
  ServerMetrics first(c_.get()), second(c_.get());
  ASSERT_TRUE(first.Listen("127.0.0.1:0").ok());
  const Status st = second.Listen("127.0.0.1:" + std::to_string(first.port()));
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("cannot serve metrics"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace collatz::server
