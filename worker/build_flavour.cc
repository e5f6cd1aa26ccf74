#include "worker/build_flavour.h"

#include <algorithm>
#include <cctype>

// Set for this file by worker/CMakeLists.txt.
#ifndef COLLATZ_WORKER_GPU_MUTATION
#error "COLLATZ_WORKER_GPU_MUTATION must be defined (worker/CMakeLists.txt)"
#endif
#ifndef COLLATZ_WORKER_BUILD_TYPE
#error "COLLATZ_WORKER_BUILD_TYPE must be defined (worker/CMakeLists.txt)"
#endif

namespace collatz::worker {

BuildTraits ThisBuild(bool test_binary) {
  BuildTraits t;
  t.gpu_mutation = COLLATZ_WORKER_GPU_MUTATION;
  std::string type = COLLATZ_WORKER_BUILD_TYPE;
  std::transform(type.begin(), type.end(), type.begin(), [](unsigned char c) { return std::tolower(c); });
#ifdef NDEBUG
  t.debug = type == "debug";
#else
  t.debug = true;
#endif
  t.test_binary = test_binary;
  return t;
}

std::string BuildFlavour(const BuildTraits& traits) {
  std::string out;
  auto add = [&out](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  if (traits.gpu_mutation != 0) add("mutation " + std::to_string(traits.gpu_mutation));
  if (traits.debug) add("debug");
  if (traits.test_binary) add("test");
  return out;
}

std::string VersionWithFlavour(const std::string& version, const std::string& flavour) {
  return flavour.empty() ? version : version + " (" + flavour + ")";
}

}  // namespace collatz::worker
