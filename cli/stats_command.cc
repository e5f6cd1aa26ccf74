// collatzctl stats: computes batch statistics on the CPU or the GPU and writes them as a
// stats file (docs/STATS_FORMAT.md) or as CSV; with --in, prints an existing file instead.
#include "cli/stats_command.h"

#include <unistd.h>

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
