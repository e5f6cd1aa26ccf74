// The class-member search against exhaustive delays below 2^20 and the published records.
#include "core/class_members.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
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

// The testbed: every class record below 2^28 is known (class_records_below_2p28.csv, 793
// classes), and the search starts from the published delay records below 2^28 alone.
struct Testbed {
  std::map<uint32_t, u128> smallest;  // delay -> its class record
  std::vector<Record> seeds;
  uint32_t floor = 0;
};

const Testbed& Below2To28() {
  static const Testbed testbed = [] {
    Testbed t;
    for (const Record& r : ReferenceRecords("class_records_below_2p28.csv", RecordCsvKind::kClass)) {
      t.smallest[r.delay] = r.n;
    }
    for (const Record& r : DelayRecords()) {
      if (r.n < Pow2(28)) t.seeds.push_back(r);
    }
    t.floor = t.smallest.rbegin()->first;
    return t;
  }();
  return testbed;
}

// Checks every member against the testbed and returns how many classes they close (a member
// and its doublings below 2^28).
size_t ClassesClosedBelow2To28(const std::vector<Record>& members) {
  const Testbed& t = Below2To28();
  std::vector<bool> closed(t.floor + 1, false);
  for (const Record& m : members) {
    EXPECT_TRUE(m.n < Pow2(28));
    EXPECT_EQ(SlowDelay(m.n), m.delay) << ToDecimal(m.n);
    auto it = t.smallest.find(m.delay);
    if (it == t.smallest.end()) {
      ADD_FAILURE() << "a member of class " << m.delay << ", which has none below 2^28";
      continue;
    }
    EXPECT_TRUE(m.n >= it->second) << "below the class record of " << m.delay;
    u128 n = m.n;
    for (uint32_t d = m.delay; n < Pow2(28) && d <= t.floor; ++d, n <<= 1) closed[d] = true;
  }
  return static_cast<size_t>(std::count(closed.begin(), closed.end(), true));
}

TEST(ClassMembers, CloseMostClassesOfTheTestbedBelow2To28) {
  const Testbed& t = Below2To28();
  ASSERT_EQ(t.smallest.size(), 793u);
  ClassMemberSearch search;
  search.below = Pow2(28);
  search.max_delay = t.floor;
  std::vector<Record> members;
  ASSERT_TRUE(FindClassMembers(t.seeds, search, &members).ok());
  // The search reaches 768 (keeping the smallest numbers of each level: 759). The 25 it
  // misses come from families whose trajectories climb 12 to 22 bits above 2^28 and meet the
  // records' only far below (737, 767, 769, 772 ... 899).
  EXPECT_GE(ClassesClosedBelow2To28(members), 766u);
}

TEST(ClassMembers, AncestorWeightFindsMoreThanTheSmallest) {
  const Testbed& t = Below2To28();
  ClassMemberSearch search;
  search.below = Pow2(28);
  search.max_delay = t.floor;
  std::vector<Record> weighted, smallest;
  ASSERT_TRUE(FindClassMembers(t.seeds, search, &weighted).ok());
  search.lookahead_levels = 0;
  ASSERT_TRUE(FindClassMembers(t.seeds, search, &smallest).ok());
  const size_t by_weight = ClassesClosedBelow2To28(weighted), by_size = ClassesClosedBelow2To28(smallest);
  EXPECT_GT(by_weight, by_size);
  EXPECT_GE(by_size, 755u);
}

TEST(ClassMembers, DoNotDependOnTheOrderOfTheSeeds) {
  const Testbed& t = Below2To28();
  ClassMemberSearch search;
  search.below = Pow2(28);
  search.max_delay = t.floor;
  std::vector<Record> seeds = t.seeds, first, second;
  ASSERT_TRUE(FindClassMembers(seeds, search, &first).ok());
  std::mt19937 rng(7);
  std::shuffle(seeds.begin(), seeds.end(), rng);
  ASSERT_TRUE(FindClassMembers(seeds, search, &second).ok());
  EXPECT_EQ(first, second);
}

TEST(ClassMembers, RefusesWrongSeedsAndBounds) {
  std::vector<Record> members;
  ClassMemberSearch search;
  search.below = 1000;
  search.max_delay = 100;
  EXPECT_EQ(FindClassMembers({{27, 110}}, search, &members).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(FindClassMembers({{27, 112}}, search, &members).code(), Status::Code::kInvalidArgument);
  // A trajectory that leaves 128 bits is checked on GMP integers.
  const uint32_t wide = SlowDelay(kU128Max);
  EXPECT_TRUE(FindClassMembers({{kU128Max, wide}}, search, &members).ok());
  EXPECT_EQ(FindClassMembers({{kU128Max, wide + 1}}, search, &members).code(), Status::Code::kInvalidArgument);
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
