// A worker binary's build flavour: what makes it unfit to search a real campaign, said in
// its --version and sent at registration (RegisterRequest.build_flavour), where a
// coordinator refuses it unless started with --allow-test-builds (issue 41, item 6).
// Empty for a release build; else, joined by ", ": "mutation N" (COLLATZ_GPU_MUTATION, a
// GPU walk that is wrong by design: gpu/CMakeLists.txt), "debug" (CMAKE_BUILD_TYPE Debug or
// NDEBUG unset) and "test" (collatz-worker-test, the fault-injecting worker).
#pragma once

#include <string>

namespace collatz::worker {

struct BuildTraits {
  int gpu_mutation = 0;  // COLLATZ_GPU_MUTATION of the GPU engine linked in (0: none)
  bool debug = false;
  bool test_binary = false;
};

// This binary's traits as compiled (build_flavour.cc); test_binary as the caller says.
BuildTraits ThisBuild(bool test_binary);

// "" for a release build, else e.g. "mutation 2, debug, test".
std::string BuildFlavour(const BuildTraits& traits);

// The version with its flavour: "collatz-worker 1.2.3+abcdef (mutation 2)"; as given for "".
std::string VersionWithFlavour(const std::string& version, const std::string& flavour);

}  // namespace collatz::worker
