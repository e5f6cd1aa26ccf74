// The local spool: every finished result is on disk before it is sent, and leaves the
// disk only after the server acknowledged it. A worker restart or a server outage loses
// no finished work.
//
// One file per result, "<name>.result": an 8-byte magic, the payload length and an
// FNV-1a 64 checksum (little endian), then the serialized collatz.v1.CompleteRequest
// (worker id, unit id, lease token, result, seconds, engine). Written to a temporary
// file, fsynced, renamed into place, and the directory fsynced. Unreadable files are
// moved to corrupt/, results the server refused for good to rejected/: kept for a human,
// never retried, never fatal.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "core/status.h"
#include "proto/collatz.pb.h"

namespace collatz::worker {

// Where the lease loop puts a finished unit's request before it is sent: the spool in
// production, a fake (or a fault injector) in tests.
class SpoolWriter {
 public:
  virtual ~SpoolWriter() = default;
  // Writes the request durably; *name identifies it.
  virtual Status Write(const v1::CompleteRequest& request, std::string* name) = 0;
};

class Spool final : public SpoolWriter {
 public:
  // Creates `dir` (and corrupt/, rejected/) if needed, locks it (<dir>/lock, holding this
  // process's id) for as long as the Spool lives, and removes temporary files that a crash
  // left behind.
  // FailedPrecondition when another process (or another open Spool) holds the directory.
  static Status Open(const std::string& dir, std::unique_ptr<Spool>* out);
  ~Spool() override;

  // Writes the result durably; *name identifies it for Read/Remove.
  Status Write(const v1::CompleteRequest& request, std::string* name) override;
  // Names of the spooled results, oldest unit first.
  std::vector<std::string> List() const;
  // Corruption when the file is damaged (the caller moves it aside).
  Status Read(const std::string& name, v1::CompleteRequest* request) const;
  // After the server acknowledged the result.
  Status Remove(const std::string& name);
  // Moves a file to corrupt/ or rejected/ (`subdir`), durably.
  Status MoveAside(const std::string& name, const std::string& subdir);

  const std::string& dir() const { return dir_; }

  // This installation's id: 32 hex digits in <dir>/instance-id, made once. The server keeps
  // a flag with it (docs/PROTOCOL.md), so a worker restarted on the same spool stays flagged.
  Status InstanceId(std::string* id);

 private:
  // Writes `bytes` to `path` through a temporary file, fsynced and renamed.
  Status WriteDurably(const std::string& path, const std::string& bytes);
  Spool(std::string dir, int lock_fd) : dir_(std::move(dir)), lock_fd_(lock_fd) {}
  std::string dir_;
  int lock_fd_;  // flock()ed
  mutable std::mutex mu_;  // orders concurrent writers' directory fsyncs; files are per result
};

// The file name a result gets: "u<unit id, 20 digits>-<token prefix>.result" ("s..." for
// the result of a stats unit).
std::string SpoolFileName(const v1::CompleteRequest& request);

}  // namespace collatz::worker
