// The trust model (docs/PROTOCOL.md, "Trust model"): checks come from independent workers,
// a revoked result takes along everything that depended on it, a checker flagged later has
// its checks made again, and the merge is held against the published records.
#include <gtest/gtest.h>

#include "core/published_points.h"
#include "server/coordinator_test_fixture.h"

namespace collatz::server {
namespace {

using grpc::StatusCode;

class TrustTest : public CoordinatorFixture {
 protected:
  TrustTest() : CoordinatorFixture("trust_test_") {}

  bool Flagged(int64_t worker) {
    for (const WorkerReport& w : c_->ListWorkers()) {
      if (w.w.id == worker) return w.w.flagged;
    }
    return false;
  }
  // Leases, searches honestly (or with `tamper`) and completes; the grant.
  LeaseGrant Work(int64_t worker, const std::function<void(UnitResult*)>& tamper = nullptr,
                  grpc::Status* status = nullptr) {
    LeaseGrant g;
    EXPECT_TRUE(c_->Lease(worker, &g).ok());
    if (!g.has_unit) return g;
    UnitResult r = Search(g.spec);
    if (tamper) tamper(&r);
    Disposition d;
    grpc::Status st = c_->Complete(worker, g.unit_id, g.token, r, 1, "cpu", &d);
    if (status != nullptr) *status = st;
    else EXPECT_TRUE(st.ok()) << st.error_message();
    return g;
  }
  static void OmitLastRecord(UnitResult* r) {
    if (!r->ladder.empty()) r->ladder.pop_back();
  }
  static void Forge(UnitResult* r) { r->candidates += 1; }  // refused by verification: flags at once
};

// A result counted into the merge and revoked later takes along the unit searched with a
// table made from it and the lease in flight with such a table, not a unit searched before.
TEST_F(TrustTest, RevokedResultTakesItsDependentsAlong) {
  options_.check_published = false;  // the published check would catch the lie by itself
  Reopen();
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, 5 << 12, Kinds::kDelay, 1 << 12, 0, &out).ok());
  ASSERT_EQ(out.units, 5u);
  const int64_t liar = NewWorker(), honest = NewWorker();
  LeaseGrant early;  // [4096, 8192): leased before the lie counts
  LeaseGrant lie;
  ASSERT_TRUE(c_->Lease(liar, &lie).ok());
  ASSERT_TRUE(lie.spec.begin == 1);
  ASSERT_TRUE(c_->Lease(honest, &early).ok());
  UnitResult r = Search(lie.spec);
  ASSERT_FALSE(r.ladder.empty());
  OmitLastRecord(&r);
  Disposition d;
  ASSERT_TRUE(c_->Complete(liar, lie.unit_id, lie.token, r, 1, "cpu", &d).ok());  // passes verification
  ASSERT_TRUE(c_->Complete(honest, early.unit_id, early.token, Search(early.spec), 1, "cpu", &d).ok());
  const LeaseGrant later = Work(honest);  // [8192, ...): its table holds the lie
  ASSERT_TRUE(later.has_unit);
  ASSERT_FALSE(later.spec.known_records.empty());
  LeaseGrant in_flight;
  ASSERT_TRUE(c_->Lease(honest, &in_flight).ok());
  ASSERT_TRUE(in_flight.has_unit);
  EXPECT_EQ(c_->GetStatus().finished, 3u);

  grpc::Status st;
  Work(liar, Forge, &st);  // caught: flagged, its results revoked
  EXPECT_EQ(st.error_code(), StatusCode::PERMISSION_DENIED);
  ASSERT_TRUE(Flagged(liar));
  const CoordinatorStatus s = c_->GetStatus();
  EXPECT_EQ(s.finished, 1u);  // only the unit searched before the lie counted
  EXPECT_TRUE(s.covered_prefix == 1);
  UnitResult ignored = Search(in_flight.spec);
  EXPECT_FALSE(c_->Complete(honest, in_flight.unit_id, in_flight.token, ignored, 1, "cpu", &d).ok());
  // Searched again, everything is exact.
  for (int i = 0; i < 20 && Work(honest).has_unit; ++i) {
  }
  const MergedRecords m = c_->Records();
  EXPECT_TRUE(m.covered_prefix == (5 << 12));
  Reopen();  // what depended on what survives a restart
  EXPECT_EQ(c_->GetStatus().finished, 5u);
}

// Below the published bound the merge must equal the published delay records: a result
// that leaves one out flags its worker and is searched again, with no audit at all.
TEST_F(TrustTest, MergeHeldAgainstThePublishedRecords) {
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, 1 << 14, Kinds::kDelay, 1 << 12, 0, &out).ok());
  const int64_t liar = NewWorker(), honest = NewWorker();
  Work(liar, OmitLastRecord);
  EXPECT_FALSE(Flagged(liar));  // verification cannot see it
  LeaseGrant g;
  ASSERT_TRUE(c_->Lease(honest, &g).ok());  // the next lease's merge shows it
  EXPECT_TRUE(Flagged(liar));
  EXPECT_FALSE(Flagged(honest));
  ASSERT_TRUE(g.has_unit);
  Disposition d;
  ASSERT_TRUE(c_->Complete(honest, g.unit_id, g.token, Search(g.spec), 1, "cpu", &d).ok());
  for (int i = 0; i < 20 && Work(honest).has_unit; ++i) {
  }
  const MergedRecords m = c_->Records();
  std::vector<Record> want;
  for (const Record& r : PublishedDelayPoints()) {
    if (r.n < (1 << 14)) want.push_back(r);
  }
  EXPECT_EQ(m.delay_final, want);
}

// --double-check all: a result counts only once a worker of another host, GPU and token
// agrees; the covered prefix runs ahead of the checked one meanwhile.
TEST_F(TrustTest, AllWaitsForAnIndependentChecker) {
  options_.double_check = DoubleCheck::kAll;
  Reopen();
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, 1 << 12, Kinds::kDelay, 1 << 12, 0, &out).ok());
  const int64_t a = NewWorker("node-a"), same_host = NewWorker("node-a"), same_gpu = NewWorker("node-x", {{"H200", "GPU-1"}});
  Work(a);
  CoordinatorStatus s = c_->GetStatus();
  EXPECT_TRUE(s.covered_prefix == (1 << 12));
  EXPECT_TRUE(s.checked_prefix == 1);
  EXPECT_EQ(s.double_check, "all");
  EXPECT_TRUE(c_->Records().delay_final.empty());
  LeaseGrant g;
  ASSERT_TRUE(c_->Lease(same_host, &g).ok());
  EXPECT_FALSE(g.has_unit);  // the same host never checks
  // A GPU worker registered on another host with a GPU the checker shares.
  const int64_t b = NewWorker("node-b", {{"H200", "GPU-1"}});
  (void)same_gpu;
  ASSERT_TRUE(c_->Lease(b, &g).ok());
  ASSERT_TRUE(g.has_unit);
  ASSERT_EQ(g.purpose, LeasePurpose::kAudit);
  Disposition d;
  ASSERT_TRUE(c_->Complete(b, g.unit_id, g.token, Search(g.spec), 1, "cpu", &d).ok());
  EXPECT_EQ(d, Disposition::kAuditMatched);
  s = c_->GetStatus();
  EXPECT_TRUE(s.checked_prefix == (1 << 12));
  EXPECT_FALSE(c_->Records().delay_final.empty());
}

// Two workers sharing a GPU (one card registered under two host names) never check each other.
TEST_F(TrustTest, SharedGpuIsNoIndependentCheck) {
  options_.double_check = DoubleCheck::kAll;
  Reopen();
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, 1 << 12, Kinds::kDelay, 1 << 12, 0, &out).ok());
  const int64_t a = NewWorker("node-a", {{"H200", "GPU-1"}}), fake = NewWorker("elsewhere", {{"H200", "GPU-1"}});
  Work(a);
  LeaseGrant g;
  ASSERT_TRUE(c_->Lease(fake, &g).ok());
  EXPECT_FALSE(g.has_unit);
}

// A checker flagged later: the units it passed are checked again by another worker.
TEST_F(TrustTest, UnitsPassedByAFlaggedCheckerAreCheckedAgain) {
  options_.double_check = DoubleCheck::kAll;
  Reopen();
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, 2 << 12, Kinds::kDelay, 1 << 12, 0, &out).ok());
  const int64_t a = NewWorker(), checker = NewWorker(), third = NewWorker();
  Work(a);  // unit 1
  const LeaseGrant check = Work(checker);
  ASSERT_EQ(check.purpose, LeasePurpose::kAudit);
  EXPECT_EQ(c_->GetStatus().audits_passed, 1u);
  grpc::Status st;
  Work(checker, Forge, &st);  // unit 2, forged: the checker is flagged
  ASSERT_TRUE(Flagged(checker));
  CoordinatorStatus s = c_->GetStatus();
  EXPECT_EQ(s.audits_pending, 1u);  // unit 1 waits for another check
  EXPECT_TRUE(s.checked_prefix == 1);
  const LeaseGrant again = Work(third);
  EXPECT_EQ(again.purpose, LeasePurpose::kAudit);
  EXPECT_EQ(again.unit_id, check.unit_id);
  EXPECT_TRUE(c_->GetStatus().checked_prefix == (1 << 12));
}

// A check repeats its unit with the record table its search had, though results below the
// unit were counted meanwhile: from the kept merge (no merge again), and after a restart,
// which keeps none, from the counted results below the unit (one merge again, counted).
TEST_F(TrustTest, ChecksRepeatTheRecordTableTheirSearchHad) {
  options_.double_check = DoubleCheck::kAll;
  Reopen();
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, 3 << 12, Kinds::kDelay, 1 << 12, 0, &out).ok());
  const int64_t a = NewWorker(), b = NewWorker();
  auto complete = [&](int64_t worker, const LeaseGrant& g, Disposition want) {
    Disposition d;
    ASSERT_TRUE(c_->Complete(worker, g.unit_id, g.token, Search(g.spec), 1, "cpu", &d).ok());
    EXPECT_EQ(d, want);
  };
  auto same_table = [](const LeaseGrant& check, const LeaseGrant& search) {
    EXPECT_EQ(check.purpose, LeasePurpose::kAudit);
    EXPECT_EQ(check.unit_id, search.unit_id);
    EXPECT_TRUE(check.spec.records_complete_below == search.spec.records_complete_below)
        << ToDecimal(check.spec.records_complete_below) << " vs " << ToDecimal(search.spec.records_complete_below);
    EXPECT_EQ(check.spec.known_records, search.spec.known_records);
  };
  Work(a);  // unit 1, awaiting its check
  LeaseGrant s2, s3, c1, c2, c3;
  ASSERT_TRUE(c_->Lease(a, &s2).ok());  // unit 2: nothing counted below it yet
  complete(a, s2, Disposition::kAccepted);
  ASSERT_TRUE(c_->Lease(b, &c1).ok());  // unit 1's check: counted, the checked prefix moves up
  ASSERT_EQ(c1.unit_id, 1);
  complete(b, c1, Disposition::kAuditMatched);
  ASSERT_TRUE(c_->GetStatus().checked_prefix == (1 << 12));
  ASSERT_TRUE(c_->Lease(b, &c2).ok());
  same_table(c2, s2);
  EXPECT_TRUE(c2.spec.records_complete_below == 0);  // not the current table, complete below 2^12
  ASSERT_TRUE(c_->Lease(a, &s3).ok());  // unit 3, with unit 1 counted below it
  EXPECT_TRUE(s3.spec.records_complete_below == (1 << 12));
  complete(a, s3, Disposition::kAccepted);
  complete(b, c2, Disposition::kAuditMatched);  // unit 2 counts after unit 3's search
  EXPECT_EQ(c_->Counters().check_table_merges, 0u);
  Reopen();
  ASSERT_TRUE(c_->Lease(b, &c3).ok());
  same_table(c3, s3);
  EXPECT_EQ(c_->Counters().check_table_merges, 1u);
  complete(b, c3, Disposition::kAuditMatched);
  EXPECT_TRUE(c_->GetStatus().checked_prefix == (3 << 12));
}

// The kept merges are pruned to those still named: after some 300 merges, the merge of a
// search whose check is still awaited is kept, so its check merges nothing again, though a
// unit below it counted after its search (without the kept merge it would: a mutant that
// prunes every merge but the current one fails here).
TEST_F(TrustTest, PrunedMergeHistoryKeepsTheTablesOfAwaitedChecks) {
  options_.double_check = DoubleCheck::kAll;
  Reopen();
  SubmitOutcome out;
  constexpr int kUnits = 302;
  ASSERT_TRUE(c_->Submit(1, static_cast<u128>(kUnits) << 12, Kinds::kDelay, 1 << 12, 0, &out).ok());
  // Neither c (same GPU) nor d (same host) may check a's unit; d checks c's.
  const int64_t a = NewWorker("host-a", {{"H200", "GPU-1"}}), c = NewWorker("host-c", {{"H200", "GPU-1"}}),
                d = NewWorker("host-a", {{"H200", "GPU-2"}});
  ASSERT_EQ(Work(c).unit_id, 1);
  const LeaseGrant first = Work(a);  // unit 2, searched before unit 1 below it counts
  ASSERT_EQ(Work(d).unit_id, 1);     // unit 1's check: counted after unit 2's search
  for (int i = 2; i < kUnits; ++i) {
    ASSERT_EQ(Work(c).purpose, LeasePurpose::kSearch) << i;
    ASSERT_EQ(Work(d).purpose, LeasePurpose::kAudit) << i;
  }
  EXPECT_EQ(c_->GetStatus().audits_pending, 1u);
  const int64_t b = NewWorker("host-b", {{"H200", "GPU-3"}});
  const LeaseGrant check = Work(b);
  EXPECT_EQ(check.purpose, LeasePurpose::kAudit);
  EXPECT_EQ(check.unit_id, first.unit_id);
  EXPECT_EQ(check.spec.known_records, first.spec.known_records);
  EXPECT_EQ(c_->Counters().check_table_merges, 0u);
}

// Under `all`, a fleet of one host cannot check itself: status counts the pending checks no
// active worker may take, until a worker of another host takes part (and none once it has);
// a worker not seen for longer than a lease does not count as able to check.
TEST_F(TrustTest, StatusCountsChecksNoActiveWorkerMayTake) {
  options_.double_check = DoubleCheck::kAll;
  Reopen();
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, 2 << 12, Kinds::kDelay, 1 << 12, 0, &out).ok());
  const int64_t a = NewWorker("node-a", {{"H200", "GPU-1"}}), b = NewWorker("node-a", {{"H200", "GPU-2"}});
  Work(a);
  Work(b);
  CoordinatorStatus s = c_->GetStatus();
  EXPECT_EQ(s.audits_pending, 2u);
  EXPECT_EQ(s.audits_blocked, 2u);
  EXPECT_TRUE(s.checked_prefix == 1);
  // A worker of another host, seen now: every check has a taker.
  const int64_t other = NewWorker("node-b", {{"H200", "GPU-3"}});
  s = c_->GetStatus();
  EXPECT_EQ(s.audits_pending, 2u);
  EXPECT_EQ(s.audits_blocked, 0u);
  // Silent for longer than a lease: it no longer counts.
  clock_.Advance(options_.lease_duration_ms + 1);
  EXPECT_EQ(c_->GetStatus().audits_blocked, 2u);
  // Back: it checks both, and nothing is pending.
  EXPECT_EQ(Work(other).purpose, LeasePurpose::kAudit);
  EXPECT_EQ(Work(other).purpose, LeasePurpose::kAudit);
  s = c_->GetStatus();
  EXPECT_EQ(s.audits_pending, 0u);
  EXPECT_EQ(s.audits_blocked, 0u);
  EXPECT_TRUE(s.checked_prefix == (2 << 12));
}

// Adaptive: a new worker is checked every time; agreeing checks lower the rate towards the
// floor; a disagreement resets it.
TEST_F(TrustTest, AdaptiveRateFallsWithTrustAndNeverBelowTheFloor) {
  EXPECT_DOUBLE_EQ(AdaptiveCheckProbability(0, 0.05), 1.0);
  EXPECT_DOUBLE_EQ(AdaptiveCheckProbability(2, 0.05), 0.5);
  EXPECT_DOUBLE_EQ(AdaptiveCheckProbability(1000, 0.05), 0.05);
  options_.double_check = DoubleCheck::kAdaptive;
  Reopen();
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, 1 << 16, Kinds::kDelay, 1 << 10, 0, &out).ok());
  const int64_t a = NewWorker(), b = NewWorker();
  int checks_of_a = 0, units_of_a = 0;
  for (int i = 0; i < 400; ++i) {
    LeaseGrant g;
    ASSERT_TRUE(c_->Lease(i % 2 ? b : a, &g).ok());
    if (!g.has_unit) break;
    Disposition d;
    ASSERT_TRUE(c_->Complete(i % 2 ? b : a, g.unit_id, g.token, Search(g.spec), 1, "cpu", &d).ok());
    if (g.purpose == LeasePurpose::kAudit && i % 2) ++checks_of_a;
    if (g.purpose == LeasePurpose::kSearch && !(i % 2)) ++units_of_a;
  }
  EXPECT_GT(units_of_a, 20);
  EXPECT_LT(checks_of_a, units_of_a / 2);  // trust earned: most of a's results were not checked
  EXPECT_GE(checks_of_a, 3);
  EXPECT_TRUE(c_->GetStatus().checked_prefix == (1 << 16));
}

}  // namespace
}  // namespace collatz::server
