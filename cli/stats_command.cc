// collatzctl stats: computes batch statistics on the CPU or the GPU and writes them as a
// stats file (docs/STATS_FORMAT.md) or as CSV; with --in, prints an existing file instead.
#include "cli/stats_command.h"

#include <unistd.h>
#include <xxhash.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

#include <spdlog/spdlog.h>

#include "cli/cli_util.h"
#include "cli/exit_codes.h"
#include "core/step_table.h"
#include "core/tail_table.h"

#if COLLATZ_WITH_GPU_STATS
#include "gpu/gpu_stats.h"
#endif

namespace collatz::cli {
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

Status WriteOutput(const std::string& path, const std::string& data) {
  if (path.empty() || path == "-") {
    if (std::fwrite(data.data(), 1, data.size(), stdout) != data.size() || std::fflush(stdout) != 0) {
      return Status::IOError("writing to stdout failed");
    }
    return Status::Ok();
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return Status::IOError("cannot create " + tmp + ": " + std::strerror(errno));
    f.write(data.data(), static_cast<std::streamsize>(data.size()));
    f.flush();
    if (!f) {
      std::remove(tmp.c_str());
      return Status::IOError("writing " + tmp + " failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string err = std::strerror(errno);
    std::remove(tmp.c_str());
    return Status::IOError("cannot rename " + tmp + " to " + path + ": " + err);
  }
  return Status::Ok();
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

Status WriteStatsFile(const std::string& path, const StatsFile& file) {
  if (path.empty() || path == "-") return Status::InvalidArgument("a stats file needs a path");
  return WriteOutput(path, EncodeStatsFile(file));
}

Status ReadStatsFile(const std::string& path, StatsFile* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::NotFound("cannot open " + path + ": " + std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) return Status::IOError("reading " + path + " failed");
  return DecodeStatsFile(bytes, path, out);
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

int StatsCommand(const StatsArgs& args) {
  const std::string cmd = "stats";
  if (args.format != "bin" && args.format != "csv") {
    return UsageError(cmd, "--format: \"" + args.format + "\" is not one of: bin, csv");
  }
  if (args.format == "bin" && (args.out.empty() || args.out == "-")) {
    return UsageError(cmd, "--out FILE is required for the binary format (or use --format csv)");
  }
  StatsFile file;
  Status st;
  if (!args.in.empty()) {
    if (!(st = ReadStatsFile(args.in, &file)).ok()) return Failure(cmd, st);
  } else {
    if (args.to.empty()) return UsageError(cmd, "--to is required (or --in FILE)");
    u128 from = 0, to = 0;
    if (!(st = ParseNumberFlag("--from", args.from, &from)).ok()) return UsageError(cmd, st.message());
    if (!(st = ParseNumberFlag("--to", args.to, &to)).ok()) return UsageError(cmd, st.message());
    if (!(st = ValidateStatsRange(from, to, args.batch)).ok()) return UsageError(cmd, st.message());
    // The batches are held in memory (16 bytes each) and written at the end.
    if ((to - from) / args.batch > (u128{1} << 28)) {
      return UsageError(cmd, "range too large: more than 2^28 batches (split it, or use a larger --batch)");
    }
    if (args.threads < 0) return UsageError(cmd, "--threads must be >= 0 (0: all cores)");
    if (args.backend != "cpu" && args.backend != "gpu") {
      return UsageError(cmd, "--backend: \"" + args.backend + "\" is not one of: cpu, gpu");
    }
    file.from = from;
    file.batch = args.batch;
    const auto t0 = std::chrono::steady_clock::now();
    std::string engine;
    if (args.backend == "gpu") {
      if (args.batch < 32 || args.batch > 65536 || (args.batch & (args.batch - 1)) != 0) {
        return UsageError(cmd, "--backend gpu needs a power-of-two --batch between 32 and 65536");
      }
#if COLLATZ_WITH_GPU_STATS
      if (!GpuStats::DeviceAvailable()) return Failure(cmd, Status::FailedPrecondition("--backend gpu: no CUDA device"));
      std::unique_ptr<GpuStats> gpu;
      if (!(st = GpuStats::Create(GpuStatsOptions{}, &gpu)).ok()) return Failure(cmd, st);
      engine = gpu->Describe();
      if (!(st = gpu->Compute(from, to, args.batch, &file.batches)).ok()) return Failure(cmd, st);
#else
      return Failure(cmd, Status::FailedPrecondition("--backend gpu: this collatzctl was built without CUDA"));
#endif
    } else {
      const FastDelay fast(std::make_shared<const StepTable>(16), std::make_shared<const TailTable>(20, args.threads));
      engine = "cpu";
      if (!(st = ComputeBatchStats(fast, from, to, args.batch, args.threads, &file.batches)).ok()) {
        return Failure(cmd, st);
      }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    spdlog::info("stats [{}, {}): {} batches of {} on {} in {:.3f} s ({} numbers/s)", ToDecimal(from), ToDecimal(to),
                 file.batches.size(), args.batch, engine, secs,
                 FormatRate(static_cast<double>(to - from) / std::max(secs, 1e-9)));
  }
  if (args.format == "csv") st = WriteOutput(args.out, FormatStatsCsv(file));
  else st = WriteStatsFile(args.out, file);
  if (!st.ok()) return Failure(cmd, st);
  return kExitOk;
}

}  // namespace collatz::cli
