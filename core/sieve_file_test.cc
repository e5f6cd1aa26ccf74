#include "core/sieve_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace collatz {
namespace {

namespace fs = std::filesystem;

class SieveFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sieve_file_test." + std::to_string(::getpid()) + "." +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  static std::vector<unsigned char> ReadBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), {});
  }
  static void WriteBytes(const std::string& path, const std::vector<unsigned char>& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }

  fs::path dir_;
};

// The 3-bit sieve keeps 1, 3 and 7 among the odd residues (5 is joined by 4).
const std::vector<uint64_t> kSieve3 = {1, 3, 7};

TEST_F(SieveFileTest, RoundTripSmallAndWide) {
  ASSERT_TRUE(WriteSieveFile(Path("s3"), 3, kSieve3).ok());
  std::unique_ptr<MappedSieveFile> f;
  ASSERT_TRUE(MappedSieveFile::Open(Path("s3"), &f).ok());
  EXPECT_EQ(f->bits(), 3);
  EXPECT_EQ(f->size(), 3u);
  EXPECT_EQ(f->header().residue_width, 4u);
  EXPECT_EQ(f->ReadAll(), kSieve3);
  EXPECT_EQ(fs::file_size(Path("s3")), kSieveFileHeaderSize + 3 * 4);

  // Above 32 bits residues take 8 bytes.
  const std::vector<uint64_t> wide = {1, 3, (uint64_t{1} << 35) - 1};
  ASSERT_TRUE(WriteSieveFile(Path("w"), 35, wide).ok());
  ASSERT_TRUE(MappedSieveFile::Open(Path("w"), &f).ok());
  EXPECT_EQ(f->header().residue_width, 8u);
  EXPECT_EQ(f->ReadAll(), wide);
  EXPECT_EQ(fs::file_size(Path("w")), kSieveFileHeaderSize + 3 * 8);
}

TEST_F(SieveFileTest, ExactHeaderBytesAreLittleEndian) {
  ASSERT_TRUE(WriteSieveFile(Path("s3"), 3, kSieve3).ok());
  auto b = ReadBytes(Path("s3"));
  ASSERT_EQ(b.size(), 76u);
  EXPECT_EQ(std::string(b.begin(), b.begin() + 8), "CLZSIEVE");
  EXPECT_EQ(b[8], 1);   // version
  EXPECT_EQ(b[12], 64); // header size
  EXPECT_EQ(b[16], 3);  // bits
  EXPECT_EQ(b[20], 4);  // residue width
  EXPECT_EQ(b[24], 3);  // count
  EXPECT_EQ(b[32], 1);  // flags: odd residues only
  EXPECT_EQ(b[64], 1);
  EXPECT_EQ(b[68], 3);
  EXPECT_EQ(b[72], 7);
}

TEST_F(SieveFileTest, WriterRejectsBadResiduesAndLeavesNoFile) {
  {
    SieveFileWriter w;
    ASSERT_TRUE(w.Open(Path("bad"), 3).ok());
    const uint64_t even[] = {2};
    EXPECT_FALSE(w.Append(even, 1).ok());
    const uint64_t descending[] = {5, 3};
    EXPECT_FALSE(w.Append(descending, 2).ok());
    const uint64_t too_big[] = {9};
    EXPECT_FALSE(w.Append(too_big, 1).ok());
    EXPECT_TRUE(fs::exists(w.temp_path()));
  }  // destroyed without Finish: the temporary is removed, no output appears
  EXPECT_FALSE(fs::exists(Path("bad")));
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(SieveFileTest, RejectsCorruptPayload) {
  ASSERT_TRUE(WriteSieveFile(Path("s"), 3, kSieve3).ok());
  auto b = ReadBytes(Path("s"));
  b[68] ^= 0x02;  // 3 -> 1
  WriteBytes(Path("s"), b);
  std::unique_ptr<MappedSieveFile> f;
  Status s = MappedSieveFile::Open(Path("s"), &f);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.message().find("checksum mismatch"), std::string::npos) << s.ToString();
  std::shared_ptr<const Sieve> sieve;
  EXPECT_FALSE(LoadSieveFile(Path("s"), &sieve).ok());
  // Without checksum verification the header still opens (for `info`).
  EXPECT_TRUE(MappedSieveFile::Open(Path("s"), &f, /*verify_checksum=*/false).ok());
}

TEST_F(SieveFileTest, RejectsCorruptHeader) {
  ASSERT_TRUE(WriteSieveFile(Path("s"), 3, kSieve3).ok());
  auto b = ReadBytes(Path("s"));
  b[24] = 2;  // count 3 -> 2, and the file then has 4 trailing bytes
  WriteBytes(Path("s"), b);
  std::unique_ptr<MappedSieveFile> f;
  Status s = MappedSieveFile::Open(Path("s"), &f);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("header checksum mismatch"), std::string::npos) << s.ToString();
}

TEST_F(SieveFileTest, RejectsTruncatedFiles) {
  ASSERT_TRUE(WriteSieveFile(Path("s"), 3, kSieve3).ok());
  auto b = ReadBytes(Path("s"));
  std::unique_ptr<MappedSieveFile> f;
  for (size_t len : {size_t{0}, size_t{10}, size_t{63}, size_t{64}, size_t{75}}) {
    WriteBytes(Path("t"), std::vector<unsigned char>(b.begin(), b.begin() + len));
    Status s = MappedSieveFile::Open(Path("t"), &f);
    ASSERT_FALSE(s.ok()) << len;
    EXPECT_EQ(s.code(), Status::Code::kCorruption) << len;
    EXPECT_NE(s.message().find("truncated"), std::string::npos) << len << ": " << s.ToString();
  }
  b.push_back(0);
  WriteBytes(Path("t"), b);
  Status s = MappedSieveFile::Open(Path("t"), &f);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("trailing"), std::string::npos) << s.ToString();
}

TEST_F(SieveFileTest, RejectsWrongVersionAndMagic) {
  ASSERT_TRUE(WriteSieveFile(Path("s"), 3, kSieve3).ok());
  auto b = ReadBytes(Path("s"));
  auto v = b;
  v[8] = 2;
  WriteBytes(Path("v"), v);
  std::unique_ptr<MappedSieveFile> f;
  Status s = MappedSieveFile::Open(Path("v"), &f);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(s.message().find("unsupported sieve file format version 2"), std::string::npos) << s.ToString();

  auto m = b;
  m[0] = 'X';
  WriteBytes(Path("m"), m);
  s = MappedSieveFile::Open(Path("m"), &f);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not a sieve file"), std::string::npos) << s.ToString();

  s = MappedSieveFile::Open(Path("missing"), &f);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kIOError);
}

TEST_F(SieveFileTest, LoadSieveFileBuildsTheSieve) {
  ASSERT_TRUE(WriteSieveFile(Path("s"), 3, kSieve3).ok());
  std::shared_ptr<const Sieve> sieve;
  Status s = LoadSieveFile(Path("s"), &sieve);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(sieve->bits(), 3);
  EXPECT_EQ(sieve->residues(), kSieve3);
  // N = 8h + 7 -> 27h + 26 after 3 T-steps (7 -> 11 -> 17 -> 26).
  ASSERT_EQ(sieve->p().size(), 3u);
  EXPECT_EQ(sieve->p()[2], 3);
  EXPECT_EQ(sieve->c()[2], 26u);
}

}  // namespace
}  // namespace collatz
