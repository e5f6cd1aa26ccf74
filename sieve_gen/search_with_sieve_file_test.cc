// A search with a generated sieve file gives exactly what it gives with the built-in
// sieve of the same width, and finds every odd delay record of the reference data.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/early_termination.h"
#include "core/records_csv.h"
#include "core/test_support.h"
#include "core/unit.h"
#include "core/unit_search.h"
#include "sieve_gen/generator.h"
#include "core/sieve_file.h"

namespace collatz {
namespace {

namespace fs = std::filesystem;

std::vector<Record> OddReferenceRecordsBelow(uint64_t limit) {
  std::vector<Record> out;
  for (const Record& r : testing_support::ReferenceRecords("delay_records_below_2p28.csv", RecordCsvKind::kDelay)) {
    if (r.n >= limit) break;
    if ((r.n & 1) != 0) out.push_back(r);
  }
  return out;
}

class SearchWithSieveFileTest : public ::testing::TestWithParam<int> {};

TEST_P(SearchWithSieveFileTest, SameResultAsBuiltInSieve) {
  const int bits = GetParam();
  const fs::path path = fs::temp_directory_path() / ("search_sieve_test." + std::to_string(::getpid()) + "." +
                                                     std::to_string(bits));
  sievegen::GeneratorOptions o;
  o.bits = bits;
  o.threads = 2;
  SieveFileWriter writer;
  ASSERT_TRUE(writer.Open(path.string(), bits).ok());
  sievegen::GeneratorStats stats;
  Status s = sievegen::GenerateSieve(
      o, [&](const uint64_t* r, size_t n) { return writer.Append(r, n); }, &stats);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(writer.Finish().ok());

  std::shared_ptr<const Sieve> from_file;
  s = LoadSieveFile(path.string(), &from_file);
  fs::remove(path);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::shared_ptr<const Sieve> built_in;
  ASSERT_TRUE(Sieve::Generate(bits, &built_in, 2).ok());
  EXPECT_EQ(from_file->residues(), built_in->residues());
  EXPECT_EQ(from_file->p(), built_in->p());
  EXPECT_EQ(from_file->c(), built_in->c());

  std::shared_ptr<const SearchTables> file_tables, built_in_tables;
  ASSERT_TRUE(SearchTables::FromSieve(from_file, kDefaultStepBits, kDefaultTailBits, &file_tables).ok());
  ASSERT_TRUE(SearchTables::Build(bits, kDefaultStepBits, kDefaultTailBits, &built_in_tables).ok());

  const uint64_t limit = uint64_t{1} << 23;
  UnitSpec spec;
  spec.begin = 1;
  spec.end = limit;
  spec.kinds = Kinds::kDelayAndClass;
  EarlyTermination et(spec);
  const UnitResult with_file = SearchRange(*file_tables, spec, et, spec.begin, spec.end);
  const UnitResult with_built_in = SearchRange(*built_in_tables, spec, et, spec.begin, spec.end);
  EXPECT_EQ(with_file, with_built_in) << DescribeUnitResult(with_file) << "\nvs\n"
                                      << DescribeUnitResult(with_built_in);

  // Every odd delay record below the limit with a delay above the floor (0: all but N = 1)
  // is on the ladder (which also holds odd N that beat every computed N before them).
  for (const Record& r : OddReferenceRecordsBelow(limit)) {
    if (r.delay <= spec.floor) continue;
    bool found = false;
    for (const Record& l : with_file.ladder) found |= (l == r);
    EXPECT_TRUE(found) << "odd delay record " << static_cast<uint64_t>(r.n) << " missing with a " << bits
                       << "-bit sieve file";
  }
}

INSTANTIATE_TEST_SUITE_P(Widths, SearchWithSieveFileTest, ::testing::Values(8, 13, 19, 21));

}  // namespace
}  // namespace collatz
