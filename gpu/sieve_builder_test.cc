// The sieve built on the device against its CPU twin (Sieve::Generate) at every width units
// use (up to 30 bits), against the compiled-in fingerprints at every width it builds, and the
// engine's sieve entries built on the device against the host's offset table (core/sieve.h).
#include "gpu/sieve_builder.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <numeric>
#include <vector>

#include "core/sieve_check.h"
#include "core/sieve_fingerprint.h"
#include "core/step_table.h"
#include "core/unit_search.h"
#include "gpu/gpu_engine.h"
#include "gpu/sieve_cycle.h"
#include "gpu/sieve_kernels.h"

namespace collatz {
namespace {

#define REQUIRE_GPU()                                            \
  do {                                                           \
    if (GpuDeviceCount() == 0) GTEST_SKIP() << "no CUDA device"; \
  } while (0)

TEST(GpuSieveBuilderTest, DeviceSieveEqualsGenerate) {
  REQUIRE_GPU();
  for (int k : {1, 2, 3, 7, 12, 19, 20, 21, 23, 26}) {  // one sort up to 20 bits, lifts above
    std::shared_ptr<const Sieve> want, got;
    ASSERT_TRUE(Sieve::Generate(k, &want).ok());
    const Status st = BuildSieveOnDevice(k, &got);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(got->bits(), k);
    EXPECT_TRUE(got->residues() == want->residues()) << "k " << k << ": " << got->size() << " vs " << want->size();
    EXPECT_TRUE(got->c() == want->c()) << "k " << k;
    EXPECT_TRUE(got->p() == want->p()) << "k " << k;
  }
}

// The widths units are searched with on GPUs (25: wide class units, 28: units without a
// near record table, 30: the widest the device builds) against Sieve::Generate, and their
// fingerprints against the compiled-in ones (core/sieve_fingerprint.h). Generate takes
// about 20 s at 28 bits and 75 s at 30 on one core (less on the GPU host's cores).
TEST(GpuSieveBuilderTest, WideDeviceSievesEqualGenerate) {
  REQUIRE_GPU();
  for (int k : {25, 28, 30}) {
    std::shared_ptr<const Sieve> want, got;
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_TRUE(Sieve::Generate(k, &want).ok());
    const auto t1 = std::chrono::steady_clock::now();
    const Status st = BuildSieveOnDevice(k, &got);
    ASSERT_TRUE(st.ok()) << st.ToString();
    const auto t2 = std::chrono::steady_clock::now();
    EXPECT_EQ(got->bits(), k);
    EXPECT_EQ(got->size(), want->size()) << "k " << k;
    EXPECT_TRUE(got->residues() == want->residues()) << "k " << k;
    EXPECT_TRUE(got->c() == want->c()) << "k " << k;
    EXPECT_TRUE(got->p() == want->p()) << "k " << k;
    EXPECT_EQ(FingerprintRow(FingerprintOf(*want)), FingerprintRow(*KnownSieveFingerprint(k))) << "k " << k;
    const Status checked = CheckBuiltSieve(*got, "GPU-built sieve");
    EXPECT_TRUE(checked.ok()) << checked.ToString();
    const auto t3 = std::chrono::steady_clock::now();
    std::printf("k %d: %zu survivors; Generate %.1f s, device %.2f s, CheckBuiltSieve %.2f s\n", k, got->size(),
                std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t2 - t1).count(),
                std::chrono::duration<double>(t3 - t2).count());
  }
}

// Every width the device builds has the compiled-in fingerprint and passes the build-time
// check: the table's wide rows (CI recomputes up to 24 bits) are checked here through the
// device's sieves, which the test above compares with Generate at 25, 28 and 30 bits.
TEST(GpuSieveBuilderTest, EveryWidthPassesTheBuildCheck) {
  REQUIRE_GPU();
  for (int k = 1; k <= gpu::kMaxDeviceSieveBits; ++k) {
    std::shared_ptr<const Sieve> got;
    const Status st = BuildSieveOnDevice(k, &got);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_NE(KnownSieveFingerprint(k), nullptr) << k;
    EXPECT_EQ(FingerprintRow(FingerprintOf(*got)), FingerprintRow(*KnownSieveFingerprint(k))) << "k " << k;
    const Status checked = CheckBuiltSieve(*got, "GPU-built sieve", /*seed=*/1000 + k);
    EXPECT_TRUE(checked.ok()) << checked.ToString();
  }
}

// The tables of a GPU-built sieve are made only after the check (BuildDeviceSearchTables).
TEST(GpuSieveBuilderTest, DeviceSearchTablesOfEveryUnitWidth) {
  REQUIRE_GPU();
  for (int k : {23, 25, 28, 30}) {
    std::shared_ptr<const SearchTables> tables;
    const Status st = BuildDeviceSearchTables(0, k, nullptr, &tables);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(tables->sieve->bits(), k);
    EXPECT_EQ(tables->sieve->size(), KnownSieveFingerprint(k)->survivors);
  }
}

TEST(GpuSieveBuilderTest, WidthsOutsideTheDevicesRangeAreRefused) {
  REQUIRE_GPU();
  std::shared_ptr<const Sieve> none;
  EXPECT_EQ(BuildSieveOnDevice(0, &none).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(BuildSieveOnDevice(gpu::kMaxDeviceSieveBits + 1, &none).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(none, nullptr);
}

// The search tables for the GPU: the device's sieve, the given step and tail tables, no
// host offset table (the CPU engine refuses them for delay-only units rather than guess).
TEST(GpuSieveBuilderTest, DeviceSearchTablesShareTheDelayTables) {
  REQUIRE_GPU();
  auto delay = std::make_shared<FastDelay>(std::make_shared<StepTable>(16), std::make_shared<TailTable>(20));
  std::shared_ptr<const SearchTables> tables;
  ASSERT_TRUE(BuildDeviceSearchTables(0, 14, delay, &tables).ok());
  EXPECT_EQ(tables->delay, delay);
  EXPECT_EQ(tables->delay_offsets, nullptr);
  EXPECT_EQ(tables->sieve->bits(), 14);
  EXPECT_NE(tables->device_sieve, nullptr);
}

// Variant r of a cycle holds the offset table's variant r: every survivor j it lists, in
// order, as {2^k r + residue, c, 3^p, k + p}; VariantEntriesBelow counts them below a residue.
TEST(GpuSieveCycleTest, EntriesAreTheOffsetTables) {
  REQUIRE_GPU();
  for (int k : {12, 19}) {
    std::shared_ptr<const SearchTables> tables;
    ASSERT_TRUE(SearchTables::Build(k, 16, 20, &tables).ok());
    const Sieve& sieve = *tables->sieve;
    DeviceSieve device;
    ASSERT_TRUE(device.Upload(sieve).ok());
    for (unsigned modulus : {1u, 9u}) {
      SCOPED_TRACE("k " + std::to_string(k) + " modulus " + std::to_string(modulus));
      SieveCycle cycle;
      ASSERT_TRUE(cycle.Plan(tables->sieve, modulus).ok());
      ASSERT_TRUE(cycle.BuildEntries(device).ok());
      std::vector<gpu::SieveEntry> got(cycle.len());
      ASSERT_EQ(cudaMemcpy(got.data(), cycle.entries(), got.size() * sizeof(gpu::SieveEntry), cudaMemcpyDeviceToHost),
                cudaSuccess);
      std::vector<uint32_t> all(sieve.size());
      std::iota(all.begin(), all.end(), 0u);
      uint64_t at = 0, wrong = 0;
      for (unsigned r = 0; r < modulus; ++r) {
        const std::vector<uint32_t>& variant = modulus == 1 ? all : tables->delay_offsets->Variant(r);
        ASSERT_EQ(cycle.VariantStart(r), at);
        for (size_t t = 0; t < variant.size(); ++t) {
          const uint32_t j = variant[t];
          const gpu::SieveEntry& e = got.at(at++);
          const uint64_t residue = sieve.residues()[j];
          if (e.offset != (uint64_t{r} << k) + residue || e.c != sieve.c()[j] || e.pow3 != kPow3[sieve.p()[j]] ||
              e.steps != static_cast<uint32_t>(k) + sieve.p()[j]) {
            ++wrong;
          }
          if (t % 97 == 0) {
            EXPECT_EQ(cycle.VariantEntriesBelow(r, residue), t);
            EXPECT_EQ(cycle.VariantEntriesBelow(r, residue + 1), t + 1);
          }
        }
        EXPECT_EQ(cycle.VariantEntriesBelow(r, 0), 0u);
        EXPECT_EQ(cycle.VariantEntriesBelow(r, uint64_t{1} << k), variant.size());
      }
      EXPECT_EQ(at, cycle.len());
      EXPECT_EQ(wrong, 0u);
    }
  }
}

}  // namespace
}  // namespace collatz
