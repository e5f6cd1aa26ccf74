#include "sieve_gen/generator.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/sieve.h"
#include "core/sieve_file.h"

namespace collatz::sievegen {
namespace {

namespace fs = std::filesystem;

std::vector<uint64_t> Generate(int bits, bool include_even, bool force_external, uint64_t memory,
                               GeneratorStats* stats, const std::string& tmpdir = fs::temp_directory_path()) {
  GeneratorOptions o;
  o.bits = bits;
  o.include_even = include_even;
  o.force_external = force_external;
  o.memory_bytes = memory;
  o.tmpdir = tmpdir;
  o.threads = 2;
  o.min_partition_bits = force_external ? 3 : 0;
  std::vector<uint64_t> out;
  Status s = GenerateSieve(
      o,
      [&](const uint64_t* r, size_t n) {
        out.insert(out.end(), r, r + n);
        return Status::Ok();
      },
      stats);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

// SPEC section 2: all residues / odd residues surviving the k-bit sieve.
struct Count {
  int bits;
  uint64_t all;
  uint64_t odd;
};
class SurvivorCountTest : public ::testing::TestWithParam<Count> {};

TEST_P(SurvivorCountTest, MatchesSpec) {
  const Count c = GetParam();
  GeneratorStats stats;
  auto odd = Generate(c.bits, false, false, uint64_t{1} << 30, &stats);
  EXPECT_EQ(stats.survivors, c.all);
  EXPECT_EQ(stats.odd_survivors, c.odd);
  EXPECT_EQ(odd.size(), c.odd);
  EXPECT_TRUE(std::is_sorted(odd.begin(), odd.end()));
  EXPECT_TRUE(std::all_of(odd.begin(), odd.end(), [](uint64_t r) { return r & 1; }));
  EXPECT_EQ(stats.external_levels, 0);
}

INSTANTIATE_TEST_SUITE_P(Spec, SurvivorCountTest,
                         ::testing::Values(Count{3, 7, 3}, Count{8, 127, 61}, Count{12, 1535, 786},
                                           Count{16, 19275, 10146}, Count{19, 130306, 69578},
                                           Count{20, 246912, 132429}));

TEST(GeneratorTest, ThreeBitSieveKeepsFourAndDropsFive) {
  GeneratorStats stats;
  // 5 = 8h + 5 -> 9h + 4 and 4 = 8h + 4 -> 9h + 4: the smaller, even, 4 kills 5.
  EXPECT_EQ(Generate(3, true, false, 1 << 30, &stats), (std::vector<uint64_t>{0, 1, 2, 3, 4, 6, 7}));
  EXPECT_EQ(Generate(3, false, false, 1 << 30, &stats), (std::vector<uint64_t>{1, 3, 7}));
}

TEST(GeneratorTest, MatchesDirectDefinitionForSmallK) {
  for (int bits = 1; bits <= 14; ++bits) {
    GeneratorStats stats;
    auto all = Generate(bits, true, false, 1 << 30, &stats);
    std::vector<uint64_t> direct = DirectSieveSurvivors(bits);
    std::sort(direct.begin(), direct.end());
    EXPECT_EQ(all, direct) << "bits " << bits;
  }
}

TEST(GeneratorTest, MatchesCoreInMemoryGenerator) {
  for (int bits : {5, 11, 17}) {
    GeneratorStats stats;
    auto odd = Generate(bits, false, false, 1 << 30, &stats);
    std::shared_ptr<const Sieve> sieve;
    Status s = Sieve::Generate(bits, &sieve, 2);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(odd, sieve->residues()) << "bits " << bits;
  }
}

TEST(GeneratorTest, ExternalEqualsInMemory) {
  const fs::path tmp = fs::temp_directory_path() / ("sieve_ext_test." + std::to_string(::getpid()));
  fs::create_directories(tmp);
  for (int bits : {4, 13, 20}) {
    GeneratorStats mem_stats, ext_stats;
    auto in_memory = Generate(bits, true, false, uint64_t{1} << 30, &mem_stats, tmp);
    // A 2 MiB budget forces every level out of core and many partitions.
    auto external = Generate(bits, true, true, uint64_t{2} << 20, &ext_stats, tmp);
    EXPECT_EQ(in_memory, external) << "bits " << bits;
    EXPECT_EQ(ext_stats.external_levels, bits);
    EXPECT_EQ(mem_stats.survivors, ext_stats.survivors);
    EXPECT_EQ(ext_stats.max_partitions, 8);
  }
  // Nothing left behind: STXXL's file is unlinked on open.
  EXPECT_TRUE(fs::is_empty(tmp));
  fs::remove_all(tmp);
}

// ------------------------------------------------------------------ the collatz-sieve binary

int RunCli(const std::string& args, std::string* out = nullptr) {
  const std::string cmd = std::string(COLLATZ_SIEVE_BINARY) + " " + args + " 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return -1;
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) text.append(buf, n);
  int status = ::pclose(p);
  if (out) *out = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::vector<unsigned char> Bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), {});
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sieve_cli_test." + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string P(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(CliTest, GenerateInMemoryAndExternalAreByteIdentical) {
  ASSERT_EQ(RunCli("generate -q --bits 19 --out " + P("mem.sieve")), 0);
  std::string stdout_text;
  ASSERT_EQ(RunCli("generate -q --bits 19 --memory 1MiB --force-external --tmpdir " + P("") + " --out " +
                       P("ext.sieve"),
                   &stdout_text),
            0);
  // STXXL's banner and disk messages stay off stdout: only the one-line JSON summary.
  EXPECT_EQ(stdout_text.find("STXXL"), std::string::npos) << stdout_text;
  EXPECT_EQ(std::count(stdout_text.begin(), stdout_text.end(), '\n'), 1) << stdout_text;
  EXPECT_EQ(stdout_text.rfind("{\"bits\":19,\"count\":69578,", 0), 0u) << stdout_text;
  // A small budget without forcing: the larger levels go out of core on their own.
  ASSERT_EQ(RunCli("generate -q --bits 19 --memory 3MiB --out " + P("auto.sieve")), 0);
  const auto mem = Bytes(P("mem.sieve"));
  EXPECT_EQ(mem.size(), 64u + 69578u * 4u);
  EXPECT_EQ(mem, Bytes(P("ext.sieve")));
  EXPECT_EQ(mem, Bytes(P("auto.sieve")));
  // Only the three outputs: no temporaries, no STXXL logs.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 3);
}

TEST_F(CliTest, InfoDumpVerify) {
  ASSERT_EQ(RunCli("generate -q --bits 12 --out " + P("s12")), 0);
  std::string out;
  ASSERT_EQ(RunCli("info " + P("s12"), &out), 0);
  EXPECT_NE(out.find("\"bits\": 12"), std::string::npos) << out;
  EXPECT_NE(out.find("\"count\": 786"), std::string::npos) << out;
  EXPECT_NE(out.find("\"checksum_status\": \"ok\""), std::string::npos) << out;

  ASSERT_EQ(RunCli("dump " + P("s12"), &out), 0);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 786);
  std::unique_ptr<MappedSieveFile> f;
  ASSERT_TRUE(MappedSieveFile::Open(P("s12"), &f).ok());
  std::string expected;
  for (uint64_t r : f->ReadAll()) expected += std::to_string(r) + "\n";
  EXPECT_EQ(out, expected);
  EXPECT_EQ(out.substr(0, 8), "1\n25\n27\n");  // 3 .. 23 join smaller numbers within 12 steps

  ASSERT_EQ(RunCli("verify -q " + P("s12"), &out), 0);
  EXPECT_NE(out.find("OK"), std::string::npos);

  // A well-formed file with one residue missing: verify must notice.
  auto residues = f->ReadAll();
  residues.erase(residues.begin() + 100);
  ASSERT_TRUE(WriteSieveFile(P("short"), 12, residues).ok());
  EXPECT_EQ(RunCli("verify -q " + P("short")), 1);
  // One residue too many (3 is not in the 12-bit sieve).
  residues = f->ReadAll();
  residues.insert(residues.begin() + 1, 3);
  ASSERT_TRUE(WriteSieveFile(P("long"), 12, residues).ok());
  EXPECT_EQ(RunCli("verify -q " + P("long")), 1);
  // A corrupt byte: info reports the mismatch, verify and dump refuse.
  auto bytes = Bytes(P("s12"));
  bytes[200] ^= 0x40;
  {
    std::ofstream o(P("bad"), std::ios::binary);
    o.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  ASSERT_EQ(RunCli("info " + P("bad"), &out), 1);
  EXPECT_NE(out.find("\"checksum_status\": \"mismatch\""), std::string::npos) << out;
  EXPECT_EQ(RunCli("verify -q " + P("bad")), 1);
  EXPECT_EQ(RunCli("dump " + P("bad")), 1);
}

TEST_F(CliTest, UsageErrorsExitTwo) {
  EXPECT_EQ(RunCli(""), 2);
  EXPECT_EQ(RunCli("generate --out " + P("x")), 2);           // --bits missing
  EXPECT_EQ(RunCli("generate --bits 41 --out " + P("x")), 2);  // out of range
  EXPECT_EQ(RunCli("frobnicate"), 2);
  EXPECT_EQ(RunCli("info " + P("does-not-exist")), 1);
  EXPECT_EQ(RunCli("generate -q --bits 8 --memory 12XB --out " + P("x")), 2);
  EXPECT_FALSE(fs::exists(P("x")));
}

TEST_F(CliTest, RefusesUpFrontWhenMemoryIsNotThere) {
  // 1000 TiB of memory cannot be available; the run must refuse before writing anything.
  EXPECT_EQ(RunCli("generate -q --bits 36 --memory 1000TiB --out " + P("x")), 1);
  EXPECT_TRUE(fs::is_empty(dir_));
}

}  // namespace
}  // namespace collatz::sievegen
