// collatz-sieve: generate, inspect, verify and dump k-bit join sieve files.
// Exit codes: 0 ok, 1 failure, 2 usage error.
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <charconv>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "sieve_gen/generator.h"
#include "sieve_gen/resources.h"
#include "core/sieve_file.h"

namespace {

using collatz::MappedSieveFile;
using collatz::SieveFileWriter;
using collatz::Status;
namespace sg = collatz::sievegen;

// The temporary output of a running `generate`, removed if the run is interrupted
// (the output itself only appears, complete, at the final rename).
char g_temp_output[4096];

void RemoveTempAndDie(int sig) {
  if (g_temp_output[0] != 0) ::unlink(g_temp_output);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void CleanUpOnSignals(const std::string& temp_path) {
  std::snprintf(g_temp_output, sizeof(g_temp_output), "%s", temp_path.c_str());
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::signal(sig, RemoveTempAndDie);
}

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

int Fail(const Status& s) {
  std::fprintf(stderr, "collatz-sieve: %s\n", s.ToString().c_str());
  return kExitFailure;
}

// Bad flag values are usage errors; everything else is a failure.
int FailOptions(const Status& s) {
  std::fprintf(stderr, "collatz-sieve: %s\n", s.ToString().c_str());
  return s.code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure;
}

std::string Hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016" PRIx64, v);
  return buf;
}

struct GenerateArgs {
  int bits = 0;
  std::string out;
  std::string memory = "4GiB";
  std::string tmpdir;
  int threads = 0;
  bool force_external = false;
  bool quiet = false;
  bool dry_run = false;
};

// Progress on stderr, only when it is a terminal: level, share of work, elapsed, ETA.
sg::ProgressFn MakeProgress(bool quiet) {
  if (quiet || !::isatty(STDERR_FILENO)) return nullptr;
  return [](const sg::Progress& p) {
    const double frac = p.records_expected ? std::min(1.0, double(p.records_done) / double(p.records_expected)) : 0;
    const double eta = frac > 0.001 ? p.elapsed_s * (1 - frac) / frac : 0;
    std::fprintf(stderr, "\r  level %2d/%d  %5.1f%%  elapsed %6.0fs  ETA %6.0fs   ", p.level, p.bits, 100 * frac,
                 p.elapsed_s, eta);
    std::fflush(stderr);
  };
}

// Fills options from the shared flags, checks memory and disk before any work.
Status PrepareOptions(int bits, const std::string& memory, const std::string& tmpdir_flag, int threads,
                      const std::string& out_path, sg::GeneratorOptions* o, sg::ResourceEstimate* estimate) {
  if (bits < collatz::kMinSieveBits || bits > collatz::kMaxSieveBits) {
    return Status::InvalidArgument("--bits must be in [1, 40], got " + std::to_string(bits));
  }
  o->bits = bits;
  o->threads = threads;
  Status s = sg::ParseByteSize(memory, &o->memory_bytes);
  if (!s.ok()) return s;
  o->tmpdir = tmpdir_flag.empty() ? sg::DirectoryOf(out_path) : tmpdir_flag;
  if (::access(o->tmpdir.c_str(), W_OK | X_OK) != 0) {
    return Status::InvalidArgument("--tmpdir " + o->tmpdir + " is not a writable directory");
  }
  uint64_t available = 0;
  s = sg::AvailableMemory(&available);
  if (!s.ok()) return s;
  *estimate = sg::EstimateResources(*o);
  // The estimate already respects the budget where it can; it exceeds it only when the
  // budget is too small for the partitions the level needs.
  const uint64_t wanted = estimate->peak_memory_bytes;
  if (wanted > available) {
    return Status::FailedPrecondition(
        "needs about " + sg::FormatBytes(wanted) + " of memory (--memory " + memory + ") but only " +
        sg::FormatBytes(available) + " is available; " +
        (wanted > o->memory_bytes ? "this width needs a larger --memory on a larger machine"
                                  : "lower --memory to run out of core"));
  }
  if (wanted > o->memory_bytes + (o->memory_bytes >> 2) && wanted > (uint64_t{256} << 20)) {
    std::fprintf(stderr, "collatz-sieve: warning: --memory %s is too small for %d bits; expect about %s\n",
                 memory.c_str(), bits, sg::FormatBytes(wanted).c_str());
  }
  uint64_t tmp_free = 0, tmp_dev = 0, out_free = 0, out_dev = 0;
  s = sg::FreeDiskSpace(o->tmpdir, &tmp_free, &tmp_dev);
  if (!s.ok()) return s;
  const std::string out_dir = out_path.empty() ? o->tmpdir : sg::DirectoryOf(out_path);
  s = sg::FreeDiskSpace(out_dir, &out_free, &out_dev);
  if (!s.ok()) return s;
  const uint64_t disk_need = estimate->external ? estimate->peak_disk_bytes : 0;
  const uint64_t margin = uint64_t{64} << 20;
  if (!out_path.empty() && out_dev == tmp_dev) {
    if (disk_need + estimate->output_bytes + margin > tmp_free) {
      return Status::FailedPrecondition("needs about " + sg::FormatBytes(disk_need) + " of scratch space in " +
                                        o->tmpdir + " plus " + sg::FormatBytes(estimate->output_bytes) +
                                        " for the output, but only " + sg::FormatBytes(tmp_free) + " is free");
    }
  } else {
    if (disk_need > 0 && disk_need + margin > tmp_free) {
      return Status::FailedPrecondition("needs about " + sg::FormatBytes(disk_need) + " of scratch space in " +
                                        o->tmpdir + " but only " + sg::FormatBytes(tmp_free) + " is free");
    }
    if (!out_path.empty() && estimate->output_bytes + margin > out_free) {
      return Status::FailedPrecondition("the output needs about " + sg::FormatBytes(estimate->output_bytes) + " in " +
                                        out_dir + " but only " + sg::FormatBytes(out_free) + " is free");
    }
  }
  return Status::Ok();
}

int RunGenerate(const GenerateArgs& a) {
  sg::GeneratorOptions o;
  sg::ResourceEstimate estimate;
  Status s = PrepareOptions(a.bits, a.memory, a.tmpdir, a.threads, a.out, &o, &estimate);
  if (a.dry_run) {
    // The plan only: what the up-front checks compared with the machine.
    if (estimate.output_bytes == 0) estimate = sg::EstimateResources(o);
    nlohmann::json j;
    j["bits"] = a.bits;
    j["memory_budget_bytes"] = o.memory_bytes;
    j["out_of_core"] = estimate.external;
    j["estimated_peak_memory_bytes"] = estimate.peak_memory_bytes;
    j["estimated_peak_scratch_bytes"] = estimate.external ? estimate.peak_disk_bytes : 0;
    j["estimated_output_bytes"] = estimate.output_bytes;
    j["checks"] = s.ok() ? "ok" : s.ToString();
    std::cout << j.dump() << std::endl;
    return s.ok() ? kExitOk : (s.code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure);
  }
  if (!s.ok()) return FailOptions(s);
  o.force_external = a.force_external;
  if (!a.quiet) {
    std::fprintf(stderr, "collatz-sieve: %d bits, memory budget %s, %s (estimated peak scratch %s, output %s)\n",
                 a.bits, sg::FormatBytes(o.memory_bytes).c_str(),
                 estimate.external || o.force_external ? ("out of core in " + o.tmpdir).c_str() : "in memory",
                 sg::FormatBytes(estimate.external ? estimate.peak_disk_bytes : 0).c_str(),
                 sg::FormatBytes(estimate.output_bytes).c_str());
  }
  SieveFileWriter writer;
  s = writer.Open(a.out, a.bits);
  if (!s.ok()) return Fail(s);
  CleanUpOnSignals(writer.temp_path());
  const auto start = std::chrono::steady_clock::now();
  sg::GeneratorStats stats;
  auto progress = MakeProgress(a.quiet);
  s = sg::GenerateSieve(
      o, [&](const uint64_t* r, size_t n) { return writer.Append(r, n); }, &stats, progress);
  if (progress) std::fprintf(stderr, "\n");
  if (!s.ok()) return Fail(s);
  s = writer.Finish();
  if (!s.ok()) return Fail(s);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  nlohmann::json j;
  j["file"] = a.out;
  j["bits"] = a.bits;
  j["count"] = stats.odd_survivors;
  j["survivors_all"] = stats.survivors;
  j["seconds"] = seconds;
  j["threads"] = stats.threads;
  j["memory_budget_bytes"] = o.memory_bytes;
  j["external_levels"] = stats.external_levels;
  j["max_partitions"] = stats.max_partitions;
  j["largest_level_records"] = stats.largest_level_records;
  j["peak_scratch_bytes"] = stats.peak_external_bytes;
  j["scratch_read_bytes"] = stats.external_read_bytes;
  j["scratch_written_bytes"] = stats.external_written_bytes;
  std::cout << j.dump() << std::endl;
  return kExitOk;
}

int RunInfo(const std::string& path) {
  std::unique_ptr<MappedSieveFile> file;
  Status s = MappedSieveFile::Open(path, &file, /*verify_checksum=*/false);
  if (!s.ok()) return Fail(s);
  const uint64_t computed = file->ComputePayloadChecksum();
  const bool checksum_ok = computed == file->header().payload_checksum;
  nlohmann::json j;
  j["file"] = path;
  j["format_version"] = file->header().version;
  j["bits"] = file->bits();
  j["count"] = file->size();
  j["residue_bytes"] = file->header().residue_width;
  j["flags"] = file->header().flags;
  j["checksum"] = "xxh64:" + Hex64(file->header().payload_checksum);
  j["checksum_status"] = checksum_ok ? "ok" : "mismatch";
  if (!checksum_ok) j["checksum_computed"] = "xxh64:" + Hex64(computed);
  // Fraction of all N kept by the sieve (odd survivors / 2^bits).
  j["fraction"] = static_cast<double>(file->size()) / static_cast<double>(uint64_t{1} << file->bits());
  std::cout << j.dump(2) << std::endl;
  return checksum_ok ? kExitOk : kExitFailure;
}

int RunDump(const std::string& path) {
  std::unique_ptr<MappedSieveFile> file;
  Status s = MappedSieveFile::Open(path, &file);
  if (!s.ok()) return Fail(s);
  std::string buf;
  buf.reserve(1 << 20);
  for (uint64_t j = 0; j < file->size(); ++j) {
    char num[24];
    auto [end, ec] = std::to_chars(num, num + sizeof(num), file->residue(j));
    buf.append(num, end);
    buf.push_back('\n');
    if (buf.size() > (1 << 20) - 32) {
      if (std::fwrite(buf.data(), 1, buf.size(), stdout) != buf.size()) return Fail(Status::IOError("stdout"));
      buf.clear();
    }
  }
  if (std::fwrite(buf.data(), 1, buf.size(), stdout) != buf.size() || std::fflush(stdout) != 0) {
    return Fail(Status::IOError("stdout"));
  }
  return kExitOk;
}

int RunVerify(const std::string& path, const std::string& memory, const std::string& tmpdir, int threads,
              bool quiet) {
  std::unique_ptr<MappedSieveFile> file;
  Status s = MappedSieveFile::Open(path, &file);
  if (!s.ok()) return Fail(s);
  s = file->CheckResidues();
  if (!s.ok()) return Fail(s);
  sg::GeneratorOptions o;
  sg::ResourceEstimate estimate;
  s = PrepareOptions(file->bits(), memory, tmpdir.empty() ? sg::DirectoryOf(path) : tmpdir, threads, "", &o,
                     &estimate);
  if (!s.ok()) return FailOptions(s);
  uint64_t position = 0;
  std::string difference;
  sg::GeneratorStats stats;
  auto progress = MakeProgress(quiet);
  s = sg::GenerateSieve(
      o,
      [&](const uint64_t* r, size_t n) -> Status {
        for (size_t i = 0; i < n; ++i, ++position) {
          if (position >= file->size()) {
            difference = "the file ends after " + std::to_string(file->size()) + " residues; regenerated has more (next " +
                         std::to_string(r[i]) + ")";
            return Status::Corruption(difference);
          }
          if (file->residue(position) != r[i]) {
            difference = "residue #" + std::to_string(position) + ": file has " +
                         std::to_string(file->residue(position)) + ", regenerated " + std::to_string(r[i]);
            return Status::Corruption(difference);
          }
        }
        return Status::Ok();
      },
      &stats, progress);
  if (progress) std::fprintf(stderr, "\n");
  if (!s.ok()) {
    if (!difference.empty()) {
      std::fprintf(stderr, "collatz-sieve: %s: DIFFERS from the regenerated %d-bit sieve: %s\n", path.c_str(),
                   file->bits(), difference.c_str());
      return kExitFailure;
    }
    return Fail(s);
  }
  if (position != file->size()) {
    std::fprintf(stderr, "collatz-sieve: %s: DIFFERS: the file has %" PRIu64 " residues, regenerated %" PRIu64 "\n",
                 path.c_str(), file->size(), position);
    return kExitFailure;
  }
  std::printf("%s: OK: %d bits, %" PRIu64 " residues, identical to the regenerated sieve\n", path.c_str(),
              file->bits(), position);
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  // Levels are held in 256 KiB chunks and sorted in large buffers; serving every block of
  // 128 KiB or more with mmap returns freed levels to the system at once, so the resident
  // size follows the memory budget instead of the heap's high-water mark.
  ::mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  CLI::App app{"collatz-sieve: k-bit join sieves (SPEC section 2) as files"};
  app.require_subcommand(1);

  GenerateArgs gen;
  auto* generate = app.add_subcommand("generate", "Generate the sieve of --bits K into --out FILE");
  generate->add_option("--bits,-k", gen.bits, "Sieve width K (1..40)")->required()->check(CLI::Range(1, 40));
  generate->add_option("--out,-o", gen.out, "Output file (written atomically)")->required();
  generate->add_option("--memory", gen.memory, "Memory budget, e.g. 4GiB (default 4GiB)");
  generate->add_option("--tmpdir", gen.tmpdir, "Scratch directory for out-of-core levels (default: the output's)");
  generate->add_option("--threads", gen.threads, "Worker threads (default: all cores)")->check(CLI::Range(0, 64));
  generate->add_flag("--force-external", gen.force_external, "Keep every level out of core (testing)");
  generate->add_flag("--quiet,-q", gen.quiet, "No progress or banner on stderr");
  generate->add_flag("--dry-run", gen.dry_run, "Print the estimated memory, scratch and output (JSON) and stop");

  std::string info_path;
  auto* info = app.add_subcommand("info", "Print a sieve file's header and checksum status as JSON");
  info->add_option("file", info_path, "Sieve file")->required();

  std::string verify_path, verify_memory = "4GiB", verify_tmpdir;
  int verify_threads = 0;
  bool verify_quiet = false;
  auto* verify = app.add_subcommand("verify", "Regenerate the sieve and compare it with FILE");
  verify->add_option("file", verify_path, "Sieve file")->required();
  verify->add_option("--memory", verify_memory, "Memory budget for regenerating (default 4GiB)");
  verify->add_option("--tmpdir", verify_tmpdir, "Scratch directory (default: the file's)");
  verify->add_option("--threads", verify_threads, "Worker threads (default: all cores)")->check(CLI::Range(0, 64));
  verify->add_flag("--quiet,-q", verify_quiet, "No progress on stderr");

  std::string dump_path;
  auto* dump = app.add_subcommand("dump", "Print the residues, one decimal per line, ascending");
  dump->add_option("file", dump_path, "Sieve file")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  if (generate->parsed()) return RunGenerate(gen);
  if (info->parsed()) return RunInfo(info_path);
  if (verify->parsed()) return RunVerify(verify_path, verify_memory, verify_tmpdir, verify_threads, verify_quiet);
  if (dump->parsed()) return RunDump(dump_path);
  return kExitUsage;
}
