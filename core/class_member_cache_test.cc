// The coordinator's class-member cache: reused answers equal fresh searches at a frontier,
// and every change that could make a reused answer worse triggers a new search.
#include "core/class_member_cache.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/class_members.h"
#include "core/delay.h"
#include "core/records_csv.h"
#include "core/test_support.h"

namespace collatz {
namespace {

using testing_support::ReferenceRecords;

// Trusted imports as at a frontier at 2^44: the published delay records below it, and the
// exhaustive delay and class records below 2^28.
MergedRecords Frontier(u128 at) {
  const std::vector<Record> delays = ReferenceRecords("delay_records.csv", RecordCsvKind::kDelay);
  const std::vector<Record> small_delays = ReferenceRecords("delay_records_below_2p28.csv", RecordCsvKind::kDelay);
  const std::vector<Record> small_classes = ReferenceRecords("class_records_below_2p28.csv", RecordCsvKind::kClass);
  TrustedImport high, low;
  high.complete_below = at;
  for (const Record& r : delays) {
    if (r.n < at) high.delay_records.push_back(r);
  }
  low.complete_below = Pow2(28);
  low.delay_records = small_delays;
  low.class_records = small_classes;
  return MergeRecords({high, low}, {});
}

LeaseContext Fresh(const MergedRecords& merged, u128 begin) {
  LeaseContext ctx = ComputeLeaseContext(merged, begin, Kinds::kDelayAndClass);
  EXPECT_TRUE(CloseHolesFromKnownPoints(merged, begin, &ctx).ok());
  return ctx;
}

LeaseContext Cached(ClassMemberCache* cache, const MergedRecords& merged, u128 begin) {
  LeaseContext ctx = ComputeLeaseContext(merged, begin, Kinds::kDelayAndClass);
  EXPECT_TRUE(cache->CloseHoles(merged, begin, &ctx).ok());
  return ctx;
}

TEST(ClassMemberCache, ConsecutiveFrontierLeasesShareOneSearchAndEqualFreshOnes) {
  const u128 at = Pow2(44);
  const MergedRecords merged = Frontier(at);
  ClassMemberCache cache;
  const LeaseContext first = Cached(&cache, merged, at);
  ASSERT_FALSE(first.open_holes.empty());
  EXPECT_LT(first.open_holes.size(), ComputeLeaseContext(merged, at, Kinds::kDelayAndClass).open_holes.size());
  for (int i = 1; i <= 16; ++i) {
    const u128 begin = at + static_cast<u128>(i) * Pow2(30);
    const LeaseContext cached = Cached(&cache, merged, begin);
    const LeaseContext fresh = Fresh(merged, begin);
    EXPECT_EQ(cached.floor, fresh.floor);
    EXPECT_EQ(cached.open_holes, fresh.open_holes) << "unit " << i;
  }
  EXPECT_EQ(cache.searches(), 1u);
  EXPECT_EQ(cache.reuses(), 16u);
}

TEST(ClassMemberCache, SearchesAgainWhenItsAnswerCouldBeWorse) {
  const u128 at = Pow2(44);
  MergedRecords merged = Frontier(at);
  ClassMemberCache cache(6);
  Cached(&cache, merged, at);
  ASSERT_EQ(cache.searches(), 1u);
  // Past the reuse window (at / 2^6 above the last search).
  Cached(&cache, merged, at + (at >> 6) + 1);
  EXPECT_EQ(cache.searches(), 2u);
  // A unit below the last search: searched, and the frontier's answer is kept.
  const LeaseContext below = Cached(&cache, merged, at - Pow2(30));
  EXPECT_EQ(below.open_holes, Fresh(merged, at - Pow2(30)).open_holes);
  EXPECT_EQ(cache.searches(), 3u);
  Cached(&cache, merged, at + (at >> 6) + 2);
  EXPECT_EQ(cache.searches(), 3u);
  EXPECT_EQ(cache.reuses(), 1u);
  // New known points (a candidate found above the prefix).
  merged.delay_candidates.push_back(Record{Pow2(45) + 27, SlowDelay(Pow2(45) + 27)});
  const LeaseContext changed = Cached(&cache, merged, at + (at >> 6) + 3);
  EXPECT_EQ(cache.searches(), 4u);
  EXPECT_EQ(changed.open_holes, Fresh(merged, at + (at >> 6) + 3).open_holes);
}

TEST(ClassMemberCache, SearchesAgainForAFloorAboveTheClassesSearched) {
  const u128 at = Pow2(44);
  MergedRecords merged = Frontier(at);
  // The next published delay record, 19536224150271 (delay 1585), found as a candidate.
  const Record next{19536224150271ull, 1585};
  ASSERT_EQ(SlowDelay(next.n), next.delay);
  merged.delay_candidates.push_back(next);
  ClassMemberCache cache(1);  // reuse up to at / 2 above a search
  const LeaseContext below_next = Cached(&cache, merged, at);
  const LeaseContext past_next = Cached(&cache, merged, next.n + 1);
  ASSERT_GT(past_next.floor, below_next.floor);
  EXPECT_EQ(cache.searches(), 2u);
  EXPECT_EQ(past_next.open_holes, Fresh(merged, next.n + 1).open_holes);
  Cached(&cache, merged, next.n + 2);
  EXPECT_EQ(cache.reuses(), 1u);
}

TEST(ClassMemberCache, NothingToCloseRunsNoSearch) {
  const MergedRecords merged = Frontier(Pow2(44));
  ClassMemberCache cache;
  LeaseContext ctx = ComputeLeaseContext(merged, Pow2(44), Kinds::kDelay);
  ASSERT_TRUE(ctx.open_holes.empty());
  ASSERT_TRUE(cache.CloseHoles(merged, Pow2(44), &ctx).ok());
  EXPECT_EQ(cache.searches() + cache.reuses(), 0u);
}

}  // namespace
}  // namespace collatz
