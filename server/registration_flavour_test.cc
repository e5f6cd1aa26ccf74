// Workers of a test, debug or mutation build (RegisterRequest.build_flavour) are refused
// with FAILED_PRECONDITION naming the flavour, unless the server allows test builds
// (collatz-server --allow-test-builds); release builds register either way.
#include <gtest/gtest.h>

#include "core/work_hash.h"
#include "server/coordinator_test_fixture.h"

namespace collatz::server {
namespace {

using grpc::StatusCode;

class RegistrationFlavourTest : public CoordinatorFixture {
 protected:
  RegistrationFlavourTest() : CoordinatorFixture("registration_flavour_test_") {}

  static WorkerDescription Worker(const std::string& flavour) {
    WorkerDescription d;
    d.host = "w";
    d.sieve_bits = 12;
    d.work_hash_version = kWorkHashVersion;
    d.unit_sieve_bits = true;
    d.binary_version = "collatz-worker 0.1.0+abc" + (flavour.empty() ? "" : " (" + flavour + ")");
    d.build_flavour = flavour;
    return d;
  }
};

TEST_F(RegistrationFlavourTest, TestBuildsAreRefusedByDefault) {
  for (const std::string flavour : {"test", "mutation 2", "debug", "mutation 1, debug, test"}) {
    int64_t id = 0;
    const grpc::Status st = c_->Register(Worker(flavour), &id);
    EXPECT_EQ(st.error_code(), StatusCode::FAILED_PRECONDITION) << flavour;
    EXPECT_NE(st.error_message().find("is a " + flavour + " build"), std::string::npos) << st.error_message();
    EXPECT_NE(st.error_message().find("--allow-test-builds"), std::string::npos) << st.error_message();
  }
  EXPECT_TRUE(c_->ListWorkers().empty());
  int64_t id = 0;
  ASSERT_TRUE(c_->Register(Worker(""), &id).ok());
  EXPECT_EQ(c_->ListWorkers().size(), 1u);
}

TEST_F(RegistrationFlavourTest, AllowedWithTheFlag) {
  options_.allow_test_builds = true;
  Reopen();
  int64_t id = 0;
  ASSERT_TRUE(c_->Register(Worker("test"), &id).ok());
  ASSERT_TRUE(c_->Register(Worker("mutation 2"), &id).ok());
  ASSERT_TRUE(c_->Register(Worker(""), &id).ok());
  ASSERT_EQ(c_->ListWorkers().size(), 3u);
  EXPECT_EQ(c_->ListWorkers()[0].w.binary_version, "collatz-worker 0.1.0+abc (test)");
}

}  // namespace
}  // namespace collatz::server
