#include "worker/spool.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace collatz::worker {
namespace {

class SpoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/collatz-spool-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static v1::CompleteRequest Sample(uint64_t unit_id) {
    v1::CompleteRequest r;
    r.set_worker_id(7);
    r.set_unit_id(unit_id);
    r.set_lease_token("0123456789abcdef0123456789abcdef");
    v1::Record* rec = r.mutable_result()->add_ladder();
    rec->mutable_n()->set_hi(1);  // an N above 2^64 survives the round trip
    rec->mutable_n()->set_lo(12345);
    rec->set_delay(1475);
    r.mutable_result()->set_candidates(99);
    r.mutable_result()->set_work_hash(0xdeadbeefcafef00dULL);
    r.set_seconds(1.5);
    r.set_engine("cpu (2 threads)");
    return r;
  }

  std::string dir_;
};

TEST_F(SpoolTest, WritesReadsListsAndRemoves) {
  std::unique_ptr<Spool> spool;
  ASSERT_TRUE(Spool::Open(dir_ + "/spool", &spool).ok());
  std::string a, b;
  ASSERT_TRUE(spool->Write(Sample(12), &a).ok());
  ASSERT_TRUE(spool->Write(Sample(3), &b).ok());
  EXPECT_EQ(spool->List(), (std::vector<std::string>{b, a}));  // ascending unit id
  v1::CompleteRequest back;
  ASSERT_TRUE(spool->Read(a, &back).ok());
  EXPECT_EQ(back.SerializeAsString(), Sample(12).SerializeAsString());
  ASSERT_TRUE(spool->Remove(a).ok());
  EXPECT_EQ(spool->List(), (std::vector<std::string>{b}));
}

TEST_F(SpoolTest, SurvivesReopenAndDropsTemporaryFiles) {
  std::string name;
  {
    std::unique_ptr<Spool> spool;
    ASSERT_TRUE(Spool::Open(dir_, &spool).ok());
    ASSERT_TRUE(spool->Write(Sample(5), &name).ok());
  }
  std::ofstream(dir_ + "/u00000000000000000009-abc.result.tmp") << "half written";
  std::unique_ptr<Spool> spool;
  ASSERT_TRUE(Spool::Open(dir_, &spool).ok());
  EXPECT_EQ(spool->List(), (std::vector<std::string>{name}));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/u00000000000000000009-abc.result.tmp"));
}

TEST_F(SpoolTest, DetectsEveryKindOfDamage) {
  std::unique_ptr<Spool> spool;
  ASSERT_TRUE(Spool::Open(dir_, &spool).ok());
  std::string name;
  ASSERT_TRUE(spool->Write(Sample(1), &name).ok());
  const std::string path = dir_ + "/" + name;
  const auto size = std::filesystem::file_size(path);
  v1::CompleteRequest r;

  // One flipped payload byte: checksum.
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size - 3));
    f.put('\x7f');
  }
  Status st = spool->Read(name, &r);
  EXPECT_EQ(st.code(), Status::Code::kCorruption) << st.ToString();
  // Truncated.
  std::filesystem::resize_file(path, size - 5);
  EXPECT_EQ(spool->Read(name, &r).code(), Status::Code::kCorruption);
  // Empty and garbage.
  std::filesystem::resize_file(path, 0);
  EXPECT_EQ(spool->Read(name, &r).code(), Status::Code::kCorruption);
  std::ofstream(path, std::ios::binary) << "this is not a spool file at all, just text";
  EXPECT_EQ(spool->Read(name, &r).code(), Status::Code::kCorruption);

  ASSERT_TRUE(spool->MoveAside(name, "corrupt").ok());
  EXPECT_TRUE(spool->List().empty());
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/corrupt/" + name));
}

TEST_F(SpoolTest, FileNamesAreSafeForAnyToken) {
  v1::CompleteRequest r = Sample(42);
  r.set_lease_token("../../etc/passwd");
  const std::string name = SpoolFileName(r);
  EXPECT_EQ(name, "u00000000000000000042-etcpasswd.result");
}

TEST_F(SpoolTest, StatsResultsRoundTripUnderTheirOwnNames) {
  std::unique_ptr<Spool> spool;
  ASSERT_TRUE(Spool::Open(dir_, &spool).ok());
  v1::CompleteRequest r = Sample(42);  // the same id as a search unit: stats ids are their own sequence
  r.clear_result();
  r.mutable_stats_result()->set_stats_file(std::string("CLZSTATS\0\x01", 10));
  std::string name;
  ASSERT_TRUE(spool->Write(r, &name).ok());
  EXPECT_EQ(name.substr(0, 22), "s00000000000000000042-");
  ASSERT_TRUE(spool->Write(Sample(42), &name).ok());
  ASSERT_EQ(spool->List().size(), 2u);
  v1::CompleteRequest back;
  ASSERT_TRUE(spool->Read(spool->List()[0], &back).ok());
  ASSERT_TRUE(back.has_stats_result());
  EXPECT_EQ(back.stats_result().stats_file(), r.stats_result().stats_file());
}

// The installation id is made once and survives reopening; another spool gets another.
TEST_F(SpoolTest, InstanceIdIsStableAcrossReopen) {
  std::string first, again, other;
  {
    std::unique_ptr<Spool> spool;
    ASSERT_TRUE(Spool::Open(dir_ + "/a", &spool).ok());
    ASSERT_TRUE(spool->InstanceId(&first).ok());
    EXPECT_EQ(spool->List().size(), 0u);  // not a result
  }
  EXPECT_EQ(first.size(), 32u);
  EXPECT_EQ(first.find_first_not_of("0123456789abcdef"), std::string::npos) << first;
  std::unique_ptr<Spool> spool;
  ASSERT_TRUE(Spool::Open(dir_ + "/a", &spool).ok());
  ASSERT_TRUE(spool->InstanceId(&again).ok());
  EXPECT_EQ(again, first);
  ASSERT_TRUE(Spool::Open(dir_ + "/b", &spool).ok());
  ASSERT_TRUE(spool->InstanceId(&other).ok());
  EXPECT_NE(other, first);
}

// Several worker processes on one host (one per GPU) must not share a spool: the second is
// refused before it touches the first's files, in another process as in this one, and the
// spool is free again once its holder is gone.
TEST_F(SpoolTest, OneProcessPerSpool) {
  std::unique_ptr<Spool> first;
  ASSERT_TRUE(Spool::Open(dir_, &first).ok());
  std::string name;
  ASSERT_TRUE(first->Write(Sample(3), &name).ok());
  std::ofstream(dir_ + "/" + name + ".tmp") << "being written by the first";

  std::unique_ptr<Spool> second;
  const Status st = Spool::Open(dir_, &second);
  EXPECT_EQ(st.code(), Status::Code::kFailedPrecondition) << st.ToString();
  EXPECT_NE(st.message().find("pid " + std::to_string(getpid())), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("its own --spool"), std::string::npos) << st.message();
  EXPECT_EQ(second, nullptr);
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/" + name + ".tmp"));  // not cleaned up under the first

  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::unique_ptr<Spool> other;
    _exit(Spool::Open(dir_, &other).code() == Status::Code::kFailedPrecondition ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "another process opened a spool in use";

  first.reset();
  ASSERT_TRUE(Spool::Open(dir_, &second).ok());
  EXPECT_EQ(second->List(), (std::vector<std::string>{name}));
}

}  // namespace
}  // namespace collatz::worker
