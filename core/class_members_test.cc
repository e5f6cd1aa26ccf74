// The class-member search against exhaustive delays below 2^20 and the published records.
#include "core/class_members.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/delay.h"
#include "core/records_csv.h"
#include "core/test_support.h"

namespace collatz {
namespace {

using testing_support::ReferenceRecords;

std::vector<Record> DelayRecords() {
  return ReferenceRecords("delay_records.csv", RecordCsvKind::kDelay);
}

TEST(ClassMembers, AreExactAndNeverBelowTheTrueSmallestMember) {
  constexpr uint64_t kBelow = 1u << 20;
  std::vector<uint64_t> smallest(1000, 0);  // delay -> smallest n below kBelow (0: none)
  uint32_t floor = 0;
  for (uint64_t n = 1; n < kBelow; ++n) {
    const uint32_t d = SlowDelay(n);
    if (smallest[d] == 0) smallest[d] = n;
    floor = std::max(floor, d);
  }
  ClassMemberSearch search;
  search.below = kBelow;
  search.max_delay = floor;
  std::vector<Record> members;
  ASSERT_TRUE(FindClassMembers(DelayRecords(), search, &members).ok());
  size_t exists = 0;
  for (uint32_t d = 0; d <= floor; ++d) exists += smallest[d] != 0;
  uint32_t last = 0;
  for (size_t i = 0; i < members.size(); ++i) {
    const Record& m = members[i];
    ASSERT_TRUE(m.n < kBelow);
    ASSERT_LE(m.delay, floor);
    EXPECT_EQ(SlowDelay(m.n), m.delay);
    ASSERT_NE(smallest[m.delay], 0u) << "a member of a class with none below the bound";
    EXPECT_TRUE(m.n >= smallest[m.delay]);
    if (i > 0) EXPECT_GT(m.delay, last);
    last = m.delay;
  }
  // Not a proof of anything, but a search that finds few classes would be useless.
  EXPECT_GT(members.size(), exists * 9 / 10) << members.size() << " of " << exists;
}

TEST(ClassMembers, FindMembersOfHighClassesBelow2To60) {
  ClassMemberSearch search;
  search.below = Pow2(60);
  search.max_delay = 2283;  // the largest delay below 2^60
  std::vector<Record> members;
  ASSERT_TRUE(FindClassMembers(DelayRecords(), search, &members).ok());
  ASSERT_FALSE(members.empty());
  for (const Record& m : members) ASSERT_TRUE(m.n < Pow2(60));
  EXPECT_EQ(members.back().delay, 2283u);  // the record itself
  EXPECT_GT(members.size(), 2100u);
}

TEST(ClassMembers, RefusesWrongSeedsAndBounds) {
  std::vector<Record> members;
  ClassMemberSearch search;
  search.below = 1000;
  search.max_delay = 100;
  EXPECT_EQ(FindClassMembers({{27, 110}}, search, &members).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(FindClassMembers({{0, 0}}, search, &members).code(), Status::Code::kInvalidArgument);
  search.below = 1;
  EXPECT_EQ(FindClassMembers({{27, 111}}, search, &members).code(), Status::Code::kInvalidArgument);
  search.below = 1000;
  search.beam_width = 0;
  EXPECT_EQ(FindClassMembers({{27, 111}}, search, &members).code(), Status::Code::kInvalidArgument);
  // With no seeds the climb starts at 1 alone: 1, 2, 4, 8, 16, 5 (delay 5), ...
  search.beam_width = 4;
  ASSERT_TRUE(FindClassMembers({}, search, &members).ok());
  ASSERT_GE(members.size(), 6u);
  EXPECT_EQ(members[5], (Record{5, 5}));
}

}  // namespace
}  // namespace collatz
