// stats_bench: a program, not a test. Measures GPU batch statistics (every N counted) at
// --at for each table configuration given, and checks a sample of the batches against the
// CPU. Prints one line per configuration:
//   k T S threads mode variant  kernel numbers/s (CUDA events)  end-to-end numbers/s
//   (GpuStats::Compute into a fresh vector, or into the same vector again on repeats)  host-finished  check
// and, with --stream 1, the end-to-end rate of ComputeStream with a sink that only reads
// the batches (no result vector).
//
// T = 0 picks the tail size automatically (the line's description says which).
//
// stats_bench [--at 2^40] [--numbers 2^36] [--batch 1024] [--sieve-bits 16,17,18]
//             [--tail-bits 24,28,32] [--step-bits 13,19] [--threads 256,512]
//             [--mode 0,1,2 (stride, refill, pairs)] [--variant 0,4,5,6,7 (bits of the stride mode:
//             1 prefetch tail, 2 64-bit steps, 4 fast reduce)] [--launch 2^32]
//             [--check-batches 65536] [--repeat 1] [--stream 0]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/batch_stats.h"
#include "gpu/gpu_stats.h"

namespace {

using namespace collatz;

std::vector<int> IntList(const std::string& text) {
  std::vector<int> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(std::atoi(item.c_str()));
  return out;
}

int Usage(const char* msg) {
  std::fprintf(stderr, "stats_bench: %s\n", msg);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string at_text = "2^40", numbers_text = "2^36", launch_text = "2^32";
  uint32_t batch = 1024;
  std::vector<int> sieve_bits = {17}, tail_bits = {32}, threads = {1024}, step_bits = {13}, modes = {0},
                   variants = {6};
  uint64_t check_batches = 65536;
  int repeat = 1, stream = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return Usage(("missing value after " + a).c_str());
    const std::string v = argv[++i];
    if (a == "--at") at_text = v;
    else if (a == "--numbers") numbers_text = v;
    else if (a == "--launch") launch_text = v;
    else if (a == "--batch") batch = static_cast<uint32_t>(std::strtoul(v.c_str(), nullptr, 10));
    else if (a == "--sieve-bits") sieve_bits = IntList(v);
    else if (a == "--tail-bits") tail_bits = IntList(v);
    else if (a == "--step-bits") step_bits = IntList(v);
    else if (a == "--threads") threads = IntList(v);
    else if (a == "--mode") modes = IntList(v);
    else if (a == "--variant") variants = IntList(v);
    else if (a == "--stream") stream = std::atoi(v.c_str());
    else if (a == "--check-batches") check_batches = std::strtoull(v.c_str(), nullptr, 10);
    else if (a == "--repeat") repeat = std::atoi(v.c_str());
    else return Usage(("unknown option " + a).c_str());
  }
  u128 at = 0, numbers = 0, launch = 0;
  if (!ParseU128(at_text, &at).ok() || !ParseU128(numbers_text, &numbers).ok() || !ParseU128(launch_text, &launch).ok()) {
    return Usage("bad number");
  }
  if (!GpuStats::DeviceAvailable()) {
    std::fprintf(stderr, "stats_bench: no CUDA device\n");
    return 1;
  }
  const FastDelay fast(std::make_shared<const StepTable>(16), std::make_shared<const TailTable>(20));
  std::printf("# at %s, %s numbers, batch %u; numbers/s count every N\n", at_text.c_str(), numbers_text.c_str(), batch);
  std::printf("%3s %3s %3s %5s %4s %3s %12s %12s %8s %8s %s\n", "k", "T", "S", "thr", "mode", "var",
              "kernel N/s", "end2end N/s", "create s", "host", "check");
  int failures = 0;
  for (int T : tail_bits) {
    for (int k : sieve_bits) {
      for (int S : step_bits) {
        for (int th : threads) {
          for (int mode : modes) {
            for (int variant : variants) {
              if (mode != 0 && variant != variants.front()) continue;  // variants refine the stride mode only
              GpuStatsOptions o;
              o.refill = mode == 1;
              o.pairs = mode == 2;
              o.prefetch_tail = (variant & 1) != 0;
              o.fast_steps = (variant & 2) != 0;
              o.fast_reduce = (variant & 4) != 0;
              o.sieve_bits = k;
              o.tail_bits = T;
              o.step_bits = S;
              o.block_threads = th;
              o.launch_numbers = static_cast<uint64_t>(launch);
              std::unique_ptr<GpuStats> g;
              const auto c0 = std::chrono::steady_clock::now();
              Status st = GpuStats::Create(o, &g);
              const double create_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
              if (!st.ok()) {
                std::printf("%3d %3d %3d %5d %4d %3d  create failed: %s\n", k, T, S, th, mode, variant,
                            st.ToString().c_str());
                ++failures;
                continue;
              }
              std::vector<BatchStats> out;  // reused by the repeats
              for (int r = 0; r < repeat; ++r) {
                GpuStatsTimings t;
                st = g->Compute(at, at + numbers, batch, &out, &t);
                if (!st.ok()) {
                  std::printf("%3d %3d %3d %5d %4d %3d  compute failed: %s\n", k, T, S, th, mode, variant,
                              st.ToString().c_str());
                  ++failures;
                  break;
                }
                // Check: the first check_batches/2 batches and as many random ones against the CPU.
                std::string check = "skipped";
                if (check_batches > 0 && r == 0) {
                  const uint64_t head = std::min<uint64_t>(out.size(), check_batches / 2);
                  std::vector<BatchStats> cpu;
                  bool ok = ComputeBatchStats(fast, at, at + static_cast<u128>(head) * batch, batch, 0, &cpu).ok();
                  for (uint64_t b = 0; ok && b < head; ++b) ok = cpu[b] == out[b];
                  std::mt19937_64 rng(k * 100 + T + r);
                  for (uint64_t c = 0; ok && c < check_batches / 2; ++c) {
                    const uint64_t b = rng() % out.size();
                    const u128 start = at + static_cast<u128>(b) * batch;
                    BatchStats s;
                    for (uint32_t j = 0; j < batch; ++j) AddDelay(&s, fast.Delay(start + j));
                    ok = s == out[b];
                  }
                  check = ok ? "ok (" + std::to_string(head + check_batches / 2) + " batches)" : "MISMATCH";
                  if (!ok) ++failures;
                }
                const double n = static_cast<double>(numbers);
                std::printf("%3d %3d %3d %5d %4d %3d %12.4g %12.4g %8.3f %8llu %s%s  [%s]\n", k, T, S, th, mode,
                            mode == 0 ? variant : 4, n / t.kernel_seconds, n / t.total_seconds, create_s,
                            static_cast<unsigned long long>(t.host_finished), check.c_str(),
                            r == 0 ? " fresh vector" : " reused vector", g->Describe().c_str());
                std::fflush(stdout);
              }
              if (stream != 0) {
                GpuStatsTimings t;
                uint64_t seen = 0, sum = 0;
                st = g->ComputeStream(
                    at, at + numbers, batch,
                    [&](u128, const BatchStats* b, size_t count) {
                      seen += count;
                      for (size_t i = 0; i < count; i += 4096) sum += b[i].sum;  // touch the piece
                      return Status::Ok();
                    },
                    &t);
                const double n = static_cast<double>(numbers);
                std::printf("%3d %3d %3d %5d %4d %3d %12.4g %12.4g  ComputeStream, no result vector: %s, %llu batches\n",
                            k, T, S, th, mode, variant, n / t.kernel_seconds, n / t.total_seconds,
                            st.ToString().c_str(), static_cast<unsigned long long>(seen + (sum & 0)));
                if (!st.ok() || seen != out.size()) ++failures;
              }
            }
          }
        }
      }
    }
  }
  return failures == 0 ? 0 : 1;
}
