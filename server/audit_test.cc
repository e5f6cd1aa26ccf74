// Audits that never punish the honest: a mismatch is settled (proof from the verified
// entries, the server's re-run, or a third worker) and only the wrong worker is flagged,
// durably by host and GPU. One lying and two honest workers over many units.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "core/records_csv.h"
#include "core/test_support.h"
#include "server/audit_settlement.h"
#include "server/coordinator_test_fixture.h"

namespace collatz::server {
namespace {

using grpc::StatusCode;

// A lie made from the honest result of `spec` (the liar computes, then lies).
using Lie = std::function<UnitResult(const UnitSpec& spec, const UnitResult& honest)>;

class AuditTest : public CoordinatorFixture {
 protected:
  AuditTest() : CoordinatorFixture("audit_test_") {}

  // A walk stopped too early for the unit's last ladder entry (its record): the number is
  // counted as examined, with the honest work hash, but missing from the ladder, the
  // class minima and the tallies, as a wrong early-termination bound would leave it.
  UnitResult StopsTheRecordEarly(const UnitSpec& spec, const UnitResult& honest) {
    if (honest.ladder.empty()) return honest;  // nothing that matters to stop
    const u128 n = honest.ladder.back().n;
    UnitResultCombiner combined(spec.floor);
    for (const auto& [a, b] : {std::pair<u128, u128>{spec.begin, n}, std::pair<u128, u128>{n + 1, spec.end}}) {
      if (a >= b) continue;
      UnitSpec part = spec;
      part.begin = a;
      part.end = b;
      combined.Add(Search(part));
    }
    UnitResult lie = combined.Finish();
    lie.candidates = honest.candidates;
    lie.work_hash = honest.work_hash;
    return lie;
  }

  // Every walk whose delay is within 3 of the floor stopped early (an early-termination
  // bound off by 3): those numbers are missing from the ladder, class minima and tallies.
  UnitResult StopsWalksNearTheFloorEarly(const UnitSpec& spec, const UnitResult& honest) {
    UnitSpec higher = spec;
    higher.floor += 3;
    UnitResult lie = Search(higher);
    lie.candidates = honest.candidates;
    lie.work_hash = honest.work_hash;
    return lie;
  }

  // One number's delay one step off: only the tally sum shows it.
  static UnitResult OneNumberOff(const UnitSpec&, const UnitResult& honest) {
    UnitResult lie = honest;
    lie.tally_sum += 1;
    return lie;
  }

  Lie LieOfKind(int kind) {
    switch (kind) {
      case 0: return [this](const UnitSpec& s, const UnitResult& h) { return StopsTheRecordEarly(s, h); };
      case 1: return [this](const UnitSpec& s, const UnitResult& h) { return StopsWalksNearTheFloorEarly(s, h); };
      default: return OneNumberOff;
    }
  }

  void ExpectOnlyFlagged(int64_t liar) {
    for (const WorkerReport& w : c_->ListWorkers()) {
      if (w.w.id != liar) ASSERT_FALSE(w.w.flagged) << "honest worker " << w.w.id << " flagged: " << w.w.flag_reason;
    }
  }

  bool Flagged(int64_t worker) {
    for (const WorkerReport& w : c_->ListWorkers()) {
      if (w.w.id == worker) return w.w.flagged;
    }
    return false;
  }
};

TEST_F(AuditTest, EntriesProveWhichResultLeftARecordOut) {
  UnitSpec spec;
  spec.begin = 1 << 14;
  spec.end = (1 << 14) + (1 << 12);
  spec.floor = 200;
  const UnitResult honest = Search(spec);
  ASSERT_FALSE(honest.ladder.empty());
  const UnitResult lie = StopsTheRecordEarly(spec, honest);
  ASSERT_NE(lie.ladder, honest.ladder);
  EntryVerdict v = WrongByEntries(spec, honest, lie);
  EXPECT_FALSE(v.first_wrong);
  EXPECT_TRUE(v.second_wrong);
  v = WrongByEntries(spec, lie, honest);
  EXPECT_TRUE(v.first_wrong);
  EXPECT_FALSE(v.second_wrong);
  // A class minimum reported larger than a verified member of its class.
  UnitResult larger = honest;
  ASSERT_FALSE(larger.class_minima.empty());
  larger.class_minima.erase(larger.class_minima.begin());
  v = WrongByEntries(spec, honest, larger);
  EXPECT_FALSE(v.first_wrong);
  EXPECT_TRUE(v.second_wrong);
  // Results that differ only in tallies cannot be told apart by their entries.
  v = WrongByEntries(spec, honest, OneNumberOff(spec, honest));
  EXPECT_FALSE(v.first_wrong);
  EXPECT_FALSE(v.second_wrong);
}

// (kind of lie, whether the server may re-run units on its CPU, whether the liar lies in
// its audits only: then it is an auditor of honest results, never an audited one)
class LiarInAFleetTest : public AuditTest, public ::testing::WithParamInterface<std::tuple<int, bool, bool>> {};

TEST_P(LiarInAFleetTest, OnlyTheLiarIsFlaggedNoWrongRecordLandsAndTheFlagStays) {
  const auto [kind, server_reruns, audits_only] = GetParam();
  const Lie lie = LieOfKind(kind);
  options_.audit_fraction = 1.0;
  options_.referee_max_numbers = server_reruns ? Pow2(30) : 0;  // 0: third workers only
  Reopen();
  constexpr int kEnd = 1 << 16;
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, kEnd, Kinds::kDelayAndClass, 1 << 11, 0, &out).ok());
  ASSERT_GE(out.units, 32u);
  std::vector<Record> delay_ref = testing_support::ReferenceRecords("delay_records_below_2p28.csv", RecordCsvKind::kDelay);
  std::vector<Record> class_ref = testing_support::ReferenceRecords("class_records_below_2p28.csv", RecordCsvKind::kClass);
  std::erase_if(delay_ref, [](const Record& x) { return x.n >= kEnd; });
  std::erase_if(class_ref, [](const Record& x) { return x.n >= kEnd; });
  // The final records at any moment: the reference's below the covered prefixes.
  auto expect_no_wrong_record = [&] {
    const MergedRecords m = c_->Records();
    std::vector<Record> d = delay_ref, k = class_ref;
    std::erase_if(d, [&](const Record& x) { return x.n >= m.covered_prefix; });
    std::erase_if(k, [&](const Record& x) { return x.n >= m.class_covered_prefix; });
    ASSERT_EQ(m.delay_final, d) << "covered prefix " << ToDecimal(m.covered_prefix);
    ASSERT_EQ(m.class_final, k) << "class covered prefix " << ToDecimal(m.class_covered_prefix);
  };
  const int64_t liar = NewWorker("liar"), h1 = NewWorker(), h2 = NewWorker();
  int completions = 0, lies = 0;
  for (int round = 0; round < 1000; ++round) {
    bool any = false;
    for (int64_t w : {liar, h1, h2}) {
      LeaseGrant g;
      grpc::Status st = c_->Lease(w, &g);
      if (!st.ok()) {
        ASSERT_EQ(w, liar) << st.error_message();  // only the liar is ever refused
        ASSERT_EQ(st.error_code(), StatusCode::PERMISSION_DENIED);
        continue;
      }
      if (!g.has_unit) continue;
      any = true;
      UnitResult r = Search(g.spec);
      if (w == liar && (!audits_only || g.purpose == LeasePurpose::kAudit)) {
        const UnitResult l = lie(g.spec, r);
        lies += l == r ? 0 : 1;
        r = l;
      }
      Disposition d;
      st = c_->Complete(w, g.unit_id, g.token, r, 1, "cpu", &d);
      if (!st.ok()) ASSERT_EQ(w, liar) << st.error_message();
      ASSERT_NO_FATAL_FAILURE(ExpectOnlyFlagged(liar));
      ASSERT_NO_FATAL_FAILURE(expect_no_wrong_record());
      if (++completions % 7 == 0) Reopen();  // open disputes and flags survive restarts
    }
    if (!any) break;
  }
  EXPECT_GT(lies, 0);
  EXPECT_TRUE(Flagged(liar));
  const CoordinatorStatus s = c_->GetStatus();
  EXPECT_EQ(s.finished, out.units);
  EXPECT_EQ(s.audits_pending, 0u);
  EXPECT_EQ(s.audits_passed, out.units);  // every result that stands was confirmed by a second worker
  EXPECT_EQ(s.quarantined, 0u);

  const MergedRecords m = c_->Records();
  EXPECT_TRUE(m.covered_prefix == kEnd);
  EXPECT_EQ(m.delay_final, delay_ref);
  EXPECT_EQ(m.class_final, class_ref);

  // Registering again from the liar's host does not wash the flag off, before or after a restart.
  for (int i = 0; i < 2; ++i) {
    const int64_t again = NewWorker("liar");
    EXPECT_TRUE(Flagged(again));
    LeaseGrant g;
    grpc::Status st = c_->Lease(again, &g);
    EXPECT_EQ(st.error_code(), StatusCode::PERMISSION_DENIED);
    EXPECT_NE(st.error_message().find("host:liar"), std::string::npos) << st.error_message();
    Reopen();
  }
  EXPECT_FALSE(Flagged(NewWorker("another-host")));
}

std::string LieName(const ::testing::TestParamInfo<LiarInAFleetTest::ParamType>& info) {
  static const char* kNames[] = {"StopsTheRecordEarly", "StopsWalksNearTheFloorEarly", "OneNumberOff"};
  return std::string(kNames[std::get<0>(info.param)]) + (std::get<1>(info.param) ? "_ServerReruns" : "_ThirdWorker") +
         (std::get<2>(info.param) ? "_InAudits" : "");
}

INSTANTIATE_TEST_SUITE_P(Lies, LiarInAFleetTest, ::testing::Combine(::testing::Values(0, 1, 2), ::testing::Bool(), ::testing::Bool()),
                         LieName);

// A dispute that waits for a third worker survives a restart: the unit stays out of the
// merge (as every result waiting for its audit), the auditor that disputed cannot audit it again, and the third opinion flags the
// liar alone.
TEST_F(AuditTest, OpenDisputeWaitsForAThirdWorkerAcrossARestart) {
  options_.audit_fraction = 1.0;
  options_.referee_max_numbers = 0;
  Reopen();
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, 1 << 12, Kinds::kDelayAndClass, 1 << 12, 0, &out).ok());
  const int64_t liar = NewWorker(), h1 = NewWorker(), h2 = NewWorker();
  LeaseGrant g;
  ASSERT_TRUE(c_->Lease(liar, &g).ok());
  Disposition d;
  ASSERT_TRUE(c_->Complete(liar, g.unit_id, g.token, OneNumberOff(g.spec, Search(g.spec)), 1, "cpu", &d).ok());
  EXPECT_TRUE(c_->Records().covered_prefix == 1);  // waiting for its audit: not merged yet
  ASSERT_TRUE(c_->Lease(h1, &g).ok());
  ASSERT_EQ(g.purpose, LeasePurpose::kAudit);
  ASSERT_TRUE(c_->Complete(h1, g.unit_id, g.token, Search(g.spec), 1, "cpu", &d).ok());
  EXPECT_EQ(d, Disposition::kAuditMismatch);
  EXPECT_FALSE(Flagged(liar));
  EXPECT_FALSE(Flagged(h1));
  EXPECT_TRUE(c_->Records().covered_prefix == 1);  // disputed: out of the merge
  Reopen();
  EXPECT_TRUE(c_->Records().covered_prefix == 1);
  ASSERT_TRUE(c_->Lease(h1, &g).ok());
  EXPECT_FALSE(g.has_unit);  // h1 gave its opinion already
  ASSERT_TRUE(c_->Lease(h2, &g).ok());
  ASSERT_EQ(g.purpose, LeasePurpose::kAudit);
  ASSERT_TRUE(c_->Complete(h2, g.unit_id, g.token, Search(g.spec), 1, "cpu", &d).ok());
  EXPECT_EQ(d, Disposition::kAuditMismatch);
  EXPECT_TRUE(Flagged(liar));
  EXPECT_FALSE(Flagged(h1));
  EXPECT_FALSE(Flagged(h2));
  EXPECT_EQ(c_->GetStatus().pending, 1u);  // the liar's result is revoked and searched again
}

// A GPU worker's flag stays with its GPUs: the same card under another host name is
// flagged, another card on the same host is not.
TEST_F(AuditTest, FlagStaysWithTheGpu) {
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, 1 << 12, Kinds::kDelay, 1 << 12, 0, &out).ok());
  const int64_t bad = NewWorker("node1", {{"H100", "GPU-bad"}});
  LeaseGrant g;
  ASSERT_TRUE(c_->Lease(bad, &g).ok());
  UnitResult r = Search(g.spec);
  ASSERT_FALSE(r.ladder.empty());
  r.ladder.back().delay += 1;  // fails the exact recomputation: flagged at once
  Disposition d;
  EXPECT_EQ(c_->Complete(bad, g.unit_id, g.token, r, 1, "cpu", &d).error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(Flagged(bad));
  Reopen();
  EXPECT_TRUE(Flagged(NewWorker("node2", {{"H100", "GPU-bad"}})));
  EXPECT_FALSE(Flagged(NewWorker("node1", {{"H100", "GPU-good"}})));
}

// Workers without GPUs that share a host are told apart by their installation id (the
// worker's spool): a liar's flag stays with its installation, not with its neighbours.
TEST_F(AuditTest, FlagStaysWithTheInstallationOnASharedHost) {
  auto register_worker = [&](const std::string& instance) { return NewWorker("shared", {}, instance); };
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, 1 << 12, Kinds::kDelay, 1 << 12, 0, &out).ok());
  const int64_t liar = register_worker("aaaa"), honest = register_worker("bbbb");
  LeaseGrant g;
  ASSERT_TRUE(c_->Lease(liar, &g).ok());
  UnitResult r = Search(g.spec);
  r.ladder.back().delay += 1;
  Disposition d;
  EXPECT_EQ(c_->Complete(liar, g.unit_id, g.token, r, 1, "cpu", &d).error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(Flagged(liar));
  EXPECT_FALSE(Flagged(honest));
  Reopen();
  EXPECT_TRUE(Flagged(register_worker("aaaa")));
  EXPECT_FALSE(Flagged(register_worker("cccc")));
  EXPECT_FALSE(Flagged(honest));
}

// An operator clears a flag once the card is fixed (collatzctl unflag): the worker and its
// GPU may lease again, so may the worker flagged with it for sharing that GPU (and its other
// card, flagged with it), and those registered from either card meanwhile, across a restart;
// another liar keeps its flag, and a worker whose flag came from another's identity must wait
// for that one.
TEST_F(AuditTest, UnflagClearsTheWorkerItsIdentitiesAndThoseRegisteredFromThem) {
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(1, 1 << 14, Kinds::kDelay, 1 << 12, 0, &out).ok());
  auto lie = [&](int64_t worker) {
    LeaseGrant g;
    ASSERT_TRUE(c_->Lease(worker, &g).ok());
    UnitResult r = Search(g.spec);
    ASSERT_FALSE(r.ladder.empty());
    r.ladder.back().delay += 1;
    Disposition d;
    EXPECT_EQ(c_->Complete(worker, g.unit_id, g.token, r, 1, "cpu", &d).error_code(), StatusCode::PERMISSION_DENIED);
  };
  const int64_t bad = NewWorker("node1", {{"H100", "GPU-bad"}});
  // Flagged with it for sharing GPU-bad; its other card's identity is flagged with it.
  const int64_t shared = NewWorker("node6", {{"H100", "GPU-bad"}, {"H100", "GPU-2"}});
  lie(bad);
  const int64_t other_liar = NewWorker("node3", {{"H100", "GPU-other"}});
  lie(other_liar);
  const int64_t again = NewWorker("node2", {{"H100", "GPU-bad"}});
  ASSERT_TRUE(Flagged(bad) && Flagged(shared) && Flagged(other_liar) && Flagged(again));
  EXPECT_TRUE(Flagged(NewWorker("node7", {{"H100", "GPU-2"}})));

  Coordinator::UnflagOutcome u;
  EXPECT_EQ(c_->Unflag(again, &u).error_code(), StatusCode::FAILED_PRECONDITION);  // GPU-bad is bad's
  EXPECT_EQ(c_->Unflag(123456, &u).error_code(), StatusCode::NOT_FOUND);
  ASSERT_TRUE(c_->Unflag(bad, &u).ok());
  std::vector<int64_t> with_it(u.cleared.begin() + 1, u.cleared.end());
  std::sort(with_it.begin(), with_it.end());
  EXPECT_EQ(u.cleared.front(), bad);
  EXPECT_EQ(with_it, (std::vector<int64_t>{shared, again, again + 1}));  // node7 registered from GPU-2
  EXPECT_EQ(u.identities, 2u);  // gpu:GPU-bad, gpu:GPU-2
  EXPECT_NE(u.reason.find("delay"), std::string::npos) << u.reason;
  EXPECT_FALSE(Flagged(bad));
  EXPECT_FALSE(Flagged(again));
  EXPECT_FALSE(Flagged(shared));
  EXPECT_TRUE(Flagged(other_liar));
  EXPECT_EQ(c_->Unflag(bad, &u).error_code(), StatusCode::FAILED_PRECONDITION);  // not flagged now
  LeaseGrant g;
  EXPECT_TRUE(c_->Lease(bad, &g).ok());
  Reopen();
  EXPECT_FALSE(Flagged(bad));
  EXPECT_TRUE(Flagged(other_liar));
  EXPECT_FALSE(Flagged(NewWorker("node4", {{"H100", "GPU-bad"}})));
  EXPECT_FALSE(Flagged(NewWorker("node8", {{"H100", "GPU-2"}})));
  EXPECT_TRUE(Flagged(NewWorker("node5", {{"H100", "GPU-other"}})));
}

}  // namespace
}  // namespace collatz::server
