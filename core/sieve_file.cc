#include "core/sieve_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace collatz {
namespace {

// Header layout (all little-endian), see docs/SIEVE_FORMAT.md.
constexpr size_t kOffMagic = 0;
constexpr size_t kOffVersion = 8;
constexpr size_t kOffHeaderSize = 12;
constexpr size_t kOffBits = 16;
constexpr size_t kOffWidth = 20;
constexpr size_t kOffCount = 24;
constexpr size_t kOffFlags = 32;
constexpr size_t kOffPayloadHash = 40;
constexpr size_t kOffHeaderHash = 48;  // XXH64 of bytes [0, 48)
constexpr size_t kOffReserved = 56;

void PutLe(unsigned char* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
uint64_t GetLe(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

std::string ErrnoText() { return std::strerror(errno); }

void EncodeHeader(const SieveFileHeader& h, unsigned char* out) {
  std::memset(out, 0, kSieveFileHeaderSize);
  std::memcpy(out + kOffMagic, kSieveFileMagic, 8);
  PutLe(out + kOffVersion, h.version, 4);
  PutLe(out + kOffHeaderSize, kSieveFileHeaderSize, 4);
  PutLe(out + kOffBits, static_cast<uint32_t>(h.bits), 4);
  PutLe(out + kOffWidth, h.residue_width, 4);
  PutLe(out + kOffCount, h.count, 8);
  PutLe(out + kOffFlags, h.flags, 8);
  PutLe(out + kOffPayloadHash, h.payload_checksum, 8);
  PutLe(out + kOffHeaderHash, XXH64(out, kOffHeaderHash, 0), 8);
}

Status DecodeHeader(const std::string& path, const unsigned char* in, size_t file_size, SieveFileHeader* h) {
  if (file_size < kSieveFileHeaderSize) {
    return Status::Corruption(path + ": truncated sieve file: " + std::to_string(file_size) +
                              " bytes, shorter than the " + std::to_string(kSieveFileHeaderSize) + "-byte header");
  }
  if (std::memcmp(in + kOffMagic, kSieveFileMagic, 8) != 0) {
    return Status::Corruption(path + ": not a sieve file (bad magic; expected \"CLZSIEVE\")");
  }
  h->version = static_cast<uint32_t>(GetLe(in + kOffVersion, 4));
  if (h->version != kSieveFileVersion) {
    return Status::FailedPrecondition(path + ": unsupported sieve file format version " + std::to_string(h->version) +
                                      " (this build reads version " + std::to_string(kSieveFileVersion) + ")");
  }
  if (GetLe(in + kOffHeaderHash, 8) != XXH64(in, kOffHeaderHash, 0)) {
    return Status::Corruption(path + ": sieve file header checksum mismatch (header is corrupt)");
  }
  if (GetLe(in + kOffHeaderSize, 4) != kSieveFileHeaderSize || GetLe(in + kOffReserved, 8) != 0) {
    return Status::Corruption(path + ": sieve file header has an unexpected size or non-zero reserved field");
  }
  h->bits = static_cast<int>(GetLe(in + kOffBits, 4));
  h->residue_width = static_cast<uint32_t>(GetLe(in + kOffWidth, 4));
  h->count = GetLe(in + kOffCount, 8);
  h->flags = GetLe(in + kOffFlags, 8);
  h->payload_checksum = GetLe(in + kOffPayloadHash, 8);
  if (h->bits < kMinSieveBits || h->bits > kMaxSieveBits) {
    return Status::Corruption(path + ": sieve bits " + std::to_string(h->bits) + " out of range [" +
                              std::to_string(kMinSieveBits) + ", " + std::to_string(kMaxSieveBits) + "]");
  }
  if (h->residue_width != SieveResidueWidth(h->bits)) {
    return Status::Corruption(path + ": residue width " + std::to_string(h->residue_width) + " does not match " +
                              std::to_string(h->bits) + " bits");
  }
  if (h->flags != kSieveFlagOddResiduesOnly) {
    return Status::FailedPrecondition(path + ": unsupported sieve file flags " + std::to_string(h->flags));
  }
  // At most 2^(bits-1) odd residues exist; this also keeps count * width from overflowing.
  if (h->count > (uint64_t{1} << (h->bits - 1))) {
    return Status::Corruption(path + ": survivor count " + std::to_string(h->count) + " exceeds 2^(bits-1)");
  }
  const uint64_t expected = kSieveFileHeaderSize + h->count * h->residue_width;
  if (file_size < expected) {
    return Status::Corruption(path + ": truncated sieve file: " + std::to_string(file_size) + " bytes, header says " +
                              std::to_string(expected));
  }
  if (file_size > expected) {
    return Status::Corruption(path + ": sieve file has " + std::to_string(file_size - expected) +
                              " trailing bytes beyond the " + std::to_string(h->count) + " residues in its header");
  }
  return Status::Ok();
}

}  // namespace

// ---------------------------------------------------------------- MappedSieveFile

Status MappedSieveFile::Open(const std::string& path, std::unique_ptr<MappedSieveFile>* out, bool verify_checksum) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError(path + ": cannot open sieve file: " + ErrnoText());
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    Status s = Status::IOError(path + ": fstat: " + ErrnoText());
    ::close(fd);
    return s;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::InvalidArgument(path + ": not a regular file");
  }
  std::unique_ptr<MappedSieveFile> file(new MappedSieveFile());
  file->path_ = path;
  file->map_size_ = static_cast<size_t>(st.st_size);
  if (file->map_size_ > 0) {
    void* m = ::mmap(nullptr, file->map_size_, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
      Status s = Status::IOError(path + ": mmap: " + ErrnoText());
      ::close(fd);
      return s;
    }
    file->map_ = static_cast<const unsigned char*>(m);
    ::madvise(m, file->map_size_, MADV_SEQUENTIAL);
  }
  ::close(fd);
  static const unsigned char kEmpty[1] = {0};
  Status s = DecodeHeader(path, file->map_ ? file->map_ : kEmpty, file->map_size_, &file->header_);
  if (!s.ok()) return s;
  if (verify_checksum) {
    uint64_t actual = file->ComputePayloadChecksum();
    if (actual != file->header_.payload_checksum) {
      char buf[128];
      std::snprintf(buf, sizeof(buf), "stored %016llx, computed %016llx",
                    static_cast<unsigned long long>(file->header_.payload_checksum),
                    static_cast<unsigned long long>(actual));
      return Status::Corruption(path + ": sieve file payload checksum mismatch (" + buf + ")");
    }
  }
  *out = std::move(file);
  return Status::Ok();
}

MappedSieveFile::~MappedSieveFile() {
  if (map_ != nullptr) ::munmap(const_cast<unsigned char*>(map_), map_size_);
}

uint64_t MappedSieveFile::residue(uint64_t j) const {
  const unsigned width = header_.residue_width;
  return GetLe(map_ + kSieveFileHeaderSize + j * width, static_cast<int>(width));
}

uint64_t MappedSieveFile::ComputePayloadChecksum() const {
  const size_t n = header_.count * header_.residue_width;
  return XXH64(n ? map_ + kSieveFileHeaderSize : nullptr, n, 0);
}

Status MappedSieveFile::CheckResidues() const {
  const uint64_t limit = uint64_t{1} << header_.bits;
  uint64_t previous = 0;
  for (uint64_t j = 0; j < header_.count; ++j) {
    const uint64_t r = residue(j);
    if ((r & 1) == 0 || r >= limit || (j > 0 && r <= previous)) {
      return Status::Corruption(path_ + ": residue #" + std::to_string(j) + " = " + std::to_string(r) +
                                " is not odd, ascending and below 2^" + std::to_string(header_.bits));
    }
    previous = r;
  }
  return Status::Ok();
}

std::vector<uint64_t> MappedSieveFile::ReadAll() const {
  std::vector<uint64_t> out(header_.count);
  for (uint64_t j = 0; j < header_.count; ++j) out[j] = residue(j);
  return out;
}

// ---------------------------------------------------------------- SieveFileWriter

SieveFileWriter::~SieveFileWriter() { Abandon(); }

void SieveFileWriter::Abandon() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
    ::unlink(temp_path_.c_str());
  }
  if (hash_state_ != nullptr) {
    XXH64_freeState(static_cast<XXH64_state_t*>(hash_state_));
    hash_state_ = nullptr;
  }
}

Status SieveFileWriter::Open(const std::string& path, int bits) {
  if (bits < kMinSieveBits || bits > kMaxSieveBits) {
    return Status::InvalidArgument("sieve bits " + std::to_string(bits) + " out of range");
  }
  path_ = path;
  bits_ = bits;
  count_ = 0;
  // Same directory, so the final rename is atomic; pid makes concurrent writers distinct.
  temp_path_ = path + ".tmp." + std::to_string(::getpid());
  fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) return Status::IOError(temp_path_ + ": cannot create: " + ErrnoText());
  // Placeholder header; the real one is written by Finish once count and checksum are known.
  unsigned char zero[kSieveFileHeaderSize] = {};
  if (::write(fd_, zero, sizeof(zero)) != static_cast<ssize_t>(sizeof(zero))) {
    Status s = Status::IOError(temp_path_ + ": write: " + ErrnoText());
    Abandon();
    return s;
  }
  auto* state = XXH64_createState();
  XXH64_reset(state, 0);
  hash_state_ = state;
  buffer_.clear();
  buffer_.reserve(1 << 20);
  return Status::Ok();
}

Status SieveFileWriter::FlushBuffer() {
  size_t done = 0;
  while (done < buffer_.size()) {
    ssize_t w = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      return Status::IOError(temp_path_ + ": write: " + ErrnoText());
    }
    done += static_cast<size_t>(w);
  }
  XXH64_update(static_cast<XXH64_state_t*>(hash_state_), buffer_.data(), buffer_.size());
  buffer_.clear();
  return Status::Ok();
}

Status SieveFileWriter::Append(const uint64_t* residues, size_t n) {
  if (fd_ < 0) return Status::FailedPrecondition("SieveFileWriter not open");
  const uint32_t width = SieveResidueWidth(bits_);
  const uint64_t limit = uint64_t{1} << bits_;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = residues[i];
    if ((r & 1) == 0 || r >= limit || (count_ > 0 && r <= last_)) {
      return Status::InvalidArgument("sieve residue " + std::to_string(r) + " is not odd, ascending and below 2^" +
                                     std::to_string(bits_));
    }
    last_ = r;
    ++count_;
    const size_t at = buffer_.size();
    buffer_.resize(at + width);
    PutLe(buffer_.data() + at, r, static_cast<int>(width));
    if (buffer_.size() >= (1 << 20)) {
      Status s = FlushBuffer();
      if (!s.ok()) return s;
    }
  }
  return Status::Ok();
}

Status SieveFileWriter::Finish() {
  if (fd_ < 0) return Status::FailedPrecondition("SieveFileWriter not open");
  Status s = FlushBuffer();
  if (!s.ok()) return s;
  SieveFileHeader h;
  h.version = kSieveFileVersion;
  h.bits = bits_;
  h.residue_width = SieveResidueWidth(bits_);
  h.count = count_;
  h.flags = kSieveFlagOddResiduesOnly;
  h.payload_checksum = XXH64_digest(static_cast<XXH64_state_t*>(hash_state_));
  unsigned char header[kSieveFileHeaderSize];
  EncodeHeader(h, header);
  if (::pwrite(fd_, header, sizeof(header), 0) != static_cast<ssize_t>(sizeof(header))) {
    return Status::IOError(temp_path_ + ": write header: " + ErrnoText());
  }
  if (::fsync(fd_) != 0) return Status::IOError(temp_path_ + ": fsync: " + ErrnoText());
  if (::close(fd_) != 0) {
    fd_ = -1;
    ::unlink(temp_path_.c_str());
    return Status::IOError(temp_path_ + ": close: " + ErrnoText());
  }
  fd_ = -1;
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    Status r = Status::IOError("rename " + temp_path_ + " -> " + path_ + ": " + ErrnoText());
    ::unlink(temp_path_.c_str());
    return r;
  }
  // Make the rename itself durable.
  std::string dir = path_.find('/') == std::string::npos ? "." : path_.substr(0, path_.rfind('/'));
  if (dir.empty()) dir.push_back('/');  // the root (and no GCC 12 -Wrestrict false alarm at -O3)
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::Ok();
}

Status WriteSieveFile(const std::string& path, int bits, const std::vector<uint64_t>& residues) {
  SieveFileWriter writer;
  Status s = writer.Open(path, bits);
  if (!s.ok()) return s;
  s = writer.Append(residues.data(), residues.size());
  if (!s.ok()) return s;
  return writer.Finish();
}

Status LoadSieveFile(const std::string& path, std::shared_ptr<const Sieve>* out) {
  std::unique_ptr<MappedSieveFile> file;
  Status s = MappedSieveFile::Open(path, &file, /*verify_checksum=*/true);
  if (!s.ok()) return s;
  s = file->CheckResidues();
  if (!s.ok()) return s;
  return Sieve::FromResidues(file->bits(), file->ReadAll(), out);
}

}  // namespace collatz
