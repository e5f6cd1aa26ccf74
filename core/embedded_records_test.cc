// The record lists compiled into collatzctl (core/embedded_records.h) must be the files in
// data/, whole: a stale or truncated embedding fails here. data/ in turn holds verbatim
// copies of shared/data (data/README.md).
#include "core/embedded_records.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/records_csv.h"

namespace collatz {
namespace {

const std::string kDataDir = COLLATZ_DATA_DIR;
const std::string kSharedData = COLLATZ_SHARED_DATA;

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct EmbeddedList {
  const char* text;
  std::string file;  // in data/
  RecordCsvKind kind;
  size_t rows;       // data/README.md
};

std::vector<EmbeddedList> Lists() {
  return {{EmbeddedPublishedDelayRecordsCsv(), "published_delay_records.csv", RecordCsvKind::kDelay, 149},
          {EmbeddedClassRecordsCsv(), "class_records_below_2p28.csv", RecordCsvKind::kClass, 793}};
}

TEST(EmbeddedRecords, ParseAndEqualTheFilesInData) {
  for (const EmbeddedList& l : Lists()) {
    SCOPED_TRACE(l.file);
    std::vector<Record> embedded, from_file;
    const Status parsed = ParseRecordsCsv(l.text, l.kind, &embedded);
    ASSERT_TRUE(parsed.ok()) << parsed.message();
    const Status read = ReadRecordsCsv(kDataDir + "/" + l.file, l.kind, &from_file);
    ASSERT_TRUE(read.ok()) << read.message();
    EXPECT_EQ(embedded.size(), l.rows);
    EXPECT_EQ(embedded, from_file);
    // Byte for byte as well: nothing added or lost around the rows.
    EXPECT_EQ(std::string(l.text), ReadWholeFile(kDataDir + "/" + l.file));
  }
}

TEST(EmbeddedRecords, DataHoldsVerbatimCopiesOfSharedData) {
  EXPECT_EQ(ReadWholeFile(kDataDir + "/published_delay_records.csv"), ReadWholeFile(kSharedData + "/delay_records.csv"));
  EXPECT_EQ(ReadWholeFile(kDataDir + "/class_records_below_2p28.csv"),
            ReadWholeFile(kSharedData + "/class_records_below_2p28.csv"));
}

}  // namespace
}  // namespace collatz
