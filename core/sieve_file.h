// Sieve files: the sorted odd surviving residues of a k-bit join sieve (SPEC section 2),
// with a header that lets a reader refuse corrupt, truncated or foreign files.
// The exact byte layout is docs/SIEVE_FORMAT.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/sieve.h"
#include "core/status.h"

namespace collatz {

constexpr char kSieveFileMagic[8] = {'C', 'L', 'Z', 'S', 'I', 'E', 'V', 'E'};
constexpr uint32_t kSieveFileVersion = 1;
constexpr size_t kSieveFileHeaderSize = 64;
// Flag bit 0: the payload holds odd residues only (always set by this version).
constexpr uint64_t kSieveFlagOddResiduesOnly = 1;

// Residues of a sieve of `bits` bits are stored in this many bytes each.
inline uint32_t SieveResidueWidth(int bits) { return bits <= 32 ? 4 : 8; }

struct SieveFileHeader {
  uint32_t version = 0;
  int bits = 0;
  uint32_t residue_width = 0;
  uint64_t count = 0;
  uint64_t flags = 0;
  uint64_t payload_checksum = 0;  // XXH64 (seed 0) of the payload bytes
};

// A read-only memory map of a sieve file whose header, size and payload checksum
// have been checked. Residues are read in place.
class MappedSieveFile {
 public:
  // Maps and checks `path`. With verify_checksum false the payload is not hashed
  // (used by `info` to report a mismatch instead of failing).
  static Status Open(const std::string& path, std::unique_ptr<MappedSieveFile>* out, bool verify_checksum = true);
  ~MappedSieveFile();
  MappedSieveFile(const MappedSieveFile&) = delete;
  MappedSieveFile& operator=(const MappedSieveFile&) = delete;

  const SieveFileHeader& header() const { return header_; }
  int bits() const { return header_.bits; }
  uint64_t size() const { return header_.count; }
  uint64_t residue(uint64_t j) const;
  // XXH64 of the payload as it is on disk now.
  uint64_t ComputePayloadChecksum() const;
  // Checks that residues are odd, strictly ascending and below 2^bits.
  Status CheckResidues() const;
  // All residues, widened to 64 bits.
  std::vector<uint64_t> ReadAll() const;

 private:
  MappedSieveFile() = default;
  std::string path_;
  SieveFileHeader header_;
  const unsigned char* map_ = nullptr;
  size_t map_size_ = 0;
};

// Writes a sieve file through a temporary name in the same directory, fsyncs it and
// renames it into place, so an interrupted run never leaves a half-written `path`.
class SieveFileWriter {
 public:
  SieveFileWriter() = default;
  ~SieveFileWriter();  // removes the temporary file unless Finish succeeded
  SieveFileWriter(const SieveFileWriter&) = delete;
  SieveFileWriter& operator=(const SieveFileWriter&) = delete;

  Status Open(const std::string& path, int bits);
  // Residues must arrive odd, strictly ascending and below 2^bits.
  Status Append(const uint64_t* residues, size_t n);
  Status Finish();
  uint64_t count() const { return count_; }
  const std::string& temp_path() const { return temp_path_; }

 private:
  Status FlushBuffer();
  void Abandon();

  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
  int bits_ = 0;
  uint64_t count_ = 0;
  uint64_t last_ = 0;
  void* hash_state_ = nullptr;  // XXH64_state_t
  std::vector<unsigned char> buffer_;
};

// Convenience: writes a whole residue list.
Status WriteSieveFile(const std::string& path, int bits, const std::vector<uint64_t>& residues);

// Loads a sieve file (memory-mapped, header, size and checksum checked) into a
// collatz::Sieve with (p, c) for each residue. The entry point for workers and
// `collatzctl run --sieve FILE`.
Status LoadSieveFile(const std::string& path, std::shared_ptr<const Sieve>* out);

}  // namespace collatz
