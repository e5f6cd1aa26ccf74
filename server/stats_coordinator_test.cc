// Stats jobs in the coordinator with a fake clock: batch-aligned units, leases only to
// workers that accept stats, honest results accepted and fetched byte for byte as
// `collatzctl stats` would write them, lying or damaged results rejected and their worker
// flagged, expiry and re-lease, quarantine, restart, cancel.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>

#include "core/stats_file.h"
#include "server/coordinator.h"
#include "server/coordinator_test_fixture.h"
#include "server/stats_verifier.h"
#include "storage/dashboard_reader.h"

namespace collatz::server {
namespace {

using grpc::StatusCode;

class StatsCoordinatorTest : public CoordinatorFixture {
 protected:
  StatsCoordinatorTest() : CoordinatorFixture("stats_coord_test_") {}

  LeaseGrant LeaseStats(int64_t worker) {
    LeaseGrant g;
    grpc::Status st = c_->Lease(worker, true, &g);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return g;
  }

  // The honest result of a stats unit (the plain per-N computation).
  static std::string Honest(const StatsUnitSpec& s) {
    StatsFile f;
    f.from = s.begin;
    f.batch = s.batch;
    EXPECT_TRUE(ComputeBatchStatsSlow(s.begin, s.end, s.batch, &f.batches).ok());
    return EncodeStatsFile(f);
  }

  grpc::Status Complete(int64_t worker, const LeaseGrant& g, const std::string& file, Disposition* d) {
    return c_->CompleteStats(worker, g.unit_id, g.token, file, 0.5, "test", d);
  }

  // The whole job, page by page.
  grpc::Status FetchAll(int64_t job, uint64_t page, std::string* out) {
    StatsFile all;
    for (uint64_t first = 0;;) {
      StatsPage p;
      grpc::Status st = c_->FetchStats(job, first, page, &p);
      if (!st.ok()) return st;
      StatsFile f;
      EXPECT_TRUE(DecodeStatsFile(p.stats_file, "page", &f).ok());
      if (first == 0) {
        all.from = f.from;
        all.batch = f.batch;
      }
      EXPECT_EQ(f.from, all.to());
      all.batches.insert(all.batches.end(), f.batches.begin(), f.batches.end());
      first += f.batches.size();
      if (first >= p.total_batches) break;
    }
    *out = EncodeStatsFile(all);
    return grpc::Status::OK;
  }
};

TEST_F(StatsCoordinatorTest, SubmitRefusesUnalignedRangesAndBadBatches) {
  StatsSubmitOutcome out;
  EXPECT_EQ(c_->SubmitStats(100, 2048, 1024, 0, 0, &out).error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(c_->SubmitStats(1024, 2000, 1024, 0, 0, &out).error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(c_->SubmitStats(2048, 1024, 1024, 0, 0, &out).error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(c_->SubmitStats(0, 16, 1, 0, 0, &out).error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(c_->SubmitStats(0, 0, 1024, 0, 0, &out).error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(c_->CancelStats(1, nullptr).error_code() == StatusCode::NOT_FOUND);
  // Batch 0 means the default, 1024; a range from 0 is fine.
  ASSERT_TRUE(c_->SubmitStats(0, 4096, 0, 0, 0, &out).ok());
  EXPECT_EQ(out.units, 1u);
  const CoordinatorStatus s = c_->GetStatus();
  ASSERT_EQ(s.stats_jobs.size(), 1u);
  EXPECT_EQ(s.stats_jobs[0].job.batch, 1024u);
}

TEST_F(StatsCoordinatorTest, UnitsAreBatchAlignedAndCoverTheRange) {
  const u128 from = Pow2(40), to = Pow2(40) + 10 * 1024 + 0;
  StatsSubmitOutcome out;
  // 3000 numbers per unit: rounded down to 2 batches of 1024.
  ASSERT_TRUE(c_->SubmitStats(from, to, 1024, 3000, 0, &out).ok());
  EXPECT_EQ(out.units, 5u);
  const int64_t w = NewWorker();
  u128 at = from;
  for (int i = 0; i < 5; ++i) {
    const LeaseGrant g = LeaseStats(w);
    ASSERT_TRUE(g.has_unit);
    ASSERT_TRUE(g.stats);
    EXPECT_EQ(g.stats_spec.job_id, out.job_id);
    EXPECT_EQ(g.stats_spec.batch, 1024u);
    EXPECT_EQ(g.stats_spec.begin, at);
    EXPECT_EQ(g.stats_spec.begin % 1024, 0u);
    EXPECT_EQ(g.stats_spec.end % 1024, 0u);
    EXPECT_LE(g.stats_spec.end - g.stats_spec.begin, 2048u);
    at = g.stats_spec.end;
  }
  EXPECT_EQ(at, to);
  EXPECT_FALSE(LeaseStats(w).has_unit);
  // The unit size is capped in batches (results must fit a message).
  options_.max_stats_batches_per_unit = 4;
  Reopen();
  ASSERT_TRUE(c_->SubmitStats(0, 64 * 32, 32, Pow2(40), 0, &out).ok());
  EXPECT_EQ(out.units, 16u);
}

TEST_F(StatsCoordinatorTest, OnlyWorkersThatAcceptStatsGetStatsUnits) {
  StatsSubmitOutcome out;
  ASSERT_TRUE(c_->SubmitStats(1024, 4096, 1024, 0, 0, &out).ok());
  const int64_t w = NewWorker();
  LeaseGrant g;
  ASSERT_TRUE(c_->Lease(w, &g).ok());  // an older worker: search units only
  EXPECT_FALSE(g.has_unit);
  // On equal priority a stats unit goes before a search unit; a higher search priority wins.
  SubmitOutcome so;
  ASSERT_TRUE(c_->Submit(1, 1 << 20, Kinds::kDelay, 1 << 20, 5, &so).ok());
  g = LeaseStats(w);
  ASSERT_TRUE(g.has_unit);
  EXPECT_FALSE(g.stats);
  ASSERT_TRUE(c_->SubmitStats(8192, 16384, 1024, 0, 5, &out).ok());
  g = LeaseStats(w);
  ASSERT_TRUE(g.has_unit);
  EXPECT_TRUE(g.stats);
  EXPECT_EQ(g.stats_spec.begin, 8192u);
}

TEST_F(StatsCoordinatorTest, HonestResultsAreFetchedAsTheOneShotFile) {
  const u128 from = 0, to = 16 * 256;
  StatsSubmitOutcome out;
  ASSERT_TRUE(c_->SubmitStats(from, to, 256, 3 * 256, 0, &out).ok());
  EXPECT_EQ(out.units, 6u);  // 3, 3, 3, 3, 3, 1 batches
  const int64_t w = NewWorker();
  std::string page;
  StatsPage p;
  grpc::Status st = c_->FetchStats(out.job_id, 0, 0, &p);
  EXPECT_EQ(st.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(st.error_message().find("6 of 6 units remain"), std::string::npos) << st.error_message();
  for (int i = 0; i < 6; ++i) {
    const LeaseGrant g = LeaseStats(w);
    ASSERT_TRUE(g.stats);
    Disposition d;
    ASSERT_TRUE(Complete(w, g, Honest(g.stats_spec), &d).ok());
    EXPECT_EQ(d, Disposition::kAccepted);
    if (i == 3) {
      st = c_->FetchStats(out.job_id, 0, 0, &p);
      EXPECT_NE(st.error_message().find("2 of 6 units remain"), std::string::npos) << st.error_message();
    }
  }
  const std::string expected = Honest({0, from, to, 256});
  std::string got;
  ASSERT_TRUE(FetchAll(out.job_id, 0, &got).ok());
  EXPECT_EQ(got, expected);
  // Pages that cut units in the middle give the same bytes.
  ASSERT_TRUE(FetchAll(out.job_id, 5, &got).ok());
  EXPECT_EQ(got, expected);
  EXPECT_EQ(c_->FetchStats(out.job_id, 16, 0, &p).error_code(), StatusCode::OUT_OF_RANGE);
  // Kept across a restart.
  Reopen();
  ASSERT_TRUE(FetchAll(out.job_id, 7, &got).ok());
  EXPECT_EQ(got, expected);
  const CoordinatorStatus s = c_->GetStatus();
  ASSERT_EQ(s.stats_jobs.size(), 1u);
  EXPECT_EQ(s.stats_jobs[0].units_finished, 6u);
  EXPECT_EQ(s.stats_jobs[0].units_total, 6u);
  // The dashboard's chart counts them, apart from search units, in the fake clock's minute.
  std::unique_ptr<DashboardReader> reader;
  ASSERT_TRUE(DashboardReader::Open(db_, &reader).ok());
  const int64_t minute = clock_.NowMs() / 60'000 * 60'000;
  std::vector<ThroughputBucket> b;
  ASSERT_TRUE(reader->Throughput(minute, minute + 60'000, 60'000, &b).ok());
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].stats_units, 6u);
  EXPECT_TRUE(b[0].stats_numbers == to - from);
  EXPECT_EQ(b[0].units, 0u);
}

TEST_F(StatsCoordinatorTest, LyingResultIsRejectedWorkerFlaggedAndUnitRequeued) {
  const u128 from = Pow2(40);
  StatsSubmitOutcome out;
  ASSERT_TRUE(c_->SubmitStats(from, from + 4 * 1024, 1024, 2048, 0, &out).ok());
  const int64_t liar = NewWorker(), honest = NewWorker();
  // The liar finishes one unit honestly first: it is revoked when the liar is caught.
  LeaseGrant first = LeaseStats(liar);
  Disposition d;
  ASSERT_TRUE(Complete(liar, first, Honest(first.stats_spec), &d).ok());
  LeaseGrant g = LeaseStats(liar);
  ASSERT_TRUE(g.stats);
  EXPECT_NE(g.unit_id, first.unit_id);
  // A consistent lie (checksums right, min <= avg <= max) in the last batch: audited always.
  StatsFile f;
  ASSERT_TRUE(DecodeStatsFile(Honest(g.stats_spec), "x", &f).ok());
  f.batches.back().sum += 1;
  grpc::Status st = Complete(liar, g, EncodeStatsFile(f), &d);
  EXPECT_EQ(st.error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_NE(st.error_message().find("is wrong"), std::string::npos) << st.error_message();
  bool flagged = false;
  for (const WorkerReport& r : c_->ListWorkers()) {
    if (r.w.id == liar) flagged = r.w.flagged;
  }
  EXPECT_TRUE(flagged);
  EXPECT_EQ(c_->Lease(liar, true, &g).error_code(), StatusCode::PERMISSION_DENIED);
  // Both units are pending again and go to the honest worker.
  const CoordinatorStatus s = c_->GetStatus();
  EXPECT_EQ(s.stats_jobs[0].units_finished, 0u);
  for (int i = 0; i < 2; ++i) {
    LeaseGrant h = LeaseStats(honest);
    ASSERT_TRUE(h.stats);
    ASSERT_TRUE(Complete(honest, h, Honest(h.stats_spec), &d).ok());
  }
  std::string got;
  ASSERT_TRUE(FetchAll(out.job_id, 0, &got).ok());
  EXPECT_EQ(got, Honest({0, from, from + 4 * 1024, 1024}));
}

TEST_F(StatsCoordinatorTest, DamagedOrMisfittingResultsAreRejected) {
  options_.max_failures = 5;
  Reopen();
  StatsSubmitOutcome out;
  ASSERT_TRUE(c_->SubmitStats(1 << 20, (1 << 20) + 4096, 1024, 0, 0, &out).ok());
  struct Case {
    const char* name;
    std::function<std::string(const StatsUnitSpec&)> make;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"flipped bit", [](const StatsUnitSpec& s) { std::string b = Honest(s); b[70] ^= 4; return b; }, "checksum"},
      {"one batch short",
       [](const StatsUnitSpec& s) { return Honest({0, s.begin, s.end - s.batch, s.batch}); }, "batches"},
      {"other start", [](const StatsUnitSpec& s) { return Honest({0, s.begin + s.batch, s.end + s.batch, s.batch}); },
       "starts at"},
      {"other batch size", [](const StatsUnitSpec& s) { return Honest({0, s.begin, s.end, s.batch / 2}); }, "batch size"},
      {"empty", [](const StatsUnitSpec&) { return std::string(); }, "truncated"},
  };
  for (const Case& c : cases) {
    const int64_t w = NewWorker();
    LeaseGrant g = LeaseStats(w);
    ASSERT_TRUE(g.stats) << c.name;
    Disposition d;
    grpc::Status st = Complete(w, g, c.make(g.stats_spec), &d);
    EXPECT_EQ(st.error_code(), StatusCode::PERMISSION_DENIED) << c.name;
    EXPECT_NE(st.error_message().find(c.message), std::string::npos) << c.name << ": " << st.error_message();
  }
  // Five rejections of the one unit: quarantined after max_failures (5).
  const CoordinatorStatus s = c_->GetStatus();
  EXPECT_EQ(s.stats_jobs[0].units_quarantined, 1u);
  ASSERT_EQ(s.stats_jobs[0].quarantined_units.size(), 1u);  // its id, for collatzctl requeue --stats-unit
  EXPECT_EQ(s.stats_jobs[0].quarantined_units[0].failures, 5);
  const int64_t w = NewWorker();
  EXPECT_FALSE(LeaseStats(w).has_unit);
  StatsPage p;
  grpc::Status st = c_->FetchStats(out.job_id, 0, 0, &p);
  EXPECT_NE(st.error_message().find("1 quarantined"), std::string::npos) << st.error_message();
  // Requeued (every quarantined unit): leased again, an honest result completes the job.
  uint64_t requeued = 0;
  EXPECT_EQ(c_->RequeueQuarantined(0, s.stats_jobs[0].quarantined_units[0].id + 1000, false, &requeued).error_code(),
            StatusCode::NOT_FOUND);
  ASSERT_TRUE(c_->RequeueQuarantined(0, 0, true, &requeued).ok());
  EXPECT_EQ(requeued, 1u);
  EXPECT_EQ(c_->GetStatus().stats_jobs[0].units_quarantined, 0u);
  LeaseGrant g = LeaseStats(w);
  ASSERT_TRUE(g.stats);
  Disposition d;
  ASSERT_TRUE(Complete(w, g, Honest(g.stats_spec), &d).ok());
  EXPECT_EQ(d, Disposition::kAccepted);
  EXPECT_EQ(c_->RequeueQuarantined(0, g.unit_id, false, &requeued).error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(c_->FetchStats(out.job_id, 0, 0, &p).ok());
}

TEST_F(StatsCoordinatorTest, ExpiredLeaseIsLeasedAgainAndTheLateResultCountsOnce) {
  StatsSubmitOutcome out;
  ASSERT_TRUE(c_->SubmitStats(0, 2048, 1024, 0, 0, &out).ok());
  const int64_t a = NewWorker(), b = NewWorker();
  const LeaseGrant ga = LeaseStats(a);
  ASSERT_TRUE(ga.stats);
  EXPECT_FALSE(LeaseStats(b).has_unit);
  // A heartbeat extends the lease.
  clock_.Advance(50'000);
  int64_t deadline = 0;
  bool stop = true;
  ASSERT_TRUE(c_->Heartbeat(a, ga.unit_id, ga.token, 0, &deadline, &stop).ok());
  EXPECT_FALSE(stop);
  clock_.Advance(50'000);
  EXPECT_FALSE(LeaseStats(b).has_unit);
  clock_.Advance(20'000);
  EXPECT_EQ(c_->ExpireLeases(), 1);
  const LeaseGrant gb = LeaseStats(b);
  ASSERT_TRUE(gb.stats);
  EXPECT_EQ(gb.unit_id, ga.unit_id);
  EXPECT_NE(gb.token, ga.token);
  // The late result of the expired lease is accepted; the second then is a duplicate.
  Disposition d;
  ASSERT_TRUE(Complete(a, ga, Honest(ga.stats_spec), &d).ok());
  EXPECT_EQ(d, Disposition::kAccepted);
  ASSERT_TRUE(c_->Heartbeat(b, gb.unit_id, gb.token, 0, &deadline, &stop).ok());
  EXPECT_TRUE(stop);
  ASSERT_TRUE(Complete(b, gb, Honest(gb.stats_spec), &d).ok());
  EXPECT_EQ(d, Disposition::kDuplicate);
  std::string got;
  ASSERT_TRUE(FetchAll(out.job_id, 0, &got).ok());
  EXPECT_EQ(got, Honest({0, 0, 2048, 1024}));
}

TEST_F(StatsCoordinatorTest, ReleaseAndRestartKeepLeasesRight) {
  StatsSubmitOutcome out;
  ASSERT_TRUE(c_->SubmitStats(0, 1024, 1024, 0, 0, &out).ok());
  const int64_t w = NewWorker();
  LeaseGrant g = LeaseStats(w);
  ASSERT_TRUE(c_->Release(w, g.unit_id, g.token, true, "device error").ok());
  EXPECT_EQ(c_->Release(w, g.unit_id, g.token, true, "again").error_code(), StatusCode::FAILED_PRECONDITION);
  g = LeaseStats(w);
  ASSERT_TRUE(g.stats);
  // A restart keeps the active lease: its result still counts.
  Reopen();
  EXPECT_FALSE(LeaseStats(w).has_unit);
  Disposition d;
  ASSERT_TRUE(Complete(w, g, Honest(g.stats_spec), &d).ok());
  EXPECT_EQ(d, Disposition::kAccepted);
}

TEST_F(StatsCoordinatorTest, CancelRemovesUnfinishedUnits) {
  StatsSubmitOutcome out;
  ASSERT_TRUE(c_->SubmitStats(0, 4096, 1024, 1024, 0, &out).ok());
  const int64_t w = NewWorker();
  LeaseGrant g = LeaseStats(w);
  Disposition d;
  ASSERT_TRUE(Complete(w, g, Honest(g.stats_spec), &d).ok());
  uint64_t removed = 0;
  ASSERT_TRUE(c_->CancelStats(out.job_id, &removed).ok());
  EXPECT_EQ(removed, 3u);
  EXPECT_FALSE(LeaseStats(w).has_unit);
  StatsPage p;
  EXPECT_EQ(c_->FetchStats(out.job_id, 0, 0, &p).error_code(), StatusCode::FAILED_PRECONDITION);
  Reopen();
  EXPECT_FALSE(LeaseStats(w).has_unit);
}

TEST(StatsVerifier, AuditBatchesIncludeFirstAndLast) {
  std::mt19937_64 rng(1);
  EXPECT_EQ(ChooseAuditBatches(1, 4, &rng), std::vector<uint64_t>({0}));
  EXPECT_EQ(ChooseAuditBatches(3, 4, &rng), std::vector<uint64_t>({0, 1, 2}));
  const std::vector<uint64_t> b = ChooseAuditBatches(1000, 4, &rng);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b.front(), 0u);
  EXPECT_EQ(b.back(), 999u);
}

TEST(StatsVerifier, RecomputedBatchEqualsThePlainComputation) {
  std::shared_ptr<const SearchTables> tables;
  ASSERT_TRUE(SearchTables::Build(12, 12, 16, &tables).ok());
  for (u128 start : {u128{0}, u128{1024}, Pow2(64) - 512, Pow2(90)}) {
    std::vector<BatchStats> plain;
    ASSERT_TRUE(ComputeBatchStatsSlow(start, start + 512, 512, &plain).ok());
    EXPECT_EQ(RecomputeBatch(*tables->delay, start, 512), plain[0]) << ToDecimal(start);
  }
}

}  // namespace
}  // namespace collatz::server
