#include "client/channel.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace collatz::client {
namespace {

class TokenFile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() / ("channel_test." + std::to_string(::getpid()))).string();
  }
  void TearDown() override {
    std::filesystem::remove(path_);
    ::unsetenv(kTokenEnvVar);
  }
  void Write(const std::string& text) { std::ofstream(path_) << text; }
  std::string path_;
};

TEST_F(TokenFile, FirstLineTrimmed) {
  Write("  secret-token \t\nsecond line\n");
  std::string token;
  ASSERT_TRUE(LoadToken(path_, &token).ok());
  EXPECT_EQ(token, "secret-token");
}

TEST_F(TokenFile, EmptyOrMissingFileIsAnErrorThatNeverShowsAToken) {
  Write("\n");
  std::string token = "stale";
  Status st = LoadToken(path_, &token);
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(token.empty());
  EXPECT_EQ(LoadToken(path_ + ".missing", &token).code(), Status::Code::kIOError);
}

TEST_F(TokenFile, EnvironmentWhenNoFileIsGiven) {
  std::string token = "stale";
  ::unsetenv(kTokenEnvVar);
  ASSERT_TRUE(LoadToken("", &token).ok());
  EXPECT_TRUE(token.empty());  // authentication off
  ::setenv(kTokenEnvVar, " from-env\n", 1);
  ASSERT_TRUE(LoadToken("", &token).ok());
  EXPECT_EQ(token, "from-env");
  Write("from-file\n");
  ASSERT_TRUE(LoadToken(path_, &token).ok());  // a file wins over the environment
  EXPECT_EQ(token, "from-file");
}

TEST(MakeChannel, RefusesAMissingCaCertificate) {
  std::shared_ptr<grpc::Channel> channel;
  EXPECT_EQ(MakeChannel("127.0.0.1:1", "/nonexistent/ca.pem", &channel).code(), Status::Code::kIOError);
  ASSERT_TRUE(MakeChannel("127.0.0.1:1", "", &channel).ok());
  EXPECT_NE(channel, nullptr);
}

}  // namespace
}  // namespace collatz::client
