// stats_bench: a program, not a test. Measures GPU batch statistics (every N counted) at
// --at for each table configuration given, and checks a sample of the batches against the
// CPU. Prints one line per configuration:
//   k T S threads  kernel numbers/s (CUDA events)  end-to-end numbers/s  host-finished  check
//
// stats_bench [--at 2^40] [--numbers 2^36] [--batch 1024] [--sieve-bits 16,17,18]
//             [--tail-bits 24,28,32] [--threads 256,512] [--mode 0,1,2 (stride, refill, pairs)] [--launch 2^32]
//             [--check-batches 65536] [--repeat 1]
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
  std::vector<int> sieve_bits = {16}, tail_bits = {32}, threads = {512}, step_bits = {19}, modes = {0, 2};
  uint64_t check_batches = 65536;
  int repeat = 1;
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
  std::printf("%3s %3s %3s %5s %14s %14s %8s %s\n", "k", "T", "S", "thr", "kernel N/s", "end2end N/s", "host", "check");
  int failures = 0;
  for (int T : tail_bits) {
    for (int k : sieve_bits) {
      for (int S : step_bits) {
        for (int th : threads) {
         for (int mode : modes) {
          GpuStatsOptions o;
          o.refill = mode == 1;
          o.pairs = mode == 2;
          o.sieve_bits = k;
          o.tail_bits = T;
          o.step_bits = S;
          o.block_threads = th;
          o.launch_numbers = static_cast<uint64_t>(launch);
          std::unique_ptr<GpuStats> g;
          Status st = GpuStats::Create(o, &g);
          if (!st.ok()) {
            std::printf("%3d %3d %3d %5d  create failed: %s\n", k, T, S, th, st.ToString().c_str());
            continue;
          }
          for (int r = 0; r < repeat; ++r) {
            std::vector<BatchStats> out;
            GpuStatsTimings t;
            st = g->Compute(at, at + numbers, batch, &out, &t);
            if (!st.ok()) {
              std::printf("%3d %3d %3d %5d  compute failed: %s\n", k, T, S, th, st.ToString().c_str());
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
              std::mt19937_64 rng(k * 100 + T);
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
            std::printf("%3d %3d %3d %5d %14.4g %14.4g %8llu %s  [%s]\n", k, T, S, th, n / t.kernel_seconds,
                        n / t.total_seconds, static_cast<unsigned long long>(t.host_finished), check.c_str(),
                        g->Describe().c_str());
            std::fflush(stdout);
          }
         }
        }
      }
    }
  }
  return failures == 0 ? 0 : 1;
}
