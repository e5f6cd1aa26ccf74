#include "core/unit_search.h"

#include <algorithm>
#include <array>

namespace collatz {

Status SearchTables::FromSieve(std::shared_ptr<const Sieve> sieve, int step_bits, int tail_bits,
                               std::shared_ptr<const SearchTables>* out) {
  if (step_bits < 1 || step_bits > StepTable::kMaxBits) return Status::InvalidArgument("step bits must be in 1..20");
  if (tail_bits < step_bits || tail_bits > TailTable::kMaxBits) {
    return Status::InvalidArgument("tail bits must be in step bits..32");
  }
  auto t = std::make_shared<SearchTables>();
  t->sieve = std::move(sieve);
  t->delay_offsets = std::make_shared<OffsetTable>(t->sieve, 9);
  t->delay = std::make_shared<FastDelay>(std::make_shared<StepTable>(step_bits), std::make_shared<TailTable>(tail_bits));
  *out = std::move(t);
  return Status::Ok();
}

Status SearchTables::FromSieve(std::shared_ptr<const Sieve> sieve, std::shared_ptr<const FastDelay> delay,
                               std::shared_ptr<const SearchTables>* out, bool cpu_offsets) {
  if (sieve == nullptr || delay == nullptr) return Status::InvalidArgument("FromSieve: no sieve or no delay tables");
  auto t = std::make_shared<SearchTables>();
  t->sieve = std::move(sieve);
  if (cpu_offsets) t->delay_offsets = std::make_shared<OffsetTable>(t->sieve, 9);
  t->delay = std::move(delay);
  *out = std::move(t);
  return Status::Ok();
}

std::shared_ptr<const SearchTables> SearchTables::WithCpuOffsets(std::shared_ptr<const SearchTables> tables) {
  if (tables->delay_offsets != nullptr) return tables;
  auto with_offsets = std::make_shared<SearchTables>(*tables);
  with_offsets->delay_offsets = std::make_shared<OffsetTable>(with_offsets->sieve, 9);
  return with_offsets;
}

Status SearchTables::Build(int sieve_bits, int step_bits, int tail_bits, std::shared_ptr<const SearchTables>* out) {
  std::shared_ptr<const Sieve> sieve;
  Status st = Sieve::Generate(sieve_bits, &sieve);
  if (!st.ok()) return st;
  return FromSieve(std::move(sieve), step_bits, tail_bits, out);
}

namespace {

// Collects what a chunk reports, visiting computed N in ascending order.
class ChunkAccumulator {
 public:
  explicit ChunkAccumulator(const UnitSpec& spec)
      : floor_(spec.floor), running_max_(spec.floor), classes_(spec.kinds == Kinds::kDelayAndClass) {
    if (classes_) {
      is_hole_.assign(static_cast<size_t>(spec.floor) + 1, false);
      for (uint32_t d : spec.open_holes) is_hole_[d] = true;
    }
  }

  bool IsOpen(uint32_t d) const { return d > floor_ || (classes_ && is_hole_[d]); }

  void AddFinished(u128 n, uint32_t d) {
    if (!IsOpen(d)) return;
    ++result_.tally_count;
    result_.tally_sum += d;
    if (d > running_max_) {
      result_.ladder.push_back({n, d});
      running_max_ = d;
    }
    if (classes_) {
      if (d >= seen_class_.size()) seen_class_.resize(std::max<size_t>(d + 1, 2 * seen_class_.size()), false);
      if (!seen_class_[d]) {
        seen_class_[d] = true;
        result_.class_minima.push_back({n, d});
      }
    }
  }

  void AddCandidate(uint64_t v1_low) {
    ++result_.candidates;
    result_.work_hash += WorkHashTerm(v1_low);
  }

  // `count` candidates whose work-hash terms sum to `hash`, none of them open.
  void AddClosedCandidates(uint64_t count, uint64_t hash) {
    result_.candidates += count;
    result_.work_hash += hash;
  }

  UnitResult Finish() {
    std::sort(result_.class_minima.begin(), result_.class_minima.end(),
              [](const Record& a, const Record& b) { return a.delay < b.delay; });
    return std::move(result_);
  }

 private:
  uint32_t floor_;
  uint32_t running_max_;
  bool classes_;
  std::vector<bool> is_hole_;
  std::vector<bool> seen_class_;
  UnitResult result_;
};

// Walks a number that has reached v after s steps: true with its exact delay, or false
// when early termination proves its delay is not open.
inline bool Walk(const FastDelay& fast, const EarlyTermination& et, u128 v, uint32_t s, uint32_t* delay) {
  const StepTable& steps = fast.steps();
  const int bits = steps.bits();
  const uint64_t mask = steps.mask();
  const uint64_t* table = steps.packed().data();
  const u128 limit = fast.tail().limit();
  while (true) {
    if (et.CanStop(s, v)) return false;
    if (v < limit) {
      *delay = s + fast.tail()[static_cast<uint64_t>(v)];
      return true;
    }
    const uint64_t e = table[Lo64(v) & mask];
    const uint32_t p = static_cast<uint32_t>(e >> 32);
    u128 next;
    if (!MulAddChecked(v >> bits, kPow3[p], static_cast<uint32_t>(e), &next)) {
      *delay = s + WideDelay(v, &fast);
      return true;
    }
    v = next;
    s += static_cast<uint32_t>(bits) + p;
  }
}

// Walks a group of numbers interleaved: their step chains are independent, so the core
// overlaps one number's table load and multiply with another's. Results keep the group's
// (ascending) order, which the accumulator relies on.
class InterleavedWalker {
 public:
  static constexpr int kLanes = 16;
  static constexpr uint32_t kStopped = ~0u;

  InterleavedWalker(const FastDelay& fast, const EarlyTermination& et) : fast_(fast), et_(et) {}

  bool full() const { return count_ == kLanes; }
  bool empty() const { return count_ == 0; }

  // Adds N having reached v after s steps.
  void Add(u128 n, u128 v, uint32_t s) {
    n_[count_] = n;
    v_[count_] = v;
    s_[count_] = s;
    ++count_;
  }
  // Adds N whose delay is already known.
  void AddKnown(u128 n, uint32_t delay) {
    n_[count_] = n;
    v_[count_] = 1;
    s_[count_] = delay;  // v = 1 ends at once with tail[1] = 0 added
    ++count_;
  }

  // Finishes every number of the group and hands (n, delay) of the finished ones to `sink`, in order.
  // Not inlined: inside SearchRange the hot loop's code got worse as SearchRange grew
  // (delay+class units -8% when the entry stop was added; docs/PERFORMANCE.md).
  template <class Sink>
  [[gnu::noinline]] void Flush(Sink&& sink) {
    const StepTable& steps = fast_.steps();
    const int bits = steps.bits();
    const uint64_t mask = steps.mask();
    const uint64_t* table = steps.packed().data();
    const u128 limit = fast_.tail().limit();
    int active[kLanes];
    int n_active = 0;
    for (int g = 0; g < count_; ++g) active[n_active++] = g;
    while (n_active > 0) {
      int still = 0;
      for (int a = 0; a < n_active; ++a) {
        const int g = active[a];
        const u128 v = v_[g];
        const uint32_t s = s_[g];
        if (et_.CanStop(s, v)) {
          delay_[g] = kStopped;
          continue;
        }
        if (v < limit) {
          delay_[g] = s + fast_.tail()[static_cast<uint64_t>(v)];
          continue;
        }
        const uint64_t e = table[Lo64(v) & mask];
        const uint32_t p = static_cast<uint32_t>(e >> 32);
        u128 next;
        if (!MulAddChecked(v >> bits, kPow3[p], static_cast<uint32_t>(e), &next)) {
          delay_[g] = s + WideDelay(v, &fast_);
          continue;
        }
        v_[g] = next;
        s_[g] = s + static_cast<uint32_t>(bits) + p;
        active[still++] = g;
      }
      n_active = still;
    }
    for (int g = 0; g < count_; ++g) {
      if (delay_[g] != kStopped) sink(n_[g], delay_[g]);
    }
    count_ = 0;
  }

 private:
  const FastDelay& fast_;
  const EarlyTermination& et_;
  int count_ = 0;
  u128 n_[kLanes];
  u128 v_[kLanes];
  uint32_t s_[kLanes];
  uint32_t delay_[kLanes];
};

// v mod 81 after a T-step, by residue: (3v + 1) / 2 for odd v, v / 2 for even (1 / 2 = 41).
struct NextResidue81 {
  uint8_t next[2][81];
  constexpr NextResidue81() : next() {
    for (unsigned r = 0; r < 81; ++r) {
      next[0][r] = static_cast<uint8_t>(r * 41 % 81);
      next[1][r] = static_cast<uint8_t>((3 * r + 1) * 41 % 81);
    }
  }
};

// True if N can stop after one of its first k T-steps (v -> (3v + 1) / 2, two steps, or
// v / 2): below stop_below, or below the bound of the smaller ancestors that v's residue
// gives (core/ancestor_bounds.h). Then so can every smaller number of N's sieve entry and
// mod-9 variant, N - 9 2^k t: its value after j <= k T-steps is 3^a (N - 9 2^k t) / 2^j + b
// with the same a, b and step count (the residue fixes the parities), so it is smaller, with
// the same residue as far as 9 3^a 2^(k - j) t allows (below), and the delay-only stop test
// is a fixed threshold of the step count and that residue. False for N >= 2^(128 - k), whose
// values might leave 128 bits (a T-step at most doubles v).
inline bool StopsWithinFirstSteps(const EarlyTermination& et, u128 v, int k) {
  if ((v >> (128 - k)) != 0) return false;
  static constexpr NextResidue81 kNext;
  unsigned r81 = static_cast<unsigned>(v % 81);
  uint32_t s = 0;
  for (int j = 0; j < k; ++j) {
    // Without a branch (the parities look random): odd v -> v + (v - 1) / 2 + 1 = (3v + 1) / 2.
    const uint64_t odd = Lo64(v) & 1;
    v = (v >> 1) + ((v + 1) & -static_cast<u128>(odd));
    s += 1 + static_cast<uint32_t>(odd);
    r81 = kNext.next[odd][r81];
    // The entry's numbers differ by multiples of 9 3^a 2^(k - j - 1) (a = s - j - 1 odd
    // steps): they share v's value class, from 2 odd steps on v mod 81, and their parity
    // but after the last step (the GPU's EntryStops decides alike).
    const uint32_t odd_steps = s - static_cast<uint32_t>(j + 1);
    const bool stops = odd_steps >= 2 && j + 1 < k
                           ? et.CanStopByAncestors(s, v, r81 + ((r81 ^ static_cast<unsigned>(Lo64(v))) & 1) * 81)
                           : et.CanStopInClass(s, v, ValueClassOfResidue9(r81 % 9));
    if (stops) return true;
  }
  return false;
}

// The entry stop over the whole blocks [h_lo, h_hi] of a delay-only range (the GPU's
// EntryStops, docs/PERFORMANCE.md lever 48): per mod-9 class of h, the entries of that
// variant whose largest number in the range stops within its first k T-steps are added
// as candidates in closed form (their values after k steps, 3^p h + c over h = h0, h0 + 9,
// ..., form an arithmetic progression); live[h % 9] receives the others, ascending. Once a
// chunk, so out of line (see Flush).
[[gnu::noinline]] void SplitEntries(const SearchTables& tables, const EarlyTermination& et, u128 h_lo, u128 h_hi,
                  ChunkAccumulator* acc, std::array<std::vector<uint32_t>, 9>* live, uint64_t* stopped) {
  const Sieve& sieve = *tables.sieve;
  const int k = sieve.bits();
  const auto& residues = sieve.residues();
  const auto& cs = sieve.c();
  const auto& ps = sieve.p();
  for (unsigned variant = 0; variant < 9; ++variant) {
    std::vector<uint32_t>& out = (*live)[variant];
    out.clear();
    const u128 h0 = h_lo + (variant + 9 - static_cast<unsigned>(h_lo % 9)) % 9;
    if (h0 > h_hi) continue;
    const u128 count128 = (h_hi - h0) / 9 + 1;
    const uint64_t count = static_cast<uint64_t>(count128);  // < 2^62 (the caller's bound)
    const u128 h_max = h0 + 9 * (count128 - 1);
    const uint64_t h0_low = Lo64(h0);
    for (uint32_t j : tables.delay_offsets->Variant(variant)) {
      if (StopsWithinFirstSteps(et, (h_max << k) + residues[j], k)) {
        const uint64_t m = kPow3[ps[j]];
        acc->AddClosedCandidates(count, WorkHashProgression(m * h0_low + cs[j], 9 * m, count));
        *stopped += count;
      } else {
        out.push_back(j);
      }
    }
  }
}

}  // namespace

UnitResult SearchRange(const SearchTables& tables, const UnitSpec& spec, const EarlyTermination& et, u128 from,
                       u128 to, std::atomic<uint64_t>* progress, const std::atomic<bool>* cancel,
                       SearchRangeStats* stats, uint64_t entry_stop_min_blocks) {
  ChunkAccumulator acc(spec);
  const Sieve& sieve = *tables.sieve;
  const FastDelay& fast = *tables.delay;
  const int k = sieve.bits();
  const u128 block = Pow2(static_cast<unsigned>(k));
  const bool classes = spec.kinds == Kinds::kDelayAndClass;
  if (from < 1) from = 1;

  // The first block [1, 2^k) is computed without the join sieve (SPEC 2, rule 3).
  const u128 first_end = std::min(to, block);
  for (u128 n = from | 1; n < first_end; n += 2) {
    if (!OddNumberIsComputed(static_cast<unsigned>(n % 9), spec.kinds, 9)) continue;
    acc.AddCandidate(Lo64(n));
    uint32_t d;
    if (Walk(fast, et, n, 0, &d)) acc.AddFinished(n, d);
  }
  if (progress != nullptr && first_end > from) progress->fetch_add(static_cast<uint64_t>(first_end - from));

  const u128 start = std::max(from, block);
  if (start < to) {
    const auto& residues = sieve.residues();
    const auto& cs = sieve.c();
    const auto& ps = sieve.p();
    const u128 h_first = start >> k, h_last = (to - 1) >> k;
    InterleavedWalker walker(fast, et);
    auto sink = [&acc](u128 n, uint32_t d) { acc.AddFinished(n, d); };
    std::vector<uint32_t> all;
    if (classes) {
      all.resize(residues.size());
      for (size_t j = 0; j < all.size(); ++j) all[j] = static_cast<uint32_t>(j);
    }
    // The whole blocks [full_lo, full_hi] walk only the entries that do not entry-stop, in
    // delay-only units with early termination (where a stopped number is never open; the
    // class test is not monotone in v). The edge blocks go through every entry.
    const u128 full_lo = (start & (block - 1)) == 0 ? h_first : h_first + 1;
    const u128 full_hi = (to & (block - 1)) == 0 ? h_last : h_last - 1;
    // (WorkHashProgression needs fewer than 2^62 terms: far more blocks than any chunk holds.)
    const bool entry_stop = !classes && et.enabled() && full_lo <= full_hi && full_hi - full_lo < Pow2(62) &&
                            full_hi - full_lo + 1 >= entry_stop_min_blocks;
    std::array<std::vector<uint32_t>, 9> live;
    uint64_t entry_stopped = 0;
    if (entry_stop) SplitEntries(tables, et, full_lo, full_hi, &acc, &live, &entry_stopped);
    if (stats != nullptr) stats->entry_stopped += entry_stopped;
    for (u128 h = h_first; h <= h_last; ++h) {
      if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) break;
      const u128 base = h << k;
      const u128 lo = std::max(start, base);
      const uint64_t lo_res = static_cast<uint64_t>(lo - base);
      const uint64_t hi_res = (to - base < block) ? static_cast<uint64_t>(to - base) : static_cast<uint64_t>(block);
      const unsigned h_mod9 = static_cast<unsigned>(h % 9);
      const std::vector<uint32_t>& variant = classes                                     ? all
                                             : entry_stop && h >= full_lo && h <= full_hi ? live[h_mod9]
                                                                                           : tables.delay_offsets->Variant(h_mod9);
      auto it = variant.begin();
      if (lo_res > 0) {
        it = std::lower_bound(variant.begin(), variant.end(), lo_res,
                              [&](uint32_t j, uint64_t r) { return residues[j] < r; });
      }
      const uint64_t h_low = Lo64(h);
      for (; it != variant.end(); ++it) {
        const uint32_t j = *it;
        const uint64_t r = residues[j];
        if (r >= hi_res) break;
        const uint32_t p = ps[j];
        const uint64_t m = kPow3[p];
        acc.AddCandidate(m * h_low + cs[j]);  // low 64 bits of 3^p h + c
        const u128 n = base + r;
        u128 v1;
        if (MulAddChecked(h, m, cs[j], &v1)) {
          walker.Add(n, v1, static_cast<uint32_t>(k) + p);
        } else {
          // The first jump itself leaves 128 bits: finish exactly from N (no early stop needed).
          walker.AddKnown(n, fast.Delay(n));
        }
        if (walker.full()) walker.Flush(sink);
      }
      walker.Flush(sink);
      if (progress != nullptr) progress->fetch_add(static_cast<uint64_t>(hi_res - lo_res));
    }
  }
  return acc.Finish();
}

UnitResult SearchRangeSimple(const SearchTables& tables, const UnitSpec& spec, u128 from, u128 to) {
  ChunkAccumulator acc(spec);
  const Sieve& sieve = *tables.sieve;
  const int k = sieve.bits();
  const u128 block = Pow2(static_cast<unsigned>(k));
  for (u128 n = std::max<u128>(from, 1) | 1; n < to; n += 2) {
    if (!IsExamined(sieve, spec.kinds, n)) continue;
    uint64_t v1_low = Lo64(n);
    if (n >= block) {
      const uint64_t i = static_cast<uint64_t>(n & (block - 1));
      uint32_t p;
      uint64_t c;
      TStepsOfResidue(i, k, &p, &c);
      v1_low = kPow3[p] * Lo64(n >> k) + c;
    }
    acc.AddCandidate(v1_low);
    acc.AddFinished(n, tables.delay->Delay(n));
  }
  return acc.Finish();
}

}  // namespace collatz
