#include "sieve_gen/generator.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "sieve_gen/lift.h"
#include "sieve_gen/partitioned_store.h"
#include "core/thread_count.h"

namespace collatz::sievegen {
namespace {

using Clock = std::chrono::steady_clock;
using LiftStore = PartitionedStore<LiftRecord>;
using ResidueStore = PartitionedStore<uint64_t>;

constexpr size_t kLocalBatch = 2048;        // records a thread collects per partition before appending
constexpr int kMaxPartitionBits = 12;       // 4096 partitions
constexpr uint64_t kInMemoryPartitionRecords = uint64_t{4} << 20;  // keep in-RAM parts cache-friendly
constexpr double kImbalance = 1.25;         // slack for uneven hash partitions
constexpr double kSubBucketRecords = 8192;  // 128 KiB: a sub-bucket is grouped inside L2
// Grouping a partition holds it twice (the partition and its sub-bucket scatter) plus
// 2 bytes a record of bucket ids.
constexpr double kGroupingCopies = 2.2;

int CeilLog2(double x) {
  int b = 0;
  while (b < 62 && static_cast<double>(uint64_t{1} << b) < x) ++b;
  return b;
}

int ThreadCount(const GeneratorOptions& o) {
  return std::min(ResolveThreadCount(o.threads), 64);
}

// How a store of `records` records of `record_bytes` is laid out.
struct StorePlan {
  bool external = false;
  int partition_bits = 0;
};

// Partitions so that `threads` partitions in flight fit in half the budget, at least one
// partition per thread once levels are big enough to be worth splitting.
int PartitionBitsFor(uint64_t records, size_t record_bytes, int threads, uint64_t memory_bytes, bool external) {
  const double bytes = static_cast<double>(records) * record_bytes;
  int bits = CeilLog2(bytes * threads * kImbalance * kGroupingCopies / std::max<double>(1.0, memory_bytes / 2.0));
  bits = std::max(bits, CeilLog2(static_cast<double>(records) / kInMemoryPartitionRecords));
  if (records >= 64 * 1024) bits = std::max(bits, CeilLog2(2.0 * threads));
  if (external) {
    // Each (partition, writer) fills one block, each writer has more in flight: at most a quarter of the budget.
    const double per_partition = static_cast<double>(threads) * kExternalBlockBytes;
    const double in_flight = static_cast<double>(threads) * kExternalWriterBuffers * kExternalBlockBytes;
    int cap = 0;
    while (cap < kMaxPartitionBits && (uint64_t{2} << cap) * per_partition + in_flight <= memory_bytes / 4.0) ++cap;
    bits = std::min(bits, std::max(cap, 1));
  }
  return std::min(bits, kMaxPartitionBits);
}

int PartitionBitsFor(uint64_t records, size_t record_bytes, int threads, const GeneratorOptions& o, bool external) {
  return std::max(o.min_partition_bits, PartitionBitsFor(records, record_bytes, threads, o.memory_bytes, external));
}

// Level k+1 (lifts of level k) goes to RAM when, with the level being read, it fits the budget.
StorePlan PlanLiftStore(uint64_t max_records, uint64_t input_ram_bytes, uint64_t input_partition_bytes,
                        int threads, const GeneratorOptions& o) {
  StorePlan plan;
  const double need = static_cast<double>(input_ram_bytes) + static_cast<double>(max_records) * sizeof(LiftRecord) +
                      static_cast<double>(threads) * input_partition_bytes * kImbalance * kGroupingCopies;
  plan.external = o.force_external || need > static_cast<double>(o.memory_bytes);
  plan.partition_bits = PartitionBitsFor(max_records, sizeof(LiftRecord), threads, o, plan.external);
  return plan;
}

StorePlan PlanResidueStore(uint64_t max_records, uint64_t input_ram_bytes, uint64_t input_partition_bytes,
                           int threads, const GeneratorOptions& o) {
  StorePlan plan;
  const double need = static_cast<double>(input_ram_bytes) + static_cast<double>(max_records) * sizeof(uint64_t) +
                      static_cast<double>(threads) * input_partition_bytes * kImbalance * kGroupingCopies;
  plan.external = o.force_external || need > static_cast<double>(o.memory_bytes);
  plan.partition_bits = std::min(o.bits, PartitionBitsFor(max_records, sizeof(uint64_t), threads, o, plan.external));
  return plan;
}

template <typename Rec>
std::unique_ptr<PartitionedStore<Rec>> MakeStore(const StorePlan& plan, int writers) {
  const int parts = 1 << plan.partition_bits;
  return plan.external ? MakeExternalStore<Rec>(parts, writers) : MakeMemoryStore<Rec>(parts, writers);
}

uint64_t MaxPartitionSize(const LiftStore& s) {
  uint64_t m = 0;
  for (int i = 0; i < s.partitions(); ++i) m = std::max(m, s.PartitionSize(i));
  return m;
}

// A thread's pending appends, one small batch per output partition.
template <typename Rec>
class LocalBatches {
 public:
  LocalBatches(PartitionedStore<Rec>* store, int writer)
      : store_(store), writer_(writer), batches_(store ? store->partitions() : 0) {}
  void Add(uint32_t partition, const Rec& r) {
    auto& b = batches_[partition];
    if (b.capacity() == 0) b.reserve(kLocalBatch);
    b.push_back(r);
    if (b.size() == kLocalBatch) {
      store_->Append(writer_, static_cast<int>(partition), b.data(), b.size());
      b.clear();
    }
  }
  void Flush() {
    for (size_t i = 0; i < batches_.size(); ++i) {
      if (!batches_[i].empty()) store_->Append(writer_, static_cast<int>(i), batches_[i].data(), batches_[i].size());
      std::vector<Rec>().swap(batches_[i]);
    }
  }

 private:
  PartitionedStore<Rec>* store_;
  int writer_;
  std::vector<std::vector<Rec>> batches_;
};

struct SharedState {
  std::atomic<int> next_partition{0};
  std::atomic<uint64_t> records_done{0};
  std::atomic<uint64_t> survivors{0};
  std::atomic<uint64_t> odd_survivors{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  Status error;

  void Fail(const Status& s) {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (!failed.exchange(true)) error = s;
  }
};

// Marks dead[i] for every record of records[0, m) that is not the smallest residue of its
// (p, c) group, with an open-addressing table on hash bits that neither the partition
// (top bits) nor the sub-bucket (low bits) used. Groups have at most two members.
void KeepSmallestOfEachGroup(const LiftRecord* records, size_t m, std::vector<uint32_t>* table,
                             std::vector<uint8_t>* dead) {
  constexpr uint32_t kEmpty = 0xFFFFFFFFu;
  size_t cap = 16;
  while (cap < 2 * m) cap <<= 1;
  table->assign(cap, kEmpty);
  dead->assign(m, 0);
  uint32_t* t = table->data();
  const size_t mask = cap - 1;
  for (size_t i = 0; i < m; ++i) {
    const LiftRecord& r = records[i];
    size_t slot = (GroupHash(r) >> 16) & mask;
    for (;;) {
      const uint32_t j = t[slot];
      if (j == kEmpty) {
        t[slot] = static_cast<uint32_t>(i);
        break;
      }
      if (records[j].SameGroup(r)) {
        if (r.residue() < records[j].residue()) {
          (*dead)[j] = 1;
          t[slot] = static_cast<uint32_t>(i);
        } else {
          (*dead)[i] = 1;
        }
        break;
      }
      slot = (slot + 1) & mask;
    }
  }
}

// Groups every partition of level `level` by (p, c), keeps the smallest residue of each
// group and sends its lifts to `next` (or, at the last level, the residue to `final`).
void GroupWorker(int writer, int level, LiftStore* in, LiftStore* next, ResidueStore* final, int final_shift,
                 bool include_even, const uint64_t* pow3, SharedState* st) {
  try {
    LocalBatches<LiftRecord> lifts(next, writer);
    LocalBatches<uint64_t> residues(final, writer);
    std::vector<LiftRecord> part, scratch;
    std::vector<uint16_t> bucket_of;
    std::vector<size_t> bucket_start;
    std::vector<uint32_t> table;
    std::vector<uint8_t> dead;
    const int next_bits = next ? CeilLog2(next->partitions()) : 0;
    uint64_t survivors = 0, odd = 0;
    for (;;) {
      if (st->failed.load()) return;
      const int j = st->next_partition.fetch_add(1);
      if (j >= in->partitions()) break;
      Status s = in->TakePartition(j, &part);
      if (!s.ok()) return st->Fail(s);
      // Scatter into cache-sized sub-buckets by the low hash bits (a group never spans
      // two), then group each sub-bucket in a small hash table that stays in cache.
      const size_t n = part.size();
      const int sub_bits = std::min(16, CeilLog2(static_cast<double>(n) / kSubBucketRecords));
      std::vector<LiftRecord>* bucketed = &part;
      bucket_start.assign((size_t{1} << sub_bits) + 1, 0);
      if (sub_bits > 0) {
        bucket_of.resize(n);
        for (size_t i = 0; i < n; ++i) {
          bucket_of[i] = static_cast<uint16_t>(GroupSubBucket(part[i], sub_bits));
          ++bucket_start[bucket_of[i] + 1];
        }
        for (size_t b = 1; b < bucket_start.size(); ++b) bucket_start[b] += bucket_start[b - 1];
        scratch.resize(n);
        std::vector<size_t> fill(bucket_start.begin(), bucket_start.end() - 1);
        for (size_t i = 0; i < n; ++i) scratch[fill[bucket_of[i]]++] = part[i];
        bucketed = &scratch;
      } else {
        bucket_start[1] = n;
      }
      for (size_t b = 0; b + 1 < bucket_start.size(); ++b) {
        const LiftRecord* first = bucketed->data() + bucket_start[b];
        const size_t m = bucket_start[b + 1] - bucket_start[b];
        KeepSmallestOfEachGroup(first, m, &table, &dead);
        for (size_t i = 0; i < m; ++i) {
          if (dead[i]) continue;  // not the smallest of its group
          const LiftRecord& r = first[i];
          ++survivors;
          const bool is_odd = (r.residue() & 1) != 0;
          odd += is_odd;
          if (next != nullptr) {
            LiftRecord kids[2];
            LiftChildren(r, level, pow3, kids);
            lifts.Add(GroupPartition(kids[0], next_bits), kids[0]);
            lifts.Add(GroupPartition(kids[1], next_bits), kids[1]);
          } else if (is_odd || include_even) {
            residues.Add(static_cast<uint32_t>(r.residue() >> final_shift), r.residue());
          }
        }
      }
      st->records_done.fetch_add(part.size());
    }
    std::vector<LiftRecord>().swap(part);
    std::vector<LiftRecord>().swap(scratch);
    if (next) lifts.Flush();
    if (final) residues.Flush();
    st->survivors.fetch_add(survivors);
    st->odd_survivors.fetch_add(odd);
  } catch (const std::exception& e) {
    st->Fail(Status::IOError(std::string("level ") + std::to_string(level) + ": " + e.what()));
  }
}

// Expected lifts per level (2 * survivors of the level below), for the progress estimate.
double ExpectedLifts(int k) { return k <= 1 ? 2.0 : 2.0 * EstimatedSurvivors(k - 1); }

}  // namespace

double EstimatedSurvivors(int k) {
  // SPEC section 2: fraction 0.2355 at k = 20, falling about 4.8% a level (0.192 at 24, 0.131 at 32).
  // Below 20 the fraction is higher (0.375 at 12); 1.15 covers it up to there.
  const double fraction = std::min(1.0, 0.2355 * std::pow(0.952, k - 20) * (k < 20 ? 1.15 : 1.02));
  return std::ldexp(fraction, k);
}

ResourceEstimate EstimateResources(const GeneratorOptions& o) {
  ResourceEstimate e;
  const int threads = ThreadCount(o);
  uint64_t input_ram = 0, input_disk = 0, input_part = 0;
  uint64_t peak_ram = 0, peak_disk = 0;
  for (int k = 1; k <= o.bits; ++k) {
    const bool last = k == o.bits;
    const uint64_t lifts = static_cast<uint64_t>(ExpectedLifts(k) * 1.05);
    // Plans are made on the same upper bound the run uses (survivors <= lifts); disk on
    // what is expected (5% margin): the last level's odd survivors, or the next level's lifts.
    const uint64_t bound_records = last ? lifts : 2 * lifts;
    StorePlan plan = last ? PlanResidueStore(bound_records, input_ram, input_part, threads, o)
                          : PlanLiftStore(bound_records, input_ram, input_part, threads, o);
    const uint64_t bound_bytes = bound_records * (last ? sizeof(uint64_t) : sizeof(LiftRecord));
    const uint64_t expected_bytes =
        last ? static_cast<uint64_t>(0.6 * EstimatedSurvivors(k)) * sizeof(uint64_t)
             : static_cast<uint64_t>(ExpectedLifts(k + 1) * 1.05) * sizeof(LiftRecord);
    const uint64_t partitions = uint64_t{1} << plan.partition_bits;
    uint64_t ram = input_ram + static_cast<uint64_t>(threads * input_part * kGroupingCopies) +
                   (plan.external ? 0 : bound_bytes);
    // Input partitions are freed as they are grouped while the output grows, so the two
    // together stay near the larger of them; plus partly filled blocks and partitions in flight.
    uint64_t disk = std::max(input_disk, plan.external ? expected_bytes : 0) + (input_disk ? threads * input_part : 0);
    if (plan.external) {
      e.external = true;
      ram += partitions * threads * (kExternalBlockBytes + kLocalBatch * sizeof(LiftRecord)) +
             threads * kExternalWriterBuffers * kExternalBlockBytes;
      disk += partitions * threads * kExternalBlockBytes;
    }
    peak_ram = std::max(peak_ram, ram);
    peak_disk = std::max(peak_disk, disk);
    input_ram = plan.external ? 0 : expected_bytes;
    input_disk = plan.external ? expected_bytes : 0;
    input_part = expected_bytes / partitions;
  }
  const double odd = 0.56 * EstimatedSurvivors(o.bits);
  e.output_bytes = 64 + static_cast<uint64_t>(odd) * (o.bits <= 32 ? 4 : 8);
  e.peak_disk_bytes = peak_disk;
  e.peak_memory_bytes = peak_ram;
  return e;
}

Status GenerateSieve(const GeneratorOptions& o, const ResidueSink& sink, GeneratorStats* stats,
                     const ProgressFn& progress) {
  if (o.bits < 1 || o.bits > 40) return Status::InvalidArgument("--bits must be in [1, 40]");
  const int threads = ThreadCount(o);
  *stats = GeneratorStats();
  stats->threads = threads;
  uint64_t pow3[64];
  for (unsigned p = 0; p < 41; ++p) pow3[p] = Pow3(p);

  double expected_total = 0;
  for (int k = 1; k <= o.bits; ++k) expected_total += ExpectedLifts(k);
  const auto start = Clock::now();
  uint64_t done_before = 0;

  // Level 1: the lifts of the single level-0 residue 0 (p = 0, c = 0).
  std::unique_ptr<LiftStore> level = MakeMemoryStore<LiftRecord>(1, 1);
  {
    LiftRecord kids[2];
    LiftChildren(LiftRecord::Make(0, 0, 0), 0, pow3, kids);
    level->Append(0, 0, kids, 2);
  }

  for (int k = 1; k <= o.bits; ++k) {
    const bool last = k == o.bits;
    const uint64_t records = level->TotalSize();
    stats->largest_level_records = std::max(stats->largest_level_records, records);
    const uint64_t input_ram = level->external() ? 0 : records * sizeof(LiftRecord);
    const uint64_t input_part = MaxPartitionSize(*level) * sizeof(LiftRecord);

    std::unique_ptr<LiftStore> next;
    std::unique_ptr<ResidueStore> final;
    StorePlan plan;
    if (!last) {
      // Survivors never outnumber lifts, so level k+1 has at most 2 * records lifts.
      plan = PlanLiftStore(2 * records, input_ram, input_part, threads, o);
    } else {
      plan = PlanResidueStore(records, input_ram, input_part, threads, o);
    }
    if (plan.external) {
      Status s = ConfigureExternalMemory(o.tmpdir);
      if (!s.ok()) return s;
      ++stats->external_levels;
    }
    stats->max_partitions = std::max(stats->max_partitions, 1 << plan.partition_bits);
    try {
      if (!last) {
        next = MakeStore<LiftRecord>(plan, threads);
      } else {
        final = MakeStore<uint64_t>(plan, threads);
      }
    } catch (const std::exception& e) {
      return Status::IOError(std::string("cannot create level store: ") + e.what());
    }
    const int final_shift = o.bits - plan.partition_bits;

    SharedState st;
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back(GroupWorker, t, k, level.get(), next.get(), final.get(), final_shift, o.include_even, pow3,
                        &st);
    }
    if (progress) {
      // Report about once a second until the workers are done.
      std::atomic<bool> finished{false};
      std::thread joiner([&] {
        for (auto& th : pool) th.join();
        finished = true;
      });
      auto last_report = Clock::now();
      while (!finished.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (Clock::now() - last_report >= std::chrono::seconds(1)) {
          last_report = Clock::now();
          Progress p;
          p.level = k;
          p.bits = o.bits;
          p.records_done = done_before + st.records_done.load();
          p.records_expected = static_cast<uint64_t>(expected_total);
          p.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
          progress(p);
        }
      }
      joiner.join();
    } else {
      for (auto& th : pool) th.join();
    }
    if (st.failed.load()) return st.error;
    done_before += st.records_done.load();
    level.reset();  // frees the level just grouped (RAM or disk)
    try {
      Status s = last ? final->FinishWriting() : next->FinishWriting();
      if (!s.ok()) return s;
    } catch (const std::exception& e) {
      return Status::IOError(std::string("level ") + std::to_string(k + 1) + ": " + e.what());
    }
    if (last) {
      stats->survivors = st.survivors.load();
      stats->odd_survivors = st.odd_survivors.load();
    } else {
      level = std::move(next);
    }
    if (progress) {
      Progress p;
      p.level = k;
      p.bits = o.bits;
      p.records_done = done_before;
      // Re-scale the remaining estimate by how far this level was from its estimate.
      const double scale = ExpectedLifts(k) > 0 ? static_cast<double>(records) / ExpectedLifts(k) : 1.0;
      double remaining = 0;
      for (int j = k + 1; j <= o.bits; ++j) remaining += ExpectedLifts(j) * scale;
      p.records_expected = done_before + static_cast<uint64_t>(remaining);
      expected_total = static_cast<double>(p.records_expected);
      p.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
      progress(p);
    }

    if (last) {
      // Range partitions in order; each sorted in memory, `threads` at a time.
      const int parts = final->partitions();
      for (int base = 0; base < parts; base += threads) {
        const int n = std::min(threads, parts - base);
        std::vector<std::vector<uint64_t>> sorted(n);
        std::vector<Status> status(n);
        std::vector<std::thread> sorters;
        for (int t = 0; t < n; ++t) {
          sorters.emplace_back([&, t] {
            try {
              status[t] = final->TakePartition(base + t, &sorted[t]);
              std::sort(sorted[t].begin(), sorted[t].end());
            } catch (const std::exception& e) {
              status[t] = Status::IOError(std::string("final residues: ") + e.what());
            }
          });
        }
        for (auto& th : sorters) th.join();
        for (int t = 0; t < n; ++t) {
          if (!status[t].ok()) return status[t];
          if (!sorted[t].empty()) {
            Status s = sink(sorted[t].data(), sorted[t].size());
            if (!s.ok()) return s;
          }
        }
      }
    }
  }
  stats->peak_external_bytes = ExternalPeakBytes();
  ExternalIoVolume(&stats->external_read_bytes, &stats->external_written_bytes);
  return Status::Ok();
}

}  // namespace collatz::sievegen
