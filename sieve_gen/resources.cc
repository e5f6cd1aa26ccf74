#include "sieve_gen/resources.h"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace collatz::sievegen {

Status ParseByteSize(const std::string& text, uint64_t* bytes) {
  size_t pos = 0;
  while (pos < text.size() && (std::isdigit(static_cast<unsigned char>(text[pos])) || text[pos] == '.')) ++pos;
  if (pos == 0) return Status::InvalidArgument("bad size \"" + text + "\" (examples: 4GiB, 512MiB, 1000000)");
  double value = 0;
  try {
    value = std::stod(text.substr(0, pos));
  } catch (...) {
    return Status::InvalidArgument("bad size \"" + text + "\"");
  }
  std::string unit = text.substr(pos);
  for (auto& ch : unit) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  double scale = 1;
  if (unit.empty() || unit == "B") {
    scale = 1;
  } else if (unit == "K" || unit == "KB" || unit == "KIB") {
    scale = 1024.0;
  } else if (unit == "M" || unit == "MB" || unit == "MIB") {
    scale = 1024.0 * 1024;
  } else if (unit == "G" || unit == "GB" || unit == "GIB") {
    scale = 1024.0 * 1024 * 1024;
  } else if (unit == "T" || unit == "TB" || unit == "TIB") {
    scale = 1024.0 * 1024 * 1024 * 1024;
  } else {
    return Status::InvalidArgument("bad size unit in \"" + text + "\" (use B, KiB, MiB, GiB, TiB)");
  }
  const double b = value * scale;
  if (!(b >= 1) || b > 1e18) return Status::InvalidArgument("size \"" + text + "\" out of range");
  *bytes = static_cast<uint64_t>(b);
  return Status::Ok();
}

std::string FormatBytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

Status AvailableMemory(uint64_t* bytes) {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream fields(line.substr(13));
      uint64_t kib = 0;
      fields >> kib;
      *bytes = kib * 1024;
      return Status::Ok();
    }
  }
  return Status::Unavailable("cannot read MemAvailable from /proc/meminfo");
}

Status FreeDiskSpace(const std::string& dir, uint64_t* bytes, uint64_t* device) {
  struct statvfs vfs;
  if (::statvfs(dir.c_str(), &vfs) != 0) {
    return Status::IOError(dir + ": " + std::strerror(errno));
  }
  *bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  if (device != nullptr) {
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0) return Status::IOError(dir + ": " + std::strerror(errno));
    *device = st.st_dev;
  }
  return Status::Ok();
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace collatz::sievegen
