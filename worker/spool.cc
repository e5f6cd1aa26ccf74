#include "worker/spool.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <fstream>
#include <cerrno>
#include <cstring>
#include <memory>

namespace collatz::worker {
namespace {

constexpr char kMagic[8] = {'C', 'L', 'Z', 'S', 'P', 'O', 'L', '1'};
constexpr size_t kHeaderBytes = 24;
constexpr const char* kSuffix = ".result";
constexpr const char* kTempSuffix = ".tmp";

uint64_t Fnv1a64(const std::string& bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

void PutLe64(uint64_t v, char* out) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(v >> (8 * i));
}
uint64_t GetLe64(const char* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  return v;
}

Status Errno(const std::string& what, const std::string& path) {
  return Status::IOError(what + " " + path + ": " + std::strerror(errno));
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Status MakeDir(const std::string& path) {
  if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) return Errno("cannot create", path);
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return Status::IOError(path + " is not a directory");
  return Status::Ok();
}

Status SyncDir(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open directory", dir);
  const int rc = fsync(fd);
  close(fd);
  if (rc != 0) return Errno("cannot fsync directory", dir);
  return Status::Ok();
}

Status WriteAll(int fd, const char* data, size_t n, const std::string& path) {
  while (n > 0) {
    const ssize_t w = write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return Errno("cannot write", path);
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return Status::Ok();
}

std::vector<std::string> ListWithSuffix(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (EndsWith(name, suffix)) names.push_back(name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::string SpoolFileName(const v1::CompleteRequest& request) {
  char unit[32];
  // "s" for a stats unit: stats and search unit ids are separate sequences.
  std::snprintf(unit, sizeof unit, "%c%020llu-", request.has_stats_result() ? 's' : 'u',
                static_cast<unsigned long long>(request.unit_id()));
  std::string name = unit;
  int kept = 0;
  for (char c : request.lease_token()) {
    if (kept == 16) break;
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      name += c;
      ++kept;
    }
  }
  return name + kSuffix;
}

Status Spool::Open(const std::string& dir, std::unique_ptr<Spool>* out) {
  if (dir.empty()) return Status::InvalidArgument("spool directory not set");
  Status st = MakeDir(dir);
  if (st.ok()) st = MakeDir(dir + "/corrupt");
  if (st.ok()) st = MakeDir(dir + "/rejected");
  if (!st.ok()) return st;
  // One process per spool: another one's sender would send (and delete) our results, the
  // cleanup below would delete its files half written, and both would share one instance
  // id. The lock goes with the process (a crash or SIGKILL releases it).
  const std::string lock_path = dir + "/lock";
  const int lock_fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0) return Errno("cannot open", lock_path);
  if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    std::string holder;
    char buf[32] = {0};
    if (pread(lock_fd, buf, sizeof buf - 1, 0) > 0) holder = " (pid " + std::string(buf, std::strcspn(buf, "\n")) + ")";
    close(lock_fd);
    if (err != EWOULDBLOCK) return Status::IOError("cannot lock " + lock_path + ": " + std::strerror(err));
    return Status::FailedPrecondition("spool " + dir + " is in use by another process" + holder +
                                      "; give each collatz-worker process of a host its own --spool");
  }
  // The holder's pid, for a second process's message only (the lock holds without it).
  const std::string pid = std::to_string(getpid()) + "\n";
  const bool noted = ftruncate(lock_fd, 0) == 0 && pwrite(lock_fd, pid.data(), pid.size(), 0) == static_cast<ssize_t>(pid.size());
  (void)noted;
  // A crash between creating a temporary file and renaming it leaves it behind; the
  // result it held was never acknowledged, and its unit's lease will expire and be re-run.
  for (const std::string& name : ListWithSuffix(dir, kTempSuffix)) unlink((dir + "/" + name).c_str());
  out->reset(new Spool(dir, lock_fd));
  return Status::Ok();
}

Spool::~Spool() { close(lock_fd_); }  // releases the lock

Status Spool::Write(const v1::CompleteRequest& request, std::string* name) {
  std::string payload;
  if (!request.SerializeToString(&payload)) return Status::Internal("cannot serialize the result");
  std::string bytes(kHeaderBytes, '\0');
  std::memcpy(bytes.data(), kMagic, 8);
  PutLe64(payload.size(), bytes.data() + 8);
  PutLe64(Fnv1a64(payload), bytes.data() + 16);
  bytes += payload;

  *name = SpoolFileName(request);
  return WriteDurably(dir_ + "/" + *name, bytes);
}

Status Spool::WriteDurably(const std::string& path, const std::string& bytes) {
  const std::string temp = path + kTempSuffix;
  int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot create", temp);
  Status st = WriteAll(fd, bytes.data(), bytes.size(), temp);
  if (st.ok() && fsync(fd) != 0) st = Errno("cannot fsync", temp);
  if (close(fd) != 0 && st.ok()) st = Errno("cannot close", temp);
  if (st.ok() && rename(temp.c_str(), path.c_str()) != 0) st = Errno("cannot rename into", path);
  if (!st.ok()) {
    unlink(temp.c_str());
    return st;
  }
  std::lock_guard<std::mutex> lock(mu_);
  return SyncDir(dir_);
}

Status Spool::InstanceId(std::string* id) {
  const std::string path = dir_ + "/instance-id";
  std::ifstream in(path);
  std::string line;
  if (in && std::getline(in, line) && line.size() == 32 &&
      line.find_first_not_of("0123456789abcdef") == std::string::npos) {
    *id = line;
    return Status::Ok();
  }
  std::random_device rd;
  char buf[33];
  std::snprintf(buf, sizeof buf, "%08x%08x%08x%08x", rd(), rd(), rd(), rd());
  Status st = WriteDurably(path, std::string(buf) + "\n");
  if (st.ok()) *id = buf;
  return st;
}

std::vector<std::string> Spool::List() const { return ListWithSuffix(dir_, kSuffix); }

Status Spool::Read(const std::string& name, v1::CompleteRequest* request) const {
  const std::string path = dir_ + "/" + name;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? Status::NotFound(path) : Errno("cannot open", path);
  std::string bytes;
  char buf[1 << 16];
  for (;;) {
    const ssize_t r = read(fd, buf, sizeof buf);
    if (r < 0) {
      if (errno == EINTR) continue;
      Status st = Errno("cannot read", path);
      close(fd);
      return st;
    }
    if (r == 0) break;
    bytes.append(buf, static_cast<size_t>(r));
  }
  close(fd);
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kMagic, 8) != 0) {
    return Status::Corruption(path + ": not a spool file (bad magic or too short)");
  }
  const uint64_t length = GetLe64(bytes.data() + 8);
  if (length != bytes.size() - kHeaderBytes) {
    return Status::Corruption(path + ": payload is " + std::to_string(bytes.size() - kHeaderBytes) +
                              " bytes, header says " + std::to_string(length));
  }
  const std::string payload = bytes.substr(kHeaderBytes);
  if (Fnv1a64(payload) != GetLe64(bytes.data() + 16)) return Status::Corruption(path + ": checksum mismatch");
  if (!request->ParseFromString(payload)) return Status::Corruption(path + ": payload does not parse");
  return Status::Ok();
}

Status Spool::Remove(const std::string& name) {
  const std::string path = dir_ + "/" + name;
  if (unlink(path.c_str()) != 0 && errno != ENOENT) return Errno("cannot remove", path);
  std::lock_guard<std::mutex> lock(mu_);
  return SyncDir(dir_);
}

Status Spool::MoveAside(const std::string& name, const std::string& subdir) {
  const std::string from = dir_ + "/" + name;
  const std::string to = dir_ + "/" + subdir + "/" + name;
  if (rename(from.c_str(), to.c_str()) != 0) return Errno("cannot move " + from + " to", to);
  std::lock_guard<std::mutex> lock(mu_);
  Status st = SyncDir(dir_ + "/" + subdir);
  if (st.ok()) st = SyncDir(dir_);
  return st;
}

}  // namespace collatz::worker
