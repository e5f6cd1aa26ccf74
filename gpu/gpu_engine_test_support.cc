// Helpers of the GPU engine's tests (gpu/gpu_engine_test_support.h).
#include "gpu/gpu_engine_test_support.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>

#include "core/test_support.h"

namespace collatz::gpu_test {

// Search tables with a sieve of `sieve_bits` (19-bit step table, 20-bit tail), built once.
std::shared_ptr<const SearchTables> TablesWithSieve(int sieve_bits) {
  static std::map<int, std::shared_ptr<const SearchTables>> built;
  std::shared_ptr<const SearchTables>& tables = built[sieve_bits];
  if (tables == nullptr) {
    Status st = SearchTables::Build(sieve_bits, 19, 20, &tables);
    if (!st.ok()) ADD_FAILURE() << st.ToString();
  }
  return tables;
}

std::shared_ptr<const SearchTables> Tables() { return TablesWithSieve(19); }

const std::vector<Record>& PublishedRecords() { return testing_support::PublishedRecordsByN(); }

GpuEngineOptions GroupOptions(int bits, int min_members) {
  GpuEngineOptions o;
  o.group_bits = o.class_group_bits = o.shallow_group_bits = o.unchecked_group_bits = bits;
  o.group_min_members = o.class_group_min_members = min_members;
  return o;
}

std::unique_ptr<SearchEngine> MakeGpu(GpuEngineOptions options, std::shared_ptr<const SearchTables> tables) {
  std::unique_ptr<SearchEngine> engine;
  Status st = MakeGpuEngine(tables, options, &engine);
  if (!st.ok()) {
    ADD_FAILURE() << st.ToString();
    std::abort();  // every GPU test needs its engine
  }
  return engine;
}

UnitResult CpuSearch(const UnitSpec& spec) {
  CpuEngine cpu(Tables(), CpuEngineOptions{});
  UnitResult r;
  Status st = cpu.Search(spec, &r);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return r;
}

UnitResult GpuSearch(SearchEngine& gpu, const UnitSpec& spec) {
  UnitResult r;
  Status st = gpu.Search(spec, &r);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return r;
}

// The floor, record table and (for class searches) some holes a unit at `begin` would be
// leased with, from the published records (complete below their last row).
UnitSpec SpecWithRecords(u128 begin, u128 end, Kinds kinds, std::mt19937_64* rng) {
  UnitSpec spec = testing_support::SpecBelowPublished(begin, end, kinds, true);
  // The published list is complete below its last row only.
  spec.records_complete_below = std::min(begin, PublishedRecords().back().n + 1);
  if (kinds == Kinds::kDelayAndClass && rng != nullptr && spec.floor > 50) {
    // Holes: a run just below the floor (where real holes are) and a few scattered ones.
    std::vector<uint32_t> holes;
    for (uint32_t d = spec.floor - 30; d <= spec.floor; ++d) {
      if ((*rng)() % 3 == 0) holes.push_back(d);
    }
    for (int i = 0; i < 10; ++i) holes.push_back(static_cast<uint32_t>((*rng)() % (spec.floor + 1)));
    std::sort(holes.begin(), holes.end());
    holes.erase(std::unique(holes.begin(), holes.end()), holes.end());
    spec.open_holes = holes;
  }
  return spec;
}

// Only the holes within 40 of the floor (a class unit at a real frontier).
UnitSpec HolesNearTheFloor(UnitSpec spec) {
  auto low = [&](uint32_t d) { return d + 40 < spec.floor; };
  spec.open_holes.erase(std::remove_if(spec.open_holes.begin(), spec.open_holes.end(), low), spec.open_holes.end());
  return spec;
}

UnitSpec WithLowerFloor(UnitSpec spec, uint32_t floor) {
  spec.floor = floor;
  while (!spec.known_records.empty() && spec.known_records.back().delay > spec.floor) {
    spec.records_complete_below = spec.known_records.back().n;
    spec.known_records.pop_back();
  }
  return spec;
}

uint32_t TypicalDelayFloor(unsigned height, uint32_t floor) { return std::min<uint32_t>(floor, 9 * height); }

void ExpectSame(SearchEngine& gpu, const UnitSpec& spec) { ExpectSameOnTables(*Tables(), gpu, spec); }

// Random per run; COLLATZ_TEST_SEED repeats a failed run's units.
uint64_t Seed() {
  static const uint64_t seed = [] {
    const char* fixed = std::getenv("COLLATZ_TEST_SEED");
    return fixed != nullptr ? std::strtoull(fixed, nullptr, 10) : uint64_t{std::random_device{}()};
  }();
  return seed;
}

std::shared_ptr<const SearchTables> SmallSieveTables() { return TablesWithSieve(12); }

void ExpectSameOnTables(const SearchTables& tables, SearchEngine& gpu, const UnitSpec& spec) {
  SCOPED_TRACE("unit [" + ToDecimal(spec.begin) + ", " + ToDecimal(spec.end) + ") floor " +
               std::to_string(spec.floor) + (spec.kinds == Kinds::kDelay ? " delay" : " delay+class") + " holes " +
               std::to_string(spec.open_holes.size()));
  CpuEngine cpu(std::shared_ptr<const SearchTables>(&tables, [](const SearchTables*) {}), CpuEngineOptions{});
  UnitResult want;
  ASSERT_TRUE(cpu.Search(spec, &want).ok());
  const UnitResult got = GpuSearch(gpu, spec);
  EXPECT_EQ(got, want) << "gpu: " << DescribeUnitResult(got) << "\ncpu: " << DescribeUnitResult(want);
}

// A unit leased without trust (docs/FLOOR.md): the floor is the largest delay of the published
// records below it (recomputed, not trusted), no record table, so no early termination; class
// units with every class up to the floor open but those the records and their doublings fill.
UnitSpec FloorOnlySpec(u128 begin, u128 end, Kinds kinds) {
  UnitSpec spec;
  spec.begin = begin;
  spec.end = end;
  spec.kinds = kinds;
  std::vector<bool> filled;
  for (const Record& r : PublishedRecords()) {
    if (r.n >= begin) break;
    spec.floor = std::max(spec.floor, r.delay);
  }
  if (kinds == Kinds::kDelayAndClass) {
    filled.assign(spec.floor + 1, false);
    for (const Record& r : PublishedRecords()) {
      for (u128 m = r.n, d = r.delay; m < begin && d <= spec.floor; m *= 2, ++d) filled[static_cast<size_t>(d)] = true;
    }
    for (uint32_t d = 0; d <= spec.floor; ++d) {
      if (!filled[d]) spec.open_holes.push_back(d);
    }
  }
  return spec;
}

u128 Value(const ulonglong2& e) { return u128{e.y} << 64 | e.x; }

}  // namespace collatz::gpu_test
