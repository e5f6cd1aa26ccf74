#include "core/stats_file.h"

#include <xxhash.h>

#include <cstdio>
#include <cstring>

namespace collatz {
namespace {

constexpr char kMagic[8] = {'C', 'L', 'Z', 'S', 'T', 'A', 'T', 'S'};

void Put32(std::string* s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) (*s)[at + i] = static_cast<char>(v >> (8 * i));
}
void Put64(std::string* s, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) (*s)[at + i] = static_cast<char>(v >> (8 * i));
}
uint32_t Get32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(s[at + i]);
  return v;
}
uint64_t Get64(const std::string& s, size_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(s[at + i]);
  return v;
}

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::string EncodeStatsFile(const StatsFile& file) {
  std::string out(kStatsHeaderBytes + file.batches.size() * kStatsRecordBytes, '\0');
  std::memcpy(out.data(), kMagic, 8);
  Put32(&out, 8, kStatsFormatVersion);
  Put32(&out, 12, kStatsHeaderBytes);
  Put32(&out, 16, file.batch);
  Put32(&out, 20, kStatsRecordBytes);
  Put64(&out, 24, Lo64(file.from));
  Put64(&out, 32, Hi64(file.from));
  Put64(&out, 40, file.batches.size());
  size_t at = kStatsHeaderBytes;
  for (const BatchStats& b : file.batches) {
    out[at] = static_cast<char>(b.min);
    out[at + 1] = static_cast<char>(b.min >> 8);
    out[at + 2] = static_cast<char>(b.max);
    out[at + 3] = static_cast<char>(b.max >> 8);
    Put64(&out, at + 4, b.sum);
    at += kStatsRecordBytes;
  }
  Put64(&out, 48, XXH64(out.data() + kStatsHeaderBytes, out.size() - kStatsHeaderBytes, 0));
  Put64(&out, 56, XXH64(out.data(), 56, 0));
  return out;
}

Status DecodeStatsFile(const std::string& bytes, const std::string& name, StatsFile* out) {
  if (bytes.size() < kStatsHeaderBytes) {
    return Status::Corruption(name + ": truncated stats file (" + std::to_string(bytes.size()) + " bytes, header is 64)");
  }
  if (std::memcmp(bytes.data(), kMagic, 8) != 0) return Status::Corruption(name + ": not a stats file (bad magic)");
  const uint32_t version = Get32(bytes, 8);
  if (version != kStatsFormatVersion) {
    return Status::FailedPrecondition(name + ": unsupported stats file format version " + std::to_string(version));
  }
  const uint64_t header_hash = XXH64(bytes.data(), 56, 0);
  if (header_hash != Get64(bytes, 56)) {
    return Status::Corruption(name + ": header checksum mismatch (stored " + Hex(Get64(bytes, 56)) + ", computed " +
                              Hex(header_hash) + ")");
  }
  if (Get32(bytes, 12) != kStatsHeaderBytes) return Status::Corruption(name + ": header size is not 64");
  if (Get32(bytes, 20) != kStatsRecordBytes) return Status::Corruption(name + ": record size is not 12");
  StatsFile f;
  f.batch = Get32(bytes, 16);
  f.from = MakeU128(Get64(bytes, 32), Get64(bytes, 24));
  const uint64_t count = Get64(bytes, 40);
  if (f.batch < kMinStatsBatch || f.batch > kMaxStatsBatch) {
    return Status::Corruption(name + ": batch size " + std::to_string(f.batch) + " out of range");
  }
  if (count == 0) return Status::Corruption(name + ": no batches");
  if (f.from % f.batch != 0) return Status::Corruption(name + ": start is not a multiple of the batch size");
  if (static_cast<u128>(count) > (kU128Max - f.from) / f.batch) return Status::Corruption(name + ": range passes 2^128");
  const uint64_t payload = (bytes.size() - kStatsHeaderBytes);
  if (count > payload / kStatsRecordBytes) {
    return Status::Corruption(name + ": truncated stats file (" + std::to_string(payload) + " payload bytes for " +
                              std::to_string(count) + " batches)");
  }
  if (payload != count * kStatsRecordBytes) {
    return Status::Corruption(name + ": trailing bytes after " + std::to_string(count) + " batches");
  }
  const uint64_t payload_hash = XXH64(bytes.data() + kStatsHeaderBytes, payload, 0);
  if (payload_hash != Get64(bytes, 48)) {
    return Status::Corruption(name + ": payload checksum mismatch (stored " + Hex(Get64(bytes, 48)) + ", computed " +
                              Hex(payload_hash) + ")");
  }
  f.batches.resize(count);
  size_t at = kStatsHeaderBytes;
  for (uint64_t b = 0; b < count; ++b, at += kStatsRecordBytes) {
    BatchStats& s = f.batches[b];
    s.min = static_cast<uint16_t>(static_cast<uint8_t>(bytes[at]) | static_cast<uint8_t>(bytes[at + 1]) << 8);
    s.max = static_cast<uint16_t>(static_cast<uint8_t>(bytes[at + 2]) | static_cast<uint8_t>(bytes[at + 3]) << 8);
    s.sum = Get64(bytes, at + 4);
    s.count = BatchCount(f.from + static_cast<u128>(b) * f.batch, f.batch);
    if (s.min > s.max || s.sum < static_cast<uint64_t>(s.min) * s.count || s.sum > static_cast<uint64_t>(s.max) * s.count) {
      return Status::Corruption(name + ": batch " + std::to_string(b) + " is inconsistent (min " + std::to_string(s.min) +
                                ", max " + std::to_string(s.max) + ", sum " + std::to_string(s.sum) + ")");
    }
  }
  *out = std::move(f);
  return Status::Ok();
}

std::string FormatAverage(uint64_t sum, uint32_t count) {
  if (count == 0) return "nan";
  const u128 scaled = static_cast<u128>(sum) * 1000000;
  const u128 q = (2 * scaled + count) / (2 * static_cast<u128>(count));  // rounded half up
  char frac[8];
  std::snprintf(frac, sizeof frac, "%06u", static_cast<unsigned>(q % 1000000));
  return ToDecimal(q / 1000000) + "." + frac;
}

std::string FormatStatsCsv(const StatsFile& file) {
  std::string out = "batch_start,min,avg,max\n";
  out.reserve(out.size() + file.batches.size() * 32);
  for (size_t b = 0; b < file.batches.size(); ++b) {
    const BatchStats& s = file.batches[b];
    out += ToDecimal(file.from + static_cast<u128>(b) * file.batch);
    out += ',' + std::to_string(s.min) + ',' + FormatAverage(s.sum, s.count) + ',' + std::to_string(s.max) + '\n';
  }
  return out;
}

}  // namespace collatz
