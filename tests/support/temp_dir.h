// For tests that run real binaries: a temporary directory removed afterwards, and small
// file helpers.
#pragma once

#include <cstddef>
#include <string>

namespace collatz::test_support {

// A fresh, empty directory under /tmp, removed with everything in it by the destructor
// (kept when the environment variable COLLATZ_KEEP_TEST_DIRS is set, for debugging).
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string ReadFileOrEmpty(const std::string& path);
bool FileExists(const std::string& path);
// Non-overlapping occurrences of `what` in `text`.
size_t CountOccurrences(const std::string& text, const std::string& what);

}  // namespace collatz::test_support
