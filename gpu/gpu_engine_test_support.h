// Helpers of the GPU engine's tests (gpu_engine_test, gpu_tables_test.cc, gpu_groups_test.cc):
// the search tables they share, engines, the CPU engine's result of the same unit, and unit
// specs as a lease would carry them.
#pragma once

#include <gtest/gtest.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "core/cpu_engine.h"
#include "core/records_csv.h"
#include "core/unit_spec.h"
#include "gpu/gpu_engine.h"

// Skips a test where no CUDA device is present (CI builds the GPU tests but has no GPU).
#define REQUIRE_GPU()                                                 \
  do {                                                                \
    if (::collatz::GpuDeviceCount() == 0) GTEST_SKIP() << "no CUDA device"; \
  } while (0)

namespace collatz::gpu_test {

// Search tables with a sieve of `sieve_bits` (19-bit step table, 20-bit tail), built once.
std::shared_ptr<const SearchTables> TablesWithSieve(int sieve_bits);
std::shared_ptr<const SearchTables> Tables();  // the 19-bit sieve
// A 12-bit sieve makes cycles short, so units of 2^26 numbers hold enough whole cycles for
// residue groups of every width the tests try.
std::shared_ptr<const SearchTables> SmallSieveTables();
const std::vector<Record>& PublishedRecords();

// Options whose residue groups are `bits` wide in every kind of unit (class, shallow and
// unchecked groups alike) and keep at least `min_members` members, so that small test units
// take them.
GpuEngineOptions GroupOptions(int bits, int min_members);
// An engine of these options on these tables (aborts the test binary if it cannot be made:
// every GPU test needs its engine).
std::unique_ptr<SearchEngine> MakeGpu(GpuEngineOptions options = {}, std::shared_ptr<const SearchTables> tables = Tables());
UnitResult CpuSearch(const UnitSpec& spec);  // on Tables()
UnitResult GpuSearch(SearchEngine& gpu, const UnitSpec& spec);
// The GPU's result equals the CPU engine's, on Tables() or on `tables`.
void ExpectSame(SearchEngine& gpu, const UnitSpec& spec);
void ExpectSameOnTables(const SearchTables& tables, SearchEngine& gpu, const UnitSpec& spec);

// The floor, record table and (for class searches, with rng) some holes a unit at `begin`
// would be leased with, from the published records (complete below their last row).
UnitSpec SpecWithRecords(u128 begin, u128 end, Kinds kinds, std::mt19937_64* rng);
// Only the holes within 40 of the floor (a class unit at a real frontier).
UnitSpec HolesNearTheFloor(UnitSpec spec);
// The spec with a floor lower than its records give: the records above it leave the table,
// which stays complete below the first one dropped.
UnitSpec WithLowerFloor(UnitSpec spec, uint32_t floor);
// A floor near the typical delay of numbers about 2^height (9 height: about 15% of them lie
// above, the mean is about 7.2 height), or `floor` if that is lower: with the record table
// kept, few numbers stop early and many walking numbers' delays pass it, so the tallies (count
// and sum of the delays above the floor) see a member walked with a wrong value or step count.
uint32_t TypicalDelayFloor(unsigned height, uint32_t floor);
// A unit leased without trust (docs/FLOOR.md): the floor is the largest delay of the published
// records below it (recomputed, not trusted), no record table, so no early termination; class
// units with every class up to the floor open but those the records and their doublings fill.
UnitSpec FloorOnlySpec(u128 begin, u128 end, Kinds kinds);

// Random per run; COLLATZ_TEST_SEED repeats a failed run's units.
uint64_t Seed();

// A 128-bit threshold of a device table entry (x: low, y: high).
u128 Value(const ulonglong2& e);

}  // namespace collatz::gpu_test
