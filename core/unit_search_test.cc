#include "core/unit_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/cpu_engine.h"
#include "core/early_termination.h"
#include "core/test_support.h"

namespace collatz {
namespace {

using testing_support::PublishedDelayRecords;
using testing_support::SpecFromKnowledge;

class UnitSearchTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(SearchTables::Build(19, 19, 20, &tables19_).ok());
    ASSERT_TRUE(SearchTables::Build(8, 11, 14, &tables8_).ok());
    published_ = new MergedRecords(MergeRecords({PublishedDelayRecords()}, {}));
  }
  static void TearDownTestSuite() {
    tables19_.reset();
    tables8_.reset();
    delete published_;
  }

  // The engine with small chunks (many chunk boundaries) against the plain version.
  // `out`, if given, receives the result.
  static void ExpectAgreement(const std::shared_ptr<const SearchTables>& tables, const UnitSpec& spec,
                              UnitResult* out = nullptr) {
    CpuEngine engine(tables, CpuEngineOptions{2, 1 << 12});
    UnitResult fast;
    ASSERT_TRUE(engine.Search(spec, &fast).ok());
    const UnitResult simple = SearchRangeSimple(*tables, spec, spec.begin, spec.end);
    ASSERT_EQ(fast, simple) << "unit [" << ToDecimal(spec.begin) << ", " << ToDecimal(spec.end) << ") floor " << spec.floor
                            << "\nengine: " << DescribeUnitResult(fast) << "\nsimple: " << DescribeUnitResult(simple);
    EXPECT_GT(fast.candidates, 0u);
    if (out != nullptr) *out = fast;
  }

  static std::shared_ptr<const SearchTables> tables19_, tables8_;
  static MergedRecords* published_;
};
std::shared_ptr<const SearchTables> UnitSearchTest::tables19_, UnitSearchTest::tables8_;
MergedRecords* UnitSearchTest::published_ = nullptr;

// Tables without the offset table (as built for the GPU) are refused by the CPU engine for
// delay-only units; WithCpuOffsets gives them back with it, sharing everything else, and
// leaves complete tables as they are.
TEST_F(UnitSearchTest, WithCpuOffsetsAddsTheOffsetTableOnly) {
  auto bare = std::make_shared<SearchTables>(*tables8_);
  bare->delay_offsets = nullptr;
  const UnitSpec spec = SpecFromKnowledge(*published_, Pow2(30), Pow2(30) + 5000, Kinds::kDelay);
  UnitResult refused, want, got;
  EXPECT_EQ(CpuEngine(bare, CpuEngineOptions{}).Search(spec, &refused).code(), Status::Code::kFailedPrecondition);
  const std::shared_ptr<const SearchTables> cpu = SearchTables::WithCpuOffsets(bare);
  EXPECT_EQ(cpu->sieve, bare->sieve);
  EXPECT_EQ(cpu->delay, bare->delay);
  ASSERT_NE(cpu->delay_offsets, nullptr);
  for (unsigned h = 0; h < 9; ++h) EXPECT_EQ(cpu->delay_offsets->Variant(h), tables8_->delay_offsets->Variant(h));
  ASSERT_TRUE(CpuEngine(cpu, CpuEngineOptions{}).Search(spec, &got).ok());
  ASSERT_TRUE(CpuEngine(tables8_, CpuEngineOptions{}).Search(spec, &want).ok());
  EXPECT_EQ(got, want);
  EXPECT_EQ(SearchTables::WithCpuOffsets(tables8_), tables8_);
}

// Tables of another sieve width sharing the step and tail tables search as tables built
// whole with that width.
TEST_F(UnitSearchTest, TablesOfAnotherWidthShareTheDelayTables) {
  std::shared_ptr<const Sieve> sieve;
  ASSERT_TRUE(Sieve::Generate(10, &sieve).ok());
  std::shared_ptr<const SearchTables> shared, whole;
  ASSERT_TRUE(SearchTables::FromSieve(sieve, tables8_->delay, &shared).ok());
  ASSERT_TRUE(SearchTables::Build(10, 11, 14, &whole).ok());
  EXPECT_EQ(shared->delay, tables8_->delay);
  EXPECT_EQ(shared->sieve->bits(), 10);
  ASSERT_NE(shared->delay_offsets, nullptr);
  for (Kinds kinds : {Kinds::kDelay, Kinds::kDelayAndClass}) {
    const UnitSpec spec = SpecFromKnowledge(*published_, Pow2(30), Pow2(30) + 50000, kinds);
    UnitResult a, b;
    ASSERT_TRUE(CpuEngine(shared, CpuEngineOptions{}).Search(spec, &a).ok());
    ASSERT_TRUE(CpuEngine(whole, CpuEngineOptions{}).Search(spec, &b).ok());
    EXPECT_EQ(a, b);
  }
  EXPECT_FALSE(SearchTables::FromSieve(sieve, nullptr, &shared).ok());
}

TEST_F(UnitSearchTest, FloorZeroInTheFirstBlockAndAcrossIt) {
  for (Kinds kinds : {Kinds::kDelay, Kinds::kDelayAndClass}) {
    UnitSpec spec;
    spec.kinds = kinds;
    spec.begin = 1;
    spec.end = Pow2(21) + 12345;
    ExpectAgreement(tables19_, spec);
    spec.begin = Pow2(19) - 1000;
    ExpectAgreement(tables19_, spec);
    ExpectAgreement(tables8_, spec);
  }
}

TEST_F(UnitSearchTest, FirstBlockLadderIsTheRecordList) {
  UnitSpec spec;
  spec.kinds = Kinds::kDelayAndClass;
  spec.begin = 1;
  spec.end = 1000;
  spec.open_holes = {0};  // nothing below 1 is known, so class 0 is open too
  UnitResult r;
  CpuEngine engine(tables19_, CpuEngineOptions{1, 1 << 12});
  ASSERT_TRUE(engine.Search(spec, &r).ok());
  // The ladder is the running maximum over odd N (evens are never computed) above the floor.
  std::vector<Record> expected;
  uint32_t best = 0;
  for (uint64_t n = 1; n < 1000; n += 2) {
    const uint32_t d = SlowDelay(n);
    if (d > best) {
      expected.push_back({n, d});
      best = d;
    }
  }
  EXPECT_EQ(r.ladder, expected);
  // Merged with rule 1, it gives the published delay records below 1000.
  FinishedUnit unit{spec.begin, spec.end, spec.kinds, r};
  std::vector<uint64_t> records;
  for (const Record& e : MergeRecords({}, {unit}).delay_final) records.push_back(static_cast<uint64_t>(e.n));
  EXPECT_EQ(records, (std::vector<uint64_t>{1, 2, 3, 6, 7, 9, 18, 25, 27, 54, 73, 97, 129, 171, 231, 313, 327, 649, 703, 871}));
  ASSERT_FALSE(r.class_minima.empty());
  EXPECT_EQ(r.class_minima[0].delay, 0u);
  EXPECT_EQ(r.class_minima[0].n, 1u);
}

TEST_F(UnitSearchTest, RandomUnitsWithRandomFloorsAndHoles) {
  std::mt19937_64 rng(99);
  for (int t = 0; t < 40; ++t) {
    UnitSpec spec;
    spec.kinds = (t % 2) ? Kinds::kDelay : Kinds::kDelayAndClass;
    const int bits = 20 + static_cast<int>(rng() % 100);
    spec.begin = MakeU128(rng(), rng()) & (Pow2(bits) - 1);
    spec.begin |= Pow2(bits - 1);
    spec.end = spec.begin + 1 + (rng() % (uint64_t{1} << 17));
    spec.floor = static_cast<uint32_t>(rng() % 1500);
    for (uint32_t d = 0; d <= spec.floor; ++d) {
      if (rng() % 7 == 0) spec.open_holes.push_back(d);
    }
    if (t % 3 != 0) {
      spec.known_records = published_->delay_final;
      spec.records_complete_below = published_->covered_prefix;
    }
    ExpectAgreement(t % 4 == 0 ? tables8_ : tables19_, spec);
  }
}

// Units as a frontier search leases them: floor, holes and record table from the published
// records below the unit, each unit holding a published delay record near 2^60, so that the
// results compared are not empty: the record must come out as the ladder's last entry.
TEST_F(UnitSearchTest, UnitsNear2p60WithEarlyTermination) {
  u128 n1475;
  ASSERT_TRUE(ParseU128("1980976057694848447", &n1475).ok());
  for (const char* record : {"931386509544713451", "1278775404785934855", "1339302163616345727"}) {
    u128 n;
    ASSERT_TRUE(ParseU128(record, &n).ok());
    const uint32_t delay = tables19_->delay->Delay(n);
    for (Kinds kinds : {Kinds::kDelay, Kinds::kDelayAndClass}) {
      const u128 a = n - 100000;
      UnitSpec spec = SpecFromKnowledge(*published_, a, a + (1 << 18), kinds);
      ASSERT_LT(spec.floor, delay);
      ASSERT_TRUE(spec.records_complete_below > 0);  // early termination on
      UnitResult r;
      ASSERT_NO_FATAL_FAILURE(ExpectAgreement(tables19_, spec, &r));
      ASSERT_FALSE(r.ladder.empty()) << record;
      EXPECT_EQ(r.ladder.back(), (Record{n, delay}));
      EXPECT_GE(r.tally_count, r.ladder.size());
    }
  }
  // 1980976057694848447 (delay 1475, passes 2^125) comes out with its exact delay when open.
  UnitSpec spec;
  spec.kinds = Kinds::kDelayAndClass;
  spec.begin = n1475;
  spec.end = n1475 + 1;
  UnitResult r;
  CpuEngine engine(tables19_, CpuEngineOptions{1, 1 << 12});
  ASSERT_TRUE(engine.Search(spec, &r).ok());
  ASSERT_EQ(r.candidates, 1u);  // the 19-bit sieve keeps it (a condition here let the test check nothing)
  ASSERT_EQ(r.ladder.size(), 1u);
  EXPECT_EQ(r.ladder[0].delay, 1475u);
  // Searching it without the sieve through the first block path is not possible, so check the plain delay too.
  EXPECT_EQ(tables19_->delay->Delay(n1475), 1475u);
}

TEST_F(UnitSearchTest, UnitsAbove2p64AndNear2p128) {
  u128 big;
  ASSERT_TRUE(ParseU128("48503373501652785087", &big).ok());
  for (Kinds kinds : {Kinds::kDelay, Kinds::kDelayAndClass}) {
    for (u128 a : {big - 5000, Pow2(66) + 77, Pow2(120) + 3, kU128Max - 70000}) {
      UnitSpec spec = SpecFromKnowledge(*published_, a, a + 60000, kinds);
      ExpectAgreement(tables19_, spec);
      ExpectAgreement(tables8_, spec);
    }
  }
}

// On units that hold a published delay record (38903934249727, delay 1617, near 2^45), so
// that the results compared are not empty.
TEST_F(UnitSearchTest, EarlyTerminationChangesNothing) {
  const u128 record = 38903934249727ULL;
  const u128 a = record - (1 << 19) + 999;
  for (Kinds kinds : {Kinds::kDelay, Kinds::kDelayAndClass}) {
    UnitSpec with = SpecFromKnowledge(*published_, a, a + (1 << 20), kinds);
    UnitSpec without = with;
    without.known_records.clear();
    without.records_complete_below = 0;
    CpuEngine engine(tables19_, CpuEngineOptions{2, 1 << 16});
    UnitResult r1, r2;
    ASSERT_TRUE(engine.Search(with, &r1).ok());
    ASSERT_TRUE(engine.Search(without, &r2).ok());
    EXPECT_EQ(r1, r2);
    ASSERT_FALSE(r1.ladder.empty());
    EXPECT_EQ(r1.ladder.back(), (Record{record, 1617}));
    EXPECT_TRUE(EarlyTermination(with).enabled());
  }
}

// What an audit compares that depends on the walk (docs/PROTOCOL.md, "What an audit can and
// cannot catch"): tally_count and tally_sum are the count and delay sum of every examined N
// whose delay is open, recomputed here number by number with the exact delay. Early
// termination is on, and the window holds numbers of open delay (a record among them), so
// a walk stopped too early for any of them changes the tallies.
TEST_F(UnitSearchTest, TalliesCountEveryExaminedNumberOfOpenDelay) {
  const u128 record = 38903934249727ULL;
  const u128 a = record - (1 << 15);
  const Sieve& sieve = *tables19_->sieve;
  for (Kinds kinds : {Kinds::kDelay, Kinds::kDelayAndClass}) {
    const UnitSpec spec = SpecFromKnowledge(*published_, a, a + (1 << 16), kinds);
    ASSERT_TRUE(EarlyTermination(spec).enabled());
    UnitResult r;
    ASSERT_TRUE(CpuEngine(tables19_, CpuEngineOptions{2, 1 << 12}).Search(spec, &r).ok());
    uint64_t count = 0, sum = 0, examined = 0;
    for (u128 n = a | 1; n < spec.end; n += 2) {
      const uint64_t residue = static_cast<uint64_t>(n & (Pow2(static_cast<unsigned>(sieve.bits())) - 1));
      if (!std::binary_search(sieve.residues().begin(), sieve.residues().end(), residue)) continue;
      if (!OddNumberIsComputed(static_cast<unsigned>(n % 9), kinds, 9)) continue;
      ++examined;
      const uint32_t d = tables19_->delay->Delay(n);
      const bool open =
          d > spec.floor || std::binary_search(spec.open_holes.begin(), spec.open_holes.end(), d);
      if (open) {
        ++count;
        sum += d;
      }
    }
    EXPECT_EQ(r.candidates, examined);
    EXPECT_EQ(static_cast<u128>(r.candidates), CountExamined(sieve, kinds, spec.begin, spec.end));
    EXPECT_GE(count, 1u);
    EXPECT_EQ(r.tally_count, count);
    EXPECT_EQ(r.tally_sum, sum);
  }
}

// The entry stop (SearchRange in delay-only units with early termination): one chunk over
// the whole unit against the plain search, field by field. Returns how many numbers stopped
// with their whole sieve entry.
uint64_t ExpectEntryStopAgreement(const SearchTables& tables, const UnitSpec& spec) {
  SearchRangeStats stats;
  const UnitResult got = SearchRange(tables, spec, EarlyTermination(spec), spec.begin, spec.end, nullptr, nullptr, &stats);
  const UnitResult want = SearchRangeSimple(tables, spec, spec.begin, spec.end);
  EXPECT_EQ(got, want) << "unit [" << ToDecimal(spec.begin) << ", " << ToDecimal(spec.end) << ") floor " << spec.floor
                       << ", " << stats.entry_stopped << " entry-stopped\nsearch: " << DescribeUnitResult(got)
                       << "\nsimple: " << DescribeUnitResult(want);
  EXPECT_LE(stats.entry_stopped, got.candidates);
  // Entry-stopped numbers are candidates too: the count is the sieve's (the verifier's check).
  EXPECT_EQ(static_cast<u128>(got.candidates), CountExamined(*tables.sieve, spec.kinds, spec.begin, spec.end));
  return stats.entry_stopped;
}

// The bench's unit at 2^60 (floor 2283, the published records as the stop table), not
// aligned to the 2^19 blocks: most sieve entries stop within their first 19 T-steps.
TEST_F(UnitSearchTest, EntryStopNear2p60StopsMostNumbersAndChangesNothing) {
  const u128 a = Pow2(60) + 123457;
  const UnitSpec spec = SpecFromKnowledge(*published_, a, a + Pow2(21) + 54321, Kinds::kDelay);
  ASSERT_TRUE(EarlyTermination(spec).enabled());
  const uint64_t stopped = ExpectEntryStopAgreement(*tables19_, spec);
  const UnitResult r = SearchRangeSimple(*tables19_, spec, spec.begin, spec.end);
  // About 64% of the whole blocks' numbers (the GPU's lever 48 measured 66%); the edge blocks
  // (a quarter of this window) go the old way.
  EXPECT_GT(stopped, r.candidates * 2 / 5) << stopped << " of " << r.candidates;
}

// A range with fewer whole blocks than entry_stop_min_blocks walks every entry (the engine's
// rule for wide sieves, whose chunks hold few blocks): the same result, nothing entry-stopped;
// at the threshold the entry stop runs again.
TEST_F(UnitSearchTest, EntryStopMinBlocksWalksSmallRangesWithTheSameResult) {
  const u128 a = Pow2(60) + 123457;
  const UnitSpec spec = SpecFromKnowledge(*published_, a, a + Pow2(21) + 54321, Kinds::kDelay);
  const EarlyTermination et(spec);
  const UnitResult want = SearchRangeSimple(*tables19_, spec, spec.begin, spec.end);
  const uint64_t whole_blocks = 3;  // [a, a + 2^21 + 54321) holds blocks 2^41 + 1 .. 2^41 + 3 whole
  for (uint64_t min_blocks : {uint64_t{0}, whole_blocks, whole_blocks + 1, uint64_t{1} << 40}) {
    SearchRangeStats stats;
    const UnitResult got = SearchRange(*tables19_, spec, et, spec.begin, spec.end, nullptr, nullptr, &stats, min_blocks);
    EXPECT_EQ(got, want) << "entry_stop_min_blocks " << min_blocks;
    if (min_blocks <= whole_blocks) {
      EXPECT_GT(stats.entry_stopped, 0u) << min_blocks;
    } else {
      EXPECT_EQ(stats.entry_stopped, 0u) << min_blocks;
    }
  }
}

// Windows around published delay records near 2^60 and 2^45: the record's entry must stay
// live and the record come out as the ladder's last entry.
TEST_F(UnitSearchTest, EntryStopKeepsTheRecords) {
  for (const char* record : {"38903934249727", "931386509544713451", "1278775404785934855"}) {
    u128 n;
    ASSERT_TRUE(ParseU128(record, &n).ok());
    const UnitSpec spec = SpecFromKnowledge(*published_, n - Pow2(20) - 777, n + Pow2(20) + 555, Kinds::kDelay);
    EXPECT_GT(ExpectEntryStopAgreement(*tables19_, spec), 0u) << record;
    const UnitResult r = SearchRangeSimple(*tables19_, spec, spec.begin, spec.end);
    ASSERT_FALSE(r.ladder.empty()) << record;
    EXPECT_EQ(r.ladder.back().n, n);
  }
}

// Random delay-only units at heights 2^20 to 2^100 with the floors and stop tables a real
// search would lease, an 8-bit sieve (many whole blocks per unit), random bounds. Near 2^20
// the h range of one unit is wide and records are close: deciding an entry on its smallest
// number instead of its largest drops the record 1117065 of [1064467, 1125870) here.
TEST_F(UnitSearchTest, EntryStopOnRandomDelayOnlyUnits) {
  std::mt19937_64 rng(27);
  uint64_t stopped = 0;
  for (int t = 0; t < 40; ++t) {
    const int bits = 20 + static_cast<int>(rng() % 81);
    u128 a = (MakeU128(rng(), rng()) & (Pow2(bits) - 1)) | Pow2(bits - 1);
    if (t % 4 == 0) a &= ~(Pow2(8) - 1);  // block-aligned start
    u128 b = a + 1 + rng() % (t < 10 ? (uint64_t{1} << 21) : (uint64_t{1} << 16));
    if (t % 4 == 1) b &= ~(Pow2(8) - 1);  // block-aligned end
    if (b <= a) b = a + 1;
    const UnitSpec spec = SpecFromKnowledge(*published_, a, b, Kinds::kDelay);
    stopped += ExpectEntryStopAgreement(*tables8_, spec);
  }
  EXPECT_GT(stopped, 0u);
}

// The engine's chunks of delay-only units (entry_stop_chunk_blocks) cut blocks at both
// ends and hold whole blocks between; the merged result equals the plain search.
TEST_F(UnitSearchTest, EngineChunksWithEntryStop) {
  u128 n;
  ASSERT_TRUE(ParseU128("1339302163616345727", &n).ok());
  const UnitSpec spec = SpecFromKnowledge(*published_, n - Pow2(21) - 4321, n + Pow2(21) + 999, Kinds::kDelay);
  CpuEngineOptions options{2, 1 << 12};
  options.entry_stop_chunk_blocks = 3;
  options.entry_stop_min_blocks = 0;
  UnitResult got;
  ASSERT_TRUE(CpuEngine(tables19_, options).Search(spec, &got).ok());
  EXPECT_EQ(got, SearchRangeSimple(*tables19_, spec, spec.begin, spec.end));
  ASSERT_FALSE(got.ladder.empty());
  EXPECT_EQ(got.ladder.back().n, n);
}

// No entry stop where its premise fails: class units (their stop test is not monotone in v)
// and units without early termination.
TEST_F(UnitSearchTest, NoEntryStopInClassUnitsOrWithoutEarlyTermination) {
  const u128 a = Pow2(60) + 99;
  UnitSpec classes = SpecFromKnowledge(*published_, a, a + Pow2(12) * 5, Kinds::kDelayAndClass);
  UnitSpec no_table = SpecFromKnowledge(*published_, a, a + Pow2(12) * 5, Kinds::kDelay);
  no_table.known_records.clear();
  no_table.records_complete_below = 0;
  for (const UnitSpec& spec : {classes, no_table}) {
    SearchRangeStats stats;
    const UnitResult r = SearchRange(*tables8_, spec, EarlyTermination(spec), spec.begin, spec.end, nullptr, nullptr, &stats);
    EXPECT_EQ(r, SearchRangeSimple(*tables8_, spec, spec.begin, spec.end));
    EXPECT_GT(r.candidates, 0u);
    EXPECT_EQ(stats.entry_stopped, 0u);
  }
}

TEST_F(UnitSearchTest, RejectsBadSpecs) {
  CpuEngine engine(tables19_, CpuEngineOptions{1, 1 << 12});
  UnitResult r;
  UnitSpec spec;
  spec.begin = 10;
  spec.end = 10;
  EXPECT_FALSE(engine.Search(spec, &r).ok());
  spec.begin = 0;
  spec.end = 10;
  EXPECT_FALSE(engine.Search(spec, &r).ok());
  spec.begin = 1;
  spec.floor = 3;
  spec.open_holes = {5};
  EXPECT_FALSE(engine.Search(spec, &r).ok());
}

TEST_F(UnitSearchTest, ProgressAndCancel) {
  UnitSpec spec;
  spec.begin = Pow2(40);
  spec.end = Pow2(40) + Pow2(24);
  spec.kinds = Kinds::kDelay;
  CpuEngine engine(tables19_, CpuEngineOptions{2, 1 << 16});
  uint64_t last_done = 0, last_total = 0;
  UnitResult r;
  ASSERT_TRUE(engine.Search(spec, &r, [&](uint64_t done, uint64_t total) { last_done = done; last_total = total; }).ok());
  EXPECT_EQ(last_total, uint64_t{1} << 24);
  EXPECT_EQ(last_done, last_total);
  std::atomic<bool> cancel{true};
  EXPECT_EQ(engine.Search(spec, &r, nullptr, &cancel).code(), Status::Code::kUnavailable);
}

}  // namespace
}  // namespace collatz
