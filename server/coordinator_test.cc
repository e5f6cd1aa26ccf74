// The coordinator's logic with a fake clock (no sleeps): leases, expiry, re-issue, late
// and duplicate results, stale tokens, quarantine, lying workers, audits, restarts.
#include "server/coordinator.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <sqlite3.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>

#include "core/class_members.h"
#include "core/cpu_engine.h"
#include "core/import_check.h"
#include "core/published_points.h"
#include "core/records_csv.h"
#include "core/test_support.h"
#include "core/unit_spec.h"
#include "core/work_hash.h"
#include "server/coordinator_test_fixture.h"
#include "core/result_verifier.h"

namespace collatz::server {
namespace {

using grpc::StatusCode;

class CoordinatorTest : public CoordinatorFixture {
 protected:
  CoordinatorTest() : CoordinatorFixture("coord_test_") {}

  // Worker a finishes [2^14, 2^15) with its honest result changed by `change`; after a
  // restart (so the stored result is what the database holds), worker b audits it honestly.
  Disposition AuditOfChangedResult(const std::function<void(UnitResult*)>& change) {
    options_.audit_fraction = 1.0;
    Reopen();
    SubmitOutcome out;
    EXPECT_TRUE(c_->Submit(1 << 14, 1 << 15, Kinds::kDelayAndClass, 1 << 14, 0, &out).ok());
    const int64_t a = NewWorker(), b = NewWorker();
    LeaseGrant g = LeaseOne(a);
    EXPECT_TRUE(g.has_unit);
    UnitResult stored = Search(g.spec);
    change(&stored);
    Disposition d = Disposition::kAccepted;
    grpc::Status st = c_->Complete(a, g.unit_id, g.token, stored, 1, "cpu", &d);
    EXPECT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(d, Disposition::kAccepted);
    Reopen();
    LeaseGrant audit = LeaseOne(b);
    EXPECT_EQ(audit.purpose, LeasePurpose::kAudit);
    const UnitResult fresh = Search(audit.spec);
    EXPECT_EQ(fresh.work_hash_version, kWorkHashVersion);
    EXPECT_NE(fresh.work_hash, stored.work_hash);
    st = c_->Complete(b, audit.unit_id, audit.token, fresh, 1, "cpu", &d);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return d;
  }

  // Leases the next unit for `worker` and searches it honestly.
  LeaseGrant LeaseOne(int64_t worker) {
    LeaseGrant g;
    grpc::Status st = c_->Lease(worker, &g);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return g;
  }
};

TEST_F(CoordinatorTest, SubmitCutsUnitsTrimsOverlapsAndRefusesBadRanges) {
  SubmitOutcome out;
  EXPECT_EQ(c_->Submit(10, 10, Kinds::kDelayAndClass, 0, 0, &out).error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(c_->Submit(20, 10, Kinds::kDelayAndClass, 0, 0, &out).error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(c_->Submit(0, 10, Kinds::kDelayAndClass, 0, 0, &out).error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(c_->Submit(1, Pow2(100), Kinds::kDelayAndClass, 1, 0, &out).error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(c_->GetStatus().pending, 0u);

  ASSERT_TRUE(c_->Submit(1, 1000, Kinds::kDelayAndClass, 300, 0, &out).ok());
  EXPECT_EQ(out.units, 4u);  // [1,300) [300,600) [600,900) [900,1000) (server/submission_units.h)
  ASSERT_TRUE(c_->Submit(500, 1500, Kinds::kDelayAndClass, 300, 0, &out).ok());
  ASSERT_EQ(out.accepted.size(), 1u);
  EXPECT_TRUE(out.accepted[0].first == 1000 && out.accepted[0].second == 1500);
  EXPECT_EQ(out.units, 2u);
  EXPECT_EQ(c_->Submit(1, 1500, Kinds::kDelay, 300, 0, &out).error_code(), StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(c_->GetStatus().pending, 6u);
  EXPECT_TRUE(c_->GetStatus().numbers_total == 1499);
  // A class search may not claim ranges that were searched for delay records only.
  ASSERT_TRUE(c_->Submit(2000, 3000, Kinds::kDelay, 0, 0, &out).ok());
  EXPECT_EQ(c_->Submit(1500, 2500, Kinds::kDelayAndClass, 0, 0, &out).error_code(), StatusCode::FAILED_PRECONDITION);

  uint64_t removed = 0;
  EXPECT_EQ(c_->Cancel(99, &removed).error_code(), StatusCode::NOT_FOUND);
  ASSERT_TRUE(c_->Cancel(out.submission_id, &removed).ok());
  EXPECT_EQ(removed, 1u);
  EXPECT_EQ(c_->Cancel(out.submission_id, &removed).error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(c_->GetStatus().pending, 6u);
}

// A submission without a unit size takes --unit-size, a delay+class one the smaller of it and
// --class-unit-size (a delay-only campaign's 2^54 would be an hour a class unit); a named size wins.
TEST_F(CoordinatorTest, SubmissionsWithoutAUnitSizeTakeTheirKindsDefault) {
  options_.default_unit_size = Pow2(12);
  options_.default_class_unit_size = Pow2(10);
  Reopen();
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(Pow2(20), Pow2(20) + Pow2(12), Kinds::kDelay, 0, 0, &out).ok());
  EXPECT_EQ(out.units, 1u);
  ASSERT_TRUE(c_->Submit(Pow2(21), Pow2(21) + Pow2(12), Kinds::kDelayAndClass, 0, 0, &out).ok());
  EXPECT_EQ(out.units, 4u);
  ASSERT_TRUE(c_->Submit(Pow2(22), Pow2(22) + Pow2(12), Kinds::kDelayAndClass, Pow2(12), 0, &out).ok());
  EXPECT_EQ(out.units, 1u);
  options_.default_class_unit_size = Pow2(14);  // above --unit-size: the smaller one
  Reopen();
  ASSERT_TRUE(c_->Submit(Pow2(23), Pow2(23) + Pow2(13), Kinds::kDelayAndClass, 0, 0, &out).ok());
  EXPECT_EQ(out.units, 2u);
}

TEST_F(CoordinatorTest, LeaseExpiryReissueLateAndDuplicateResults) {
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, 1 << 16, Kinds::kDelayAndClass, 1 << 16, 0, &out).ok());
  const int64_t w1 = NewWorker(), w2 = NewWorker();
  LeaseGrant g1 = LeaseOne(w1);
  ASSERT_TRUE(g1.has_unit);
  LeaseGrant none = LeaseOne(w2);
  EXPECT_FALSE(none.has_unit);  // the only unit is leased

  // A heartbeat extends the lease: no expiry at the old deadline.
  clock_.Advance(50'000);
  int64_t deadline = 0;
  bool stop = true;
  ASSERT_TRUE(c_->Heartbeat(w1, g1.unit_id, g1.token, 100, &deadline, &stop).ok());
  EXPECT_FALSE(stop);
  EXPECT_EQ(deadline, clock_.NowMs() + options_.lease_duration_ms);
  clock_.Advance(50'000);
  EXPECT_EQ(c_->ExpireLeases(), 0);

  // Past the deadline: the unit goes back to the queue and is re-issued with a new token.
  clock_.Advance(10'001);
  EXPECT_EQ(c_->ExpireLeases(), 1);
  EXPECT_EQ(c_->GetStatus().pending, 1u);
  LeaseGrant g2 = LeaseOne(w2);
  ASSERT_TRUE(g2.has_unit);
  EXPECT_EQ(g2.unit_id, g1.unit_id);
  EXPECT_NE(g2.token, g1.token);

  // The late result of the expired lease is accepted once...
  const UnitResult r = Search(g1.spec);
  Disposition d;
  ASSERT_TRUE(c_->Complete(w1, g1.unit_id, g1.token, r, 1.0, "cpu", &d).ok());
  EXPECT_EQ(d, Disposition::kAccepted);
  // ...the re-issued lease learns it may stop, and its result is a duplicate, as is a retry.
  ASSERT_TRUE(c_->Heartbeat(w2, g2.unit_id, g2.token, 100, &deadline, &stop).ok());
  EXPECT_TRUE(stop);
  ASSERT_TRUE(c_->Complete(w2, g2.unit_id, g2.token, Search(g2.spec), 1.0, "cpu", &d).ok());
  EXPECT_EQ(d, Disposition::kDuplicate);
  ASSERT_TRUE(c_->Complete(w1, g1.unit_id, g1.token, r, 1.0, "cpu", &d).ok());
  EXPECT_EQ(d, Disposition::kDuplicate);

  const CoordinatorStatus s = c_->GetStatus();
  EXPECT_EQ(s.finished, 1u);
  EXPECT_TRUE(s.covered_prefix == (1 << 16));
  // One unit, one result row: nothing counted twice, and it survives a restart.
  Reopen();
  EXPECT_EQ(c_->GetStatus().finished, 1u);
  EXPECT_EQ(c_->ListWorkers()[0].w.units_finished + c_->ListWorkers()[1].w.units_finished, 1u);
}

// A worker's lease limit (LeaseRequest.max_unit_numbers: a CPU worker in a GPU campaign) skips
// larger units, first searches and checks alike, in queue order, and holds across expiry,
// re-queueing and a restart; a worker without a limit takes the larger units.
TEST_F(CoordinatorTest, WorkersLeaseNoUnitAboveTheirLimit) {
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1 << 16, (1 << 16) + (1 << 14), Kinds::kDelay, 1 << 14, 0, &out).ok());  // one large unit
  ASSERT_TRUE(c_->Submit(1 << 18, (1 << 18) + (1 << 11), Kinds::kDelay, 1 << 10, 0, &out).ok());  // two small ones
  const int64_t small = NewWorker(), any = NewWorker(), checker = NewWorker();
  const u128 limit = 1 << 12;
  auto lease = [&](int64_t worker, u128 max) {
    LeaseGrant g;
    const grpc::Status st = c_->Lease(worker, false, max, &g);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return g;
  };
  // The large unit comes first in the queue; the limited worker gets the small ones.
  LeaseGrant s1 = lease(small, limit);
  ASSERT_TRUE(s1.has_unit);
  EXPECT_TRUE(s1.spec.begin == (1 << 18) && s1.spec.end - s1.spec.begin == (1 << 10));
  LeaseGrant s2 = lease(small, limit);
  ASSERT_TRUE(s2.has_unit);
  EXPECT_TRUE(s2.spec.begin == (1 << 18) + (1 << 10));
  Disposition d;
  ASSERT_TRUE(c_->Complete(small, s1.unit_id, s1.token, Search(s1.spec), 1.0, "cpu", &d).ok());
  ASSERT_TRUE(c_->Complete(small, s2.unit_id, s2.token, Search(s2.spec), 1.0, "cpu", &d).ok());
  EXPECT_FALSE(lease(small, limit).has_unit);  // only the large unit is left (the small ones' checks are its own)
  Reopen();                                    // the queue rebuilt from the database
  EXPECT_FALSE(lease(small, limit).has_unit);
  // A lease that expires puts the large unit back; still not for the limited worker.
  LeaseGrant big = lease(any, 0);
  ASSERT_TRUE(big.has_unit);
  EXPECT_TRUE(big.spec.begin == (1 << 16) && big.spec.end - big.spec.begin == (1 << 14));
  clock_.Advance(options_.lease_duration_ms + 1);
  EXPECT_GE(c_->ExpireLeases(), 1);
  EXPECT_FALSE(lease(small, limit).has_unit);
  big = lease(any, 0);
  ASSERT_TRUE(big.has_unit);
  EXPECT_TRUE(big.spec.begin == (1 << 16));
  options_.audit_fraction = 1.0;  // from here on every result is checked
  Reopen();
  ASSERT_TRUE(c_->Complete(any, big.unit_id, big.token, Search(big.spec), 1.0, "cpu", &d).ok());
  // Its check is too large for the limited worker as well; an unlimited one takes it.
  EXPECT_FALSE(lease(small, limit).has_unit);
  LeaseGrant check = lease(checker, 0);
  ASSERT_TRUE(check.has_unit);
  EXPECT_EQ(check.purpose, LeasePurpose::kAudit);
  EXPECT_EQ(check.unit_id, big.unit_id);
  // A limit as large as the unit is no obstacle.
  ASSERT_TRUE(c_->Submit(1 << 20, (1 << 20) + (1 << 14), Kinds::kDelay, 1 << 14, 0, &out).ok());
  EXPECT_TRUE(lease(small, 1 << 14).has_unit);
  // ListWorkers reports each worker's last limit (0: none), none for a worker that has not
  // asked since the server started.
  const int64_t idle = NewWorker();
  std::map<int64_t, std::optional<u128>> limits;
  for (const WorkerReport& r : c_->ListWorkers()) limits[r.w.id] = r.max_unit_numbers;
  EXPECT_TRUE(limits.at(small) == std::optional<u128>(1 << 14));
  EXPECT_TRUE(limits.at(checker) == std::optional<u128>(0));
  EXPECT_FALSE(limits.at(idle).has_value());
}

// Lease calls skip the scan for expired leases until the earliest deadline (a fleet holds
// thousands of leases): still every lease expires exactly at its deadline, an extended one
// at its new deadline, whichever call comes first.
TEST_F(CoordinatorTest, LeasesExpireAtTheirDeadlinesWhenLeaseCallsSkipTheScan) {
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, 1 << 14, Kinds::kDelay, 1 << 12, 0, &out).ok());
  const int64_t w1 = NewWorker(), w2 = NewWorker();
  const LeaseGrant g1 = LeaseOne(w1);  // deadline t0 + 60 s
  clock_.Advance(20'000);
  const LeaseGrant g2 = LeaseOne(w1);  // t0 + 80 s
  clock_.Advance(39'999);
  const LeaseGrant g3 = LeaseOne(w2);
  ASSERT_TRUE(g1.has_unit && g2.has_unit && g3.has_unit);
  EXPECT_NE(g3.unit_id, g1.unit_id);  // 1 ms early: not expired
  int64_t deadline = 0;
  bool stop = true;
  ASSERT_TRUE(c_->Heartbeat(w1, g1.unit_id, g1.token, 0, &deadline, &stop).ok());  // now t0 + 119.999 s
  clock_.Advance(1);
  const LeaseGrant g4 = LeaseOne(w2);
  ASSERT_TRUE(g4.has_unit);
  EXPECT_NE(g4.unit_id, g1.unit_id);  // extended
  EXPECT_FALSE(LeaseOne(w2).has_unit);  // all four units leased
  clock_.Advance(19'999);
  EXPECT_FALSE(LeaseOne(w2).has_unit);
  clock_.Advance(1);
  const LeaseGrant again2 = LeaseOne(w2);  // exactly at g2's deadline
  EXPECT_TRUE(again2.has_unit && again2.unit_id == g2.unit_id);
  clock_.Advance(39'998);
  EXPECT_FALSE(LeaseOne(w2).has_unit);
  clock_.Advance(1);
  const LeaseGrant again1 = LeaseOne(w2);  // exactly at g1's extended deadline
  EXPECT_TRUE(again1.has_unit && again1.unit_id == g1.unit_id);
  EXPECT_EQ(c_->ExpireLeases(), 0);  // nothing left behind for the sweeper
}

TEST_F(CoordinatorTest, BadRequestsGetPreciseCodesAndChangeNothing) {
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, 4096, Kinds::kDelay, 0, 0, &out).ok());
  const int64_t w1 = NewWorker(), w2 = NewWorker();
  LeaseGrant g = LeaseOne(w1);
  ASSERT_TRUE(g.has_unit);
  const UnitResult r = Search(g.spec);
  Disposition d;
  int64_t deadline;
  bool stop;
  EXPECT_EQ(c_->Complete(w1, 12345, g.token, r, 1, "cpu", &d).error_code(), StatusCode::NOT_FOUND);
  EXPECT_EQ(c_->Complete(w1, g.unit_id, std::string(32, 'a'), r, 1, "cpu", &d).error_code(),
            StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(c_->Complete(w2, g.unit_id, g.token, r, 1, "cpu", &d).error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(c_->Complete(999, g.unit_id, g.token, r, 1, "cpu", &d).error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(c_->Heartbeat(w1, 12345, g.token, 0, &deadline, &stop).error_code(), StatusCode::NOT_FOUND);
  EXPECT_EQ(c_->Lease(999, &g).error_code(), StatusCode::NOT_FOUND);
  g = LeaseGrant();
  // Released: the token is stale from then on.
  LeaseGrant held;
  ASSERT_TRUE(c_->Lease(w1, &held).ok());
  EXPECT_FALSE(held.has_unit);
  CoordinatorStatus s = c_->GetStatus();
  EXPECT_EQ(s.leased, 1u);
  EXPECT_EQ(s.finished, 0u);
  WorkerDescription other;
  other.host = "w";
  other.sieve_bits = 19;
  other.work_hash_version = kWorkHashVersion;
  int64_t id;
  EXPECT_EQ(c_->Register(other, &id).error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_FALSE(c_->ListWorkers()[0].w.flagged);
  EXPECT_FALSE(c_->ListWorkers()[1].w.flagged);
}

TEST_F(CoordinatorTest, RegistrationRequiresTheServersWorkHashVersion) {
  WorkerDescription d;
  d.host = "w";
  d.sieve_bits = 12;
  int64_t id = 0;
  for (uint32_t version : {0u, kWorkHashVersion - 1, kWorkHashVersion + 1}) {
    d.work_hash_version = version;
    grpc::Status st = c_->Register(d, &id);
    EXPECT_EQ(st.error_code(), StatusCode::FAILED_PRECONDITION) << version;
    EXPECT_NE(st.error_message().find("work hash version " + std::to_string(version) + ", the server version " +
                                      std::to_string(kWorkHashVersion)),
              std::string::npos)
        << st.error_message();
  }
  EXPECT_TRUE(c_->ListWorkers().empty());
  d.work_hash_version = kWorkHashVersion;
  ASSERT_TRUE(c_->Register(d, &id).ok());
  ASSERT_EQ(c_->ListWorkers().size(), 1u);
  EXPECT_EQ(c_->ListWorkers()[0].w.work_hash_version, kWorkHashVersion);
  Reopen();
  EXPECT_EQ(c_->ListWorkers()[0].w.work_hash_version, kWorkHashVersion);
}

// A worker registered before the server's upgrade (schema v4 marks it version 1) keeps
// its id, but is refused until a binary of the server's version registers again.
TEST_F(CoordinatorTest, WorkerOfAnOlderWorkHashVersionIsRefusedAfterTheUpgrade) {
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, 1 << 15, Kinds::kDelay, 1 << 14, 0, &out).ok());
  const int64_t old_worker = NewWorker();
  LeaseGrant g = LeaseOne(old_worker);
  ASSERT_TRUE(g.has_unit);
  c_.reset();
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db_.c_str(), &raw), SQLITE_OK);
  const std::string sql = "UPDATE workers SET work_hash_version = 1 WHERE id = " + std::to_string(old_worker);
  ASSERT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(raw);
  sqlite3_close(raw);
  Reopen();

  LeaseGrant none;
  grpc::Status st = c_->Lease(old_worker, &none);
  EXPECT_EQ(st.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(st.error_message().find("work hash version 1"), std::string::npos) << st.error_message();
  Disposition d;
  EXPECT_EQ(c_->Complete(old_worker, g.unit_id, g.token, Search(g.spec), 1, "cpu", &d).error_code(),
            StatusCode::FAILED_PRECONDITION);
  int64_t deadline;
  bool stop;
  EXPECT_EQ(c_->Heartbeat(old_worker, g.unit_id, g.token, 0, &deadline, &stop).error_code(),
            StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(c_->GetStatus().finished, 0u);

  // A worker of the server's version works as ever.
  const int64_t w = NewWorker();
  LeaseGrant g2 = LeaseOne(w);
  ASSERT_TRUE(g2.has_unit);
  ASSERT_TRUE(c_->Complete(w, g2.unit_id, g2.token, Search(g2.spec), 1, "cpu", &d).ok());
  EXPECT_EQ(d, Disposition::kAccepted);
}

TEST_F(CoordinatorTest, ReleasedTokenIsStaleAndFailuresQuarantine) {
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, 4096, Kinds::kDelay, 0, 0, &out).ok());
  const int64_t w = NewWorker();
  LeaseGrant g = LeaseOne(w);
  ASSERT_TRUE(c_->Release(w, g.unit_id, g.token, false, "").ok());
  Disposition d;
  EXPECT_EQ(c_->Complete(w, g.unit_id, g.token, Search(g.spec), 1, "cpu", &d).error_code(),
            StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(c_->Release(w, g.unit_id, g.token, false, "").error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(c_->GetStatus().pending, 1u);

  // Two failed releases and one expiry: quarantined, shown in status, not leased again.
  g = LeaseOne(w);
  ASSERT_TRUE(c_->Release(w, g.unit_id, g.token, true, "out of memory").ok());
  g = LeaseOne(w);
  ASSERT_TRUE(c_->Release(w, g.unit_id, g.token, true, "out of memory").ok());
  g = LeaseOne(w);
  ASSERT_TRUE(g.has_unit);
  clock_.Advance(options_.lease_duration_ms + 1);
  EXPECT_EQ(c_->ExpireLeases(), 1);
  CoordinatorStatus s = c_->GetStatus();
  EXPECT_EQ(s.quarantined, 1u);
  EXPECT_EQ(s.pending, 0u);
  ASSERT_EQ(s.quarantined_units.size(), 1u);
  EXPECT_EQ(s.quarantined_units[0].failures, 3);
  EXPECT_FALSE(LeaseOne(w).has_unit);
  Reopen();
  EXPECT_EQ(c_->GetStatus().quarantined, 1u);
  EXPECT_FALSE(LeaseOne(w).has_unit);

  // Requeued once the cause is fixed: the failure count restarts, it is leased, finished,
  // and the covered prefix moves on; the requeue survives a restart.
  const int64_t id = s.quarantined_units[0].id;
  uint64_t requeued = 0;
  EXPECT_EQ(c_->RequeueQuarantined(id + 1000, 0, false, &requeued).error_code(), StatusCode::NOT_FOUND);
  EXPECT_EQ(c_->RequeueQuarantined(0, 0, false, &requeued).error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(c_->RequeueQuarantined(id, 0, true, &requeued).error_code(), StatusCode::INVALID_ARGUMENT);
  ASSERT_TRUE(c_->RequeueQuarantined(id, 0, false, &requeued).ok());
  EXPECT_EQ(requeued, 1u);
  EXPECT_EQ(c_->RequeueQuarantined(id, 0, false, &requeued).error_code(), StatusCode::FAILED_PRECONDITION);
  Reopen();
  s = c_->GetStatus();
  EXPECT_EQ(s.quarantined, 0u);
  EXPECT_EQ(s.pending, 1u);
  g = LeaseOne(w);
  ASSERT_TRUE(g.has_unit);
  EXPECT_EQ(g.unit_id, id);
  ASSERT_TRUE(c_->Release(w, g.unit_id, g.token, true, "out of memory").ok());  // 1 failure of 3 now
  g = LeaseOne(w);
  ASSERT_TRUE(g.has_unit);
  ASSERT_TRUE(c_->Complete(w, g.unit_id, g.token, Search(g.spec), 1, "cpu", &d).ok());
  EXPECT_EQ(d, Disposition::kAccepted);
  EXPECT_TRUE(c_->GetStatus().covered_prefix == 4096);
  // Nothing quarantined: --all-quarantined requeues nothing.
  ASSERT_TRUE(c_->RequeueQuarantined(0, 0, true, &requeued).ok());
  EXPECT_EQ(requeued, 0u);
}

class LyingWorkerTest : public CoordinatorTest,
                        public ::testing::WithParamInterface<std::pair<const char*, std::function<void(UnitResult*)>>> {};

TEST_P(LyingWorkerTest, IsCaughtFlaggedAndItsUnauditedWorkRequeued) {
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, 3 << 14, Kinds::kDelayAndClass, 1 << 14, 0, &out).ok());
  const int64_t liar = NewWorker(), honest = NewWorker();
  // The liar first finishes one unit honestly; it is re-queued when the liar is caught.
  LeaseGrant g = LeaseOne(liar);
  Disposition d;
  ASSERT_TRUE(c_->Complete(liar, g.unit_id, g.token, Search(g.spec), 1, "cpu", &d).ok());
  EXPECT_EQ(c_->GetStatus().finished, 1u);
  g = LeaseOne(liar);
  UnitResult r = Search(g.spec);
  GetParam().second(&r);
  grpc::Status st = c_->Complete(liar, g.unit_id, g.token, r, 1, "cpu", &d);
  EXPECT_EQ(st.error_code(), StatusCode::PERMISSION_DENIED) << GetParam().first;
  CoordinatorStatus s = c_->GetStatus();
  EXPECT_EQ(s.finished, 0u);
  EXPECT_EQ(s.pending, 3u);
  EXPECT_TRUE(s.covered_prefix == 1);
  EXPECT_EQ(c_->Lease(liar, &g).error_code(), StatusCode::PERMISSION_DENIED);
  // The honest worker redoes everything; the records are right.
  for (int i = 0; i < 3; ++i) {
    g = LeaseOne(honest);
    ASSERT_TRUE(g.has_unit);
    ASSERT_TRUE(c_->Complete(honest, g.unit_id, g.token, Search(g.spec), 1, "cpu", &d).ok());
  }
  EXPECT_TRUE(c_->GetStatus().covered_prefix == (3 << 14));
  std::vector<Record> ref;
  ref = testing_support::ReferenceRecords("delay_records_below_2p28.csv", RecordCsvKind::kDelay);
  std::erase_if(ref, [](const Record& x) { return x.n >= (3 << 14); });
  EXPECT_EQ(c_->Records().delay_final, ref);
}

INSTANTIATE_TEST_SUITE_P(
    Lies, LyingWorkerTest,
    ::testing::Values(
        std::make_pair("wrong delay", std::function<void(UnitResult*)>([](UnitResult* r) { r->ladder.back().delay += 1; })),
        std::make_pair("fake record", std::function<void(UnitResult*)>([](UnitResult* r) {
                         // A real number with its real delay, but one the unit cannot report
                         // (even): a fabricated ladder entry.
                         Record fake = r->ladder.back();
                         fake.n += 1;
                         fake.delay = SlowDelay(fake.n);
                         if (fake.delay > r->ladder.back().delay) r->ladder.push_back(fake);
                         else r->ladder.back() = fake;
                       })),
        std::make_pair("record outside the unit", std::function<void(UnitResult*)>([](UnitResult* r) {
                         r->ladder.push_back(Record{27, 111});
                         std::sort(r->ladder.begin(), r->ladder.end(), [](const Record& a, const Record& b) { return a.n < b.n; });
                       })),
        std::make_pair("class minimum of a closed class", std::function<void(UnitResult*)>([](UnitResult* r) {
                         r->class_minima.insert(r->class_minima.begin(), Record{r->class_minima.front().n, 0});
                       }))),
    [](const auto& info) {
      std::string name = info.param.first;
      for (char& ch : name) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return name;
    });

TEST_F(CoordinatorTest, WrongDelayInADelayOnlyUnitIsCaughtByTheExactRecomputation) {
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, 1 << 14, Kinds::kDelay, 0, 0, &out).ok());
  const int64_t liar = NewWorker();
  LeaseGrant g = LeaseOne(liar);
  UnitResult r = Search(g.spec);
  ASSERT_TRUE(r.class_minima.empty());
  r.ladder.back().delay += 1;  // still ascending: only recomputing the delay finds it
  Disposition d;
  grpc::Status st = c_->Complete(liar, g.unit_id, g.token, r, 1, "cpu", &d);
  EXPECT_EQ(st.error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_NE(st.error_message().find("exact delay"), std::string::npos) << st.error_message();
  EXPECT_EQ(c_->GetStatus().finished, 0u);
  EXPECT_TRUE(c_->ListWorkers()[0].w.flagged);
}

TEST_F(CoordinatorTest, AuditCatchesAWrongTally) {
  options_.audit_fraction = 1.0;
  Reopen();
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1 << 14, 1 << 15, Kinds::kDelayAndClass, 1 << 14, 0, &out).ok());
  const int64_t a = NewWorker(), b = NewWorker(), c = NewWorker();
  LeaseGrant g = LeaseOne(a);
  UnitResult lie = Search(g.spec);
  lie.tally_sum += 7;  // not checkable on its own: only an audit finds it
  Disposition d;
  ASSERT_TRUE(c_->Complete(a, g.unit_id, g.token, lie, 1, "cpu", &d).ok());
  EXPECT_EQ(d, Disposition::kAccepted);
  EXPECT_EQ(c_->GetStatus().audits_pending, 1u);
  // The audit goes to another worker, with the same floor and holes.
  EXPECT_FALSE(LeaseOne(a).has_unit);
  LeaseGrant audit = LeaseOne(b);
  ASSERT_TRUE(audit.has_unit);
  EXPECT_EQ(audit.purpose, LeasePurpose::kAudit);
  EXPECT_EQ(audit.spec.floor, g.spec.floor);
  ASSERT_TRUE(c_->Complete(b, audit.unit_id, audit.token, Search(audit.spec), 1, "cpu", &d).ok());
  EXPECT_EQ(d, Disposition::kAuditMismatch);
  CoordinatorStatus s = c_->GetStatus();
  EXPECT_EQ(s.audits_failed, 1u);
  EXPECT_EQ(s.finished, 0u);
  EXPECT_EQ(s.pending, 1u);
  // The server's re-run settled it: only the liar is flagged (server/audit_test.cc has more).
  for (const WorkerReport& w : c_->ListWorkers()) EXPECT_EQ(w.w.flagged, w.w.id == a) << w.w.id;
  // Honest re-run by a third worker, then audited by a fourth; an honest audit matches.
  g = LeaseOne(c);
  ASSERT_TRUE(c_->Complete(c, g.unit_id, g.token, Search(g.spec), 1, "cpu", &d).ok());
  const int64_t e = NewWorker();
  audit = LeaseOne(e);
  ASSERT_EQ(audit.purpose, LeasePurpose::kAudit);
  ASSERT_TRUE(c_->Complete(e, audit.unit_id, audit.token, Search(audit.spec), 1, "cpu", &d).ok());
  EXPECT_EQ(d, Disposition::kAuditMatched);
  s = c_->GetStatus();
  EXPECT_EQ(s.audits_passed, 1u);
  EXPECT_EQ(s.finished, 1u);
}

// A result stored with work hash version 1 (by an older binary) is audited by one of
// version 2: the hashes are not comparable and are skipped; everything else must agree.
TEST_F(CoordinatorTest, AuditSkipsTheWorkHashOfAnOlderVersion) {
  EXPECT_EQ(AuditOfChangedResult([](UnitResult* r) {
              r->work_hash_version = 1;
              r->work_hash ^= 0x5a5a5a5a5a5a5a5aULL;  // the old definition's sum differs
            }),
            Disposition::kAuditMatched);
  const CoordinatorStatus s = c_->GetStatus();
  EXPECT_EQ(s.audits_passed, 1u);
  EXPECT_EQ(s.audits_failed, 0u);
  for (const auto& w : c_->ListWorkers()) EXPECT_FALSE(w.w.flagged);
}

TEST_F(CoordinatorTest, AuditOfAnOlderVersionStillComparesTheTallies) {
  EXPECT_EQ(AuditOfChangedResult([](UnitResult* r) {
              r->work_hash_version = 1;
              r->work_hash ^= 0x5a5a5a5a5a5a5a5aULL;
              r->tally_sum += 7;
            }),
            Disposition::kAuditMismatch);
}

TEST_F(CoordinatorTest, AuditComparesWorkHashesOfTheSameVersion) {
  EXPECT_EQ(AuditOfChangedResult([](UnitResult* r) { r->work_hash ^= 1; }), Disposition::kAuditMismatch);
  EXPECT_EQ(c_->GetStatus().audits_failed, 1u);
}

// A submission from 1 is cut at 2^20 and then at the unit size (server/submission_units.h):
// only [1, 2^20) is searched with floor 0; the next units get the floor and the records
// below them, and the records are the reference's.
TEST_F(CoordinatorTest, FirstUnitIsCutSoThatLaterUnitsGetFloors) {
  std::vector<Record> ref;
  ref = testing_support::ReferenceRecords("delay_records_below_2p28.csv", RecordCsvKind::kDelay);
  const u128 end = Pow2(22) + Pow2(21);
  std::erase_if(ref, [end](const Record& x) { return x.n >= end; });
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, end, Kinds::kDelay, Pow2(22), 0, &out).ok());
  EXPECT_EQ(out.units, 3u);
  const int64_t w = NewWorker();
  const std::vector<std::pair<u128, u128>> expected = {{1, Pow2(20)}, {Pow2(20), Pow2(22)}, {Pow2(22), end}};
  for (const auto& [begin, unit_end] : expected) {
    LeaseGrant g = LeaseOne(w);
    ASSERT_TRUE(g.has_unit);
    EXPECT_TRUE(g.spec.begin == begin && g.spec.end == unit_end)
        << "[" << ToDecimal(g.spec.begin) << ", " << ToDecimal(g.spec.end) << ")";
    uint32_t floor = 0;  // the largest delay below the unit, from the reference
    for (const Record& r : ref) {
      if (r.n < begin) floor = r.delay;
    }
    EXPECT_EQ(g.spec.floor, floor) << ToDecimal(begin);
    EXPECT_TRUE(g.spec.records_complete_below == (begin > 1 ? begin : 0)) << ToDecimal(g.spec.records_complete_below);
    Disposition d;
    ASSERT_TRUE(c_->Complete(w, g.unit_id, g.token, Search(g.spec), 1, "cpu", &d).ok());
  }
  EXPECT_FALSE(LeaseOne(w).has_unit);
  EXPECT_EQ(c_->Records().delay_final, ref);
}

TEST_F(CoordinatorTest, SearchOf2p20EqualsReferenceAcrossRestartsAndImports) {
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, 1 << 20, Kinds::kDelayAndClass, 1 << 17, 0, &out).ok());
  const int64_t w = NewWorker();
  int n = 0;
  while (true) {
    LeaseGrant g = LeaseOne(w);
    if (!g.has_unit) break;
    // Floors and holes come from what is verified so far.
    if (g.spec.begin > 1) EXPECT_GT(g.spec.floor, 0u);
    Disposition d;
    ASSERT_TRUE(c_->Complete(w, g.unit_id, g.token, Search(g.spec), 1, "cpu", &d).ok());
    if (++n % 3 == 0) Reopen();
  }
  EXPECT_EQ(n, 8);
  std::vector<Record> delay_ref, class_ref;
  delay_ref = testing_support::ReferenceRecords("delay_records_below_2p28.csv", RecordCsvKind::kDelay);
  class_ref = testing_support::ReferenceRecords("class_records_below_2p28.csv", RecordCsvKind::kClass);
  std::erase_if(delay_ref, [](const Record& x) { return x.n >= (1 << 20); });
  std::erase_if(class_ref, [](const Record& x) { return x.n >= (1 << 20); });
  MergedRecords m = c_->Records();
  EXPECT_TRUE(m.covered_prefix == (1 << 20));
  EXPECT_EQ(m.delay_final, delay_ref);
  EXPECT_EQ(m.class_final, class_ref);

  // An import of the reference below 2^22 covers more; a wrong import is refused.
  std::vector<Record> d22, c22;
  d22 = testing_support::ReferenceRecords("delay_records_below_2p28.csv", RecordCsvKind::kDelay);
  std::erase_if(d22, [](const Record& x) { return x.n >= (1 << 22); });
  TrustedImport bad;
  bad.complete_below = 1 << 22;
  bad.delay_records = d22;
  bad.delay_records.back().delay += 1;
  u128 covered = 0;
  EXPECT_EQ(c_->Import(bad, "bad", &covered).error_code(), StatusCode::INVALID_ARGUMENT);
  TrustedImport good;
  good.complete_below = 1 << 22;
  good.delay_records = d22;
  ASSERT_TRUE(c_->Import(good, "reference", &covered).ok());
  EXPECT_TRUE(covered == (1 << 22));
  SubmitOutcome o2;
  EXPECT_EQ(c_->Submit(1, 1 << 22, Kinds::kDelay, 0, 0, &o2).error_code(), StatusCode::ALREADY_EXISTS);
  Reopen();
  EXPECT_TRUE(c_->Records().covered_prefix == (1 << 22));
  // The lease context now carries the imported records for early termination.
  ASSERT_TRUE(c_->Submit(1 << 22, (1 << 22) + (1 << 14), Kinds::kDelay, 0, 0, &o2).ok());
  LeaseGrant g = LeaseOne(w);
  ASSERT_TRUE(g.has_unit);
  EXPECT_EQ(g.spec.floor, d22.back().delay);
  EXPECT_TRUE(g.spec.records_complete_below == (1 << 22));
  EXPECT_EQ(g.spec.known_records, d22);
}

// On an empty coordinator a unit high up is leased with the floor of the published records
// (recomputed, not trusted) and no record table, exactly the spec `collatzctl run` gives it.
TEST_F(CoordinatorTest, EmptyCoordinatorLeasesTheSameSpecAsCollatzctlRun) {
  for (Kinds kinds : {Kinds::kDelay, Kinds::kDelayAndClass}) {
    const u128 begin = Pow2(60) + (kinds == Kinds::kDelay ? 0 : Pow2(30));
    SubmitOutcome out;
    ASSERT_TRUE(c_->Submit(begin, begin + Pow2(20), kinds, Pow2(20), 0, &out).ok());
    LeaseGrant g = LeaseOne(NewWorker());
    ASSERT_TRUE(g.has_unit);
    UnitSpec run_spec;
    ASSERT_TRUE(MakeUnitSpec(c_->Records(), g.spec.begin, g.spec.end, kinds, nullptr, &run_spec).ok());
    EXPECT_EQ(g.spec.floor, 2283u);  // the largest published delay below 2^60
    EXPECT_EQ(g.spec.floor, run_spec.floor);
    EXPECT_EQ(g.spec.open_holes, run_spec.open_holes);
    EXPECT_TRUE(g.spec.known_records.empty());
    EXPECT_TRUE(g.spec.records_complete_below == 0);
  }
}

// The Import RPC applies the checks of `collatzctl import --db` (core/import_check.h): a list
// cut short of its bound is refused and nothing is stored.
TEST_F(CoordinatorTest, ImportOfAnIncompleteListIsRefused) {
  std::vector<Record> d22;
  ASSERT_TRUE(ReadRecordsCsv(std::string(COLLATZ_SHARED_DATA) + "/delay_records_below_2p28.csv", RecordCsvKind::kDelay, &d22).ok());
  std::erase_if(d22, [](const Record& x) { return x.n >= (1 << 22); });
  TrustedImport cut;
  cut.complete_below = 1 << 24;
  cut.delay_records = d22;
  u128 covered = 0;
  const grpc::Status st = c_->Import(cut, "cut", &covered);
  EXPECT_EQ(st.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("not complete below 16777216"), std::string::npos) << st.error_message();
  Reopen();
  EXPECT_TRUE(c_->Records().covered_prefix == 1);
}

// A class unit above imported delay records (no class records): classes with a member
// below the unit found from the known points are not open, and no true hole is closed.
TEST_F(CoordinatorTest, ClassLeasesLeaveOpenOnlyClassesWithoutAKnownMember) {
  constexpr uint64_t kBegin = 1 << 22;
  std::vector<Record> records;
  records = testing_support::ReferenceRecords("delay_records_below_2p28.csv", RecordCsvKind::kDelay);
  std::erase_if(records, [](const Record& x) { return x.n >= kBegin; });
  TrustedImport import;
  import.complete_below = kBegin;
  import.delay_records = records;
  u128 covered = 0;
  ASSERT_TRUE(c_->Import(import, "reference", &covered).ok());
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(kBegin, kBegin + (1 << 14), Kinds::kDelayAndClass, 0, 0, &out).ok());
  LeaseGrant g = LeaseOne(NewWorker());
  ASSERT_TRUE(g.has_unit);

  std::vector<bool> seen(g.spec.floor + 1, false);
  for (uint64_t n = 1; n < kBegin; ++n) {
    uint32_t d = 0;
    for (uint64_t v = n; v != 1; ++d) v = (v & 1) ? 3 * v + 1 : v / 2;
    if (d <= g.spec.floor) seen[d] = true;
  }
  std::vector<uint32_t> true_holes;
  for (uint32_t d = 0; d <= g.spec.floor; ++d) {
    if (!seen[d]) true_holes.push_back(d);
  }
  EXPECT_TRUE(std::includes(g.spec.open_holes.begin(), g.spec.open_holes.end(), true_holes.begin(), true_holes.end()));
  const LeaseContext plain = ComputeLeaseContext(c_->Records(), kBegin, Kinds::kDelayAndClass);
  EXPECT_LT(g.spec.open_holes.size(), plain.open_holes.size() / 2)
      << g.spec.open_holes.size() << " holes leased, " << plain.open_holes.size() << " from the records alone, "
      << true_holes.size() << " true";
  std::printf("lease at 2^22: %zu open holes (%zu from the records alone, %zu true)\n", g.spec.open_holes.size(),
              plain.open_holes.size(), true_holes.size());
}

// Known points (AddKnownPoints, core/known_points.h): exact members of the classes a lease
// left open for lack of knowledge close them in every later lease, across a restart too;
// a wrong delay, or a point that proves a trusted import wrong, is refused and stores nothing.
TEST_F(CoordinatorTest, KnownPointsCloseTheClassesLeasesLeftOpen) {
  constexpr uint64_t kBegin = 1 << 20;
  TrustedImport import;
  import.complete_below = kBegin;
  import.delay_records = testing_support::ReferenceRecords("delay_records_below_2p28.csv", RecordCsvKind::kDelay);
  std::erase_if(import.delay_records, [](const Record& x) { return x.n >= kBegin; });
  u128 covered = 0;
  ASSERT_TRUE(c_->Import(import, "reference", &covered).ok());
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(kBegin, kBegin + (1 << 16), Kinds::kDelayAndClass, 1 << 14, 0, &out).ok());
  const int64_t worker = NewWorker();
  const LeaseGrant first = LeaseOne(worker);
  ASSERT_TRUE(first.has_unit);
  // The smallest member of each class below the submitted range's end, by brute force.
  std::map<uint32_t, uint64_t> smallest;
  for (uint64_t n = 1; n < kBegin + (1 << 16); ++n) {
    uint32_t d = 0;
    for (uint64_t v = n; v != 1; ++d) v = (v & 1) ? 3 * v + 1 : v / 2;
    smallest.emplace(d, n);
  }
  // The classes up to the floor with no member below a unit's begin.
  auto true_holes = [&](const LeaseGrant& g) {
    std::vector<uint32_t> holes;
    for (uint32_t d = 0; d <= g.spec.floor; ++d) {
      auto it = smallest.find(d);
      if (it == smallest.end() || it->second >= g.spec.begin) holes.push_back(d);
    }
    return holes;
  };
  std::vector<Record> points;
  for (uint32_t d : first.spec.open_holes) {
    auto it = smallest.find(d);
    if (it != smallest.end() && it->second < kBegin) points.push_back({it->second, d});
  }
  ASSERT_FALSE(points.empty()) << "every hole of the lease is a true one: the test proves nothing";

  size_t added = 0, stored = 0;
  std::vector<Record> wrong = points;
  wrong.back().delay += 1;
  EXPECT_EQ(c_->AddKnownPoints(wrong, "wrong", &added, &stored).error_code(), StatusCode::INVALID_ARGUMENT);
  ASSERT_TRUE(c_->AddKnownPoints(points, "brute force", &added, &stored).ok());
  EXPECT_EQ(added, points.size());
  EXPECT_EQ(stored, points.size());
  ASSERT_TRUE(c_->AddKnownPoints({points.front()}, "again", &added, &stored).ok());
  EXPECT_EQ(added, 0u);
  EXPECT_EQ(stored, points.size());

  const LeaseGrant second = LeaseOne(worker);
  ASSERT_TRUE(second.has_unit);
  EXPECT_EQ(second.spec.open_holes, true_holes(second));
  Reopen();
  const LeaseGrant third = LeaseOne(NewWorker());
  ASSERT_TRUE(third.has_unit);
  // Further up a class may have a member nobody knows (open for lack of knowledge); none
  // of the points' classes is open, and every true hole is.
  const std::vector<uint32_t> third_true = true_holes(third);
  EXPECT_TRUE(std::includes(third.spec.open_holes.begin(), third.spec.open_holes.end(), third_true.begin(),
                            third_true.end()));
  for (const Record& p : points) {
    EXPECT_FALSE(std::binary_search(third.spec.open_holes.begin(), third.spec.open_holes.end(), p.delay)) << p.delay;
  }
  std::printf("lease at 2^20: %zu open holes (%zu true); %zu after %zu known points (%zu true)\n",
              first.spec.open_holes.size(), true_holes(first).size(), third.spec.open_holes.size(), points.size(),
              true_holes(third).size());

  // A class list that names a larger member as some class's record, which the import's own
  // checks cannot see: the true record, as a known point, proves it wrong.
  TrustedImport classes;
  classes.complete_below = 1 << 10;
  classes.delay_records = import.delay_records;
  std::erase_if(classes.delay_records, [](const Record& x) { return x.n >= (1 << 10); });
  std::map<uint32_t, std::vector<uint64_t>> members;  // below 2^10, ascending
  for (uint64_t n = 1; n < (1 << 10); ++n) {
    uint32_t d = 0;
    for (uint64_t v = n; v != 1; ++d) v = (v & 1) ? 3 * v + 1 : v / 2;
    members[d].push_back(n);
  }
  for (const auto& [d, m] : members) classes.class_records.push_back({m[0], d});
  TrustedImport liar;
  Record truth;
  const std::vector<Record> seeds = ClassMemberSeeds(c_->Records(), PublishedDelayPoints());
  for (const auto& [d, m] : members) {
    if (m.size() < 2) continue;
    liar = classes;
    for (Record& r : liar.class_records) {
      if (r.delay == d) r.n = m[1];
    }
    truth = {m[0], d};
    if (CheckTrustedImport(liar, seeds).ok()) break;
    liar = TrustedImport();
  }
  ASSERT_FALSE(liar.class_records.empty()) << "no lie passes the import's checks below 2^10";
  const size_t before = stored;
  ASSERT_TRUE(c_->Import(liar, "liar", &covered).ok());
  const grpc::Status refused = c_->AddKnownPoints({truth}, "truth", &added, &stored);
  EXPECT_EQ(refused.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(refused.error_message().find("contradict the trusted import complete below 1024"), std::string::npos)
      << refused.error_message();
  Reopen();
  ASSERT_TRUE(c_->AddKnownPoints({points.front()}, "count", &added, &stored).ok());
  EXPECT_EQ(stored, before);
}

}  // namespace
}  // namespace collatz::server
