#include "engines/engine_factory.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "core/sieve.h"
#include "core/sieve_file.h"

namespace collatz::engines {
namespace {

TEST(EngineFactory, ParsesTheBackendFlag) {
  Backend b = Backend::kAuto;
  ASSERT_TRUE(ParseBackendFlag("cpu", &b).ok());
  EXPECT_EQ(b, Backend::kCpu);
  ASSERT_TRUE(ParseBackendFlag("gpu", &b).ok());
  EXPECT_EQ(b, Backend::kGpu);
  ASSERT_TRUE(ParseBackendFlag("auto", &b).ok());
  EXPECT_EQ(b, Backend::kAuto);
  EXPECT_EQ(ParseBackendFlag("tpu", &b).code(), Status::Code::kInvalidArgument);
}

TEST(EngineFactory, TheDefaultWidthIsCoresConstant) {
  EXPECT_EQ(DefaultSieveBits(Backend::kCpu), kDefaultSieveBits);
  EXPECT_EQ(DefaultSieveBits(Backend::kGpu), kDefaultSieveBits);
  std::shared_ptr<const SearchTables> tables;
  ASSERT_TRUE(BuildSearchTables("", kDefaultSieveBits, &tables).ok());
  EXPECT_EQ(tables->sieve->bits(), kDefaultSieveBits);
}

// The wide sieve goes only to GPU delay-only work of 2^42 numbers or more whose records are
// complete 16 bits or more below it (an empty database), and to GPU delay+class work in whole
// units of 2^46; everything else keeps the default.
TEST(EngineFactory, RunsWithoutANearRecordTableTakeTheWideSieveOnTheGpu) {
  const u128 at = Pow2(66), lots = Pow2(44), unit = Pow2(44);
  EXPECT_EQ(SieveBitsForRun(Backend::kGpu, Kinds::kDelay, 1, at, lots, unit), kFloorContextSieveBits);
  EXPECT_EQ(SieveBitsForRun(Backend::kGpu, Kinds::kDelay, Pow2(49), at, lots, unit), kFloorContextSieveBits);
  EXPECT_EQ(SieveBitsForRun(Backend::kGpu, Kinds::kDelay, Pow2(50), at, lots, unit), kDefaultSieveBits);  // a near table
  EXPECT_EQ(SieveBitsForRun(Backend::kGpu, Kinds::kDelay, 1, at, Pow2(42) - 1, unit), kDefaultSieveBits);  // too little
  EXPECT_EQ(SieveBitsForRun(Backend::kGpu, Kinds::kDelayAndClass, 1, at, lots, unit), kDefaultSieveBits);
  EXPECT_EQ(SieveBitsForRun(Backend::kCpu, Kinds::kDelay, 1, at, lots, unit), kDefaultSieveBits);
  EXPECT_EQ(SieveBitsForRun(Backend::kGpu, Kinds::kDelay, 1, 1, lots, unit), kDefaultSieveBits);  // a run from 1
  EXPECT_LE(kFloorContextSieveBits, kMaxGpuBuiltSieveBits);
}

// Wide generated sieves of a GPU backend are built on the device; a sieve file, the CPU, and
// widths the host builds in well under a second or the device cannot hold are not.
TEST(EngineFactory, OnlyWideGeneratedGpuSievesAreBuiltOnTheGpu) {
  EXPECT_TRUE(BuildsSieveOnGpu(Backend::kGpu, "", kFloorContextSieveBits));
  EXPECT_TRUE(BuildsSieveOnGpu(Backend::kGpu, "", kMinGpuBuiltSieveBits));
  EXPECT_TRUE(BuildsSieveOnGpu(Backend::kGpu, "", kMaxGpuBuiltSieveBits));
  EXPECT_FALSE(BuildsSieveOnGpu(Backend::kGpu, "", kMinGpuBuiltSieveBits - 1));
  EXPECT_FALSE(BuildsSieveOnGpu(Backend::kGpu, "", kMaxGpuBuiltSieveBits + 1));
  EXPECT_FALSE(BuildsSieveOnGpu(Backend::kGpu, "sieve-28.bin", kFloorContextSieveBits));
  EXPECT_FALSE(BuildsSieveOnGpu(Backend::kCpu, "", kFloorContextSieveBits));
}

TEST(EngineFactory, ClassWorkInUnitsOf2p46TakesItsWiderSieveOnTheGpu) {
  const u128 at = Pow2(66), unit = kWideClassUnitNumbers;
  const u128 near = Pow2(64);  // records complete near the unit: it does not matter for classes
  EXPECT_EQ(SieveBitsForRun(Backend::kGpu, Kinds::kDelayAndClass, near, at, unit, unit), kWideUnitClassSieveBits);
  EXPECT_EQ(SieveBitsForRun(Backend::kGpu, Kinds::kDelayAndClass, 1, at, 4 * unit, unit), kWideUnitClassSieveBits);
  EXPECT_EQ(SieveBitsForRun(Backend::kGpu, Kinds::kDelayAndClass, near, at, unit / 4, unit / 4), kDefaultSieveBits);
  EXPECT_EQ(SieveBitsForRun(Backend::kGpu, Kinds::kDelayAndClass, near, at, unit / 2, unit), kDefaultSieveBits);
  EXPECT_EQ(SieveBitsForRun(Backend::kGpu, Kinds::kDelayAndClass, 1, 1, 2 * unit, unit), kDefaultSieveBits);  // from 1
  EXPECT_EQ(SieveBitsForRun(Backend::kCpu, Kinds::kDelayAndClass, near, at, unit, unit), kDefaultSieveBits);
  EXPECT_EQ(SieveBitsForRun(Backend::kGpu, Kinds::kDelay, near, at, unit, unit), kDefaultSieveBits);
  EXPECT_LE(kWideUnitClassSieveBits, kMaxGpuBuiltSieveBits);
}

TEST(EngineFactory, DelayWorkInUnitsOf2p48TakesItsWiderSieveOnTheGpu) {
  const u128 at = Pow2(66), unit = kWideDelayUnitNumbers, near = Pow2(65);
  EXPECT_EQ(SieveBitsForRun(Backend::kGpu, Kinds::kDelay, near, at, unit, unit), kWideUnitDelaySieveBits);
  EXPECT_EQ(SieveBitsForRun(Backend::kGpu, Kinds::kDelay, near, at, unit / 2, unit / 2), kDefaultSieveBits);
  EXPECT_EQ(SieveBitsForRun(Backend::kCpu, Kinds::kDelay, near, at, unit, unit), kDefaultSieveBits);
  EXPECT_LE(kWideUnitDelaySieveBits, kMaxGpuBuiltSieveBits);
  EXPECT_GE(kWideUnitDelaySieveBits, kMinGpuBuiltSieveBits);  // built on the device in about a second
}

// Delay+class work in units of 2^48 and more takes the wide width too (30 bits, not 25).
TEST(EngineFactory, ClassWorkInUnitsOf2p48TakesTheWideSieveOnTheGpu) {
  const u128 at = Pow2(66), unit = kWideDelayUnitNumbers, near = Pow2(65);
  EXPECT_EQ(SieveBitsForRun(Backend::kGpu, Kinds::kDelayAndClass, near, at, unit, unit), kWideUnitDelaySieveBits);
  EXPECT_EQ(SieveBitsForRun(Backend::kGpu, Kinds::kDelayAndClass, near, at, 2 * unit, 2 * unit), kWideUnitDelaySieveBits);
  EXPECT_EQ(SieveBitsForRun(Backend::kGpu, Kinds::kDelayAndClass, near, at, unit / 2, unit / 2), kWideUnitClassSieveBits);
  EXPECT_EQ(SieveBitsForRun(Backend::kCpu, Kinds::kDelayAndClass, near, at, unit, unit), kDefaultSieveBits);
  EXPECT_GT(kWideUnitDelaySieveBits, kWideUnitClassSieveBits);
}

TEST(EngineFactory, ASieveFileGivesTheSameTablesAsItsWidth) {
  const int bits = 12;
  std::shared_ptr<const SearchTables> generated;
  ASSERT_TRUE(BuildSearchTables("", bits, &generated).ok());
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("engine_factory_test." + std::to_string(::getpid()) + ".sieve"))
                               .string();
  ASSERT_TRUE(WriteSieveFile(path, bits, generated->sieve->residues()).ok());
  std::shared_ptr<const SearchTables> loaded;
  // The file's width wins over the width argument.
  Status st = BuildSearchTables(path, bits + 3, &loaded);
  std::filesystem::remove(path);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(loaded->sieve->bits(), bits);
  EXPECT_EQ(loaded->sieve->residues(), generated->sieve->residues());
  EXPECT_FALSE(BuildSearchTables(path, bits, &loaded).ok());  // gone: a clear error
}

TEST(EngineFactory, TheOwnTableGrowsWithTheWork) {
  EXPECT_EQ(OwnTableBitsForWork(Pow2(40)), 42);
  EXPECT_EQ(OwnTableBitsForWork(Pow2(43) - 1), 42);
  EXPECT_EQ(OwnTableBitsForWork(Pow2(44)), 43);
  EXPECT_EQ(OwnTableBitsForWork(Pow2(46)), 44);
  EXPECT_EQ(OwnTableBitsForWork(Pow2(47)), kDaemonOwnTableBits);
  EXPECT_EQ(OwnTableBitsForWork(Pow2(48)), kDaemonOwnTableBits);
  EXPECT_EQ(OwnTableBitsForWork(kU128Max), kDaemonOwnTableBits);
}

// Tables of a second width share the first's step and tail tables (a coordinator's or a
// worker's unit widths), from a generated sieve or a file alike.
TEST(EngineFactory, TablesOfAnotherWidthShareTheDelayTables) {
  std::shared_ptr<const SearchTables> base, other;
  ASSERT_TRUE(BuildSearchTables("", 10, &base).ok());
  ASSERT_TRUE(BuildSearchTables("", 12, &other, base->delay).ok());
  EXPECT_EQ(other->sieve->bits(), 12);
  EXPECT_EQ(other->delay, base->delay);
  EXPECT_NE(other->delay_offsets, nullptr);
  EXPECT_FALSE(BuildSearchTables("", 0, &other, base->delay).ok());
}

TEST(EngineFactory, MakesTheCpuEngineAndRefusesAGpuWithoutCuda) {
  std::shared_ptr<const SearchTables> tables;
  ASSERT_TRUE(BuildSearchTables("", 10, &tables).ok());
  std::unique_ptr<SearchEngine> engine;
  ASSERT_TRUE(MakeEngine(Backend::kCpu, tables, 1, &engine).ok());
  ASSERT_NE(engine, nullptr);
  UnitSpec spec;
  spec.begin = 1;
  spec.end = 1 << 12;
  UnitResult result;
  ASSERT_TRUE(engine->Search(spec, &result).ok());
  ASSERT_FALSE(result.ladder.empty());
  EXPECT_EQ(result.ladder.back().n, 3711u);  // the delay record below 2^12 (delay 237)
  if (!BuildHasCuda()) {
    std::unique_ptr<SearchEngine> gpu;
    EXPECT_EQ(MakeEngine(Backend::kGpu, tables, 1, &gpu).code(), Status::Code::kFailedPrecondition);
    Backend resolved;
    std::string note;
    EXPECT_EQ(ResolveBackend(Backend::kGpu, &resolved, &note).code(), Status::Code::kFailedPrecondition);
    ASSERT_TRUE(ResolveBackend(Backend::kAuto, &resolved, &note).ok());
    EXPECT_EQ(resolved, Backend::kCpu);
  }
}

}  // namespace
}  // namespace collatz::engines
