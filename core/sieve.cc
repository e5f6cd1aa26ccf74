#include "core/sieve.h"

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <thread>
#include <utility>

#include "core/step_table.h"
#include "core/thread_count.h"
#include "core/u128.h"

namespace collatz {

namespace {

// One residue of a level with its (p, c): N = 2^level h + residue -> 3^p h + c.
struct LevelEntry {
  uint64_t c;
  uint64_t residue;
};

// Keeps, in each bucket (one per p), the smallest residue of every c; buckets are
// independent, so they are sorted on several threads.
void KeepSmallestPerGroup(std::vector<std::vector<LevelEntry>>* buckets, int threads) {
  std::vector<size_t> order(buckets->size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // Largest buckets first for balance.
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return (*buckets)[a].size() > (*buckets)[b].size(); });
  std::atomic<size_t> next{0};
  auto work = [&]() {
    for (size_t k; (k = next.fetch_add(1)) < order.size();) {
      auto& v = (*buckets)[order[k]];
      std::sort(v.begin(), v.end(), [](const LevelEntry& a, const LevelEntry& b) {
        return a.c != b.c ? a.c < b.c : a.residue < b.residue;
      });
      auto last = std::unique(v.begin(), v.end(), [](const LevelEntry& a, const LevelEntry& b) { return a.c == b.c; });
      v.erase(last, v.end());
      v.shrink_to_fit();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
}

}  // namespace

Status Sieve::Generate(int bits, std::shared_ptr<const Sieve>* out, int threads) {
  if (bits < kMinSieveBits || bits > kMaxSieveBits) {
    return Status::InvalidArgument("sieve bits must be in 1.." + std::to_string(kMaxSieveBits));
  }
  threads = ResolveThreadCount(threads);
  // Level 1: 2h -> h (p=0, c=0); 2h+1 -> 3h+2 (p=1, c=2). Both survive.
  std::vector<std::vector<LevelEntry>> level(bits + 1);
  level[0].push_back({0, 0});
  level[1].push_back({2, 1});
  for (int j = 1; j < bits; ++j) {
    // Lifts s + b 2^j of every survivor s: after j steps 2 3^p h + (3^p b + c), then one more T-step.
    std::vector<std::vector<LevelEntry>> next(bits + 1);
    for (int p = 0; p <= j; ++p) {
      for (const LevelEntry& e : level[p]) {
        for (uint64_t b = 0; b < 2; ++b) {
          const u128 x = static_cast<u128>(kPow3[p]) * b + e.c;
          const uint64_t residue = e.residue + (b << j);
          if ((x & 1) == 0) {
            next[p].push_back({static_cast<uint64_t>(x / 2), residue});
          } else {
            next[p + 1].push_back({static_cast<uint64_t>((3 * x + 1) / 2), residue});
          }
        }
      }
      std::vector<LevelEntry>().swap(level[p]);
    }
    KeepSmallestPerGroup(&next, threads);
    level.swap(next);
  }
  // Collect the odd survivors, ascending.
  std::vector<std::pair<uint64_t, std::pair<uint64_t, uint8_t>>> odd;
  for (int p = 0; p <= bits; ++p) {
    for (const LevelEntry& e : level[p]) {
      if (e.residue & 1) odd.push_back({e.residue, {e.c, static_cast<uint8_t>(p)}});
    }
  }
  std::sort(odd.begin(), odd.end());
  auto sieve = std::shared_ptr<Sieve>(new Sieve());
  sieve->bits_ = bits;
  sieve->residues_.reserve(odd.size());
  sieve->c_.reserve(odd.size());
  sieve->p_.reserve(odd.size());
  for (const auto& [r, pc] : odd) {
    sieve->residues_.push_back(r);
    sieve->c_.push_back(pc.first);
    sieve->p_.push_back(pc.second);
  }
  *out = std::move(sieve);
  return Status::Ok();
}

Status Sieve::FromResidues(int bits, std::vector<uint64_t> residues, std::shared_ptr<const Sieve>* out) {
  if (bits < kMinSieveBits || bits > kMaxSieveBits) {
    return Status::InvalidArgument("sieve bits must be in 1.." + std::to_string(kMaxSieveBits));
  }
  const u128 limit = Pow2(static_cast<unsigned>(bits));
  for (size_t j = 0; j < residues.size(); ++j) {
    const uint64_t r = residues[j];
    if ((r & 1) == 0) return Status::Corruption("sieve residue " + std::to_string(r) + " is even");
    if (r >= limit) return Status::Corruption("sieve residue " + std::to_string(r) + " is not below 2^" + std::to_string(bits));
    if (j > 0 && r <= residues[j - 1]) return Status::Corruption("sieve residues are not strictly ascending at index " + std::to_string(j));
  }
  auto sieve = std::shared_ptr<Sieve>(new Sieve());
  sieve->bits_ = bits;
  sieve->c_.resize(residues.size());
  sieve->p_.resize(residues.size());
  for (size_t j = 0; j < residues.size(); ++j) {
    uint32_t p;
    TStepsOfResidue(residues[j], bits, &p, &sieve->c_[j]);
    sieve->p_[j] = static_cast<uint8_t>(p);
  }
  sieve->residues_ = std::move(residues);
  *out = std::move(sieve);
  return Status::Ok();
}

std::vector<uint64_t> DirectSieveSurvivors(int bits) {
  if (bits < 1 || bits > 26) throw std::invalid_argument("direct sieve is for bits 1..26");
  struct Item {
    uint32_t p;
    uint64_t c;
    uint64_t i;
  };
  const uint64_t size = uint64_t{1} << bits;
  std::vector<Item> items(size);
  for (uint64_t i = 0; i < size; ++i) {
    items[i].i = i;
    TStepsOfResidue(i, bits, &items[i].p, &items[i].c);
  }
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    if (a.p != b.p) return a.p < b.p;
    if (a.c != b.c) return a.c < b.c;
    return a.i < b.i;
  });
  std::vector<uint64_t> survivors;
  for (size_t j = 0; j < items.size(); ++j) {
    if (j == 0 || items[j].p != items[j - 1].p || items[j].c != items[j - 1].c) survivors.push_back(items[j].i);
  }
  std::sort(survivors.begin(), survivors.end());
  return survivors;
}

bool OddNumberIsComputed(unsigned n_mod9, Kinds kinds, unsigned modulus) {
  if (kinds == Kinds::kDelayAndClass) return true;
  if (modulus == 9) return !DelayOnlySkipsMod9(n_mod9);
  if (modulus == 3) return !DelayOnlySkipsMod3(n_mod9 % 3);
  return true;
}

bool IsExamined(const Sieve& sieve, Kinds kinds, u128 n) {
  if ((n & 1) == 0) return false;
  if (!OddNumberIsComputed(static_cast<unsigned>(n % 9), kinds, 9)) return false;
  const u128 block = Pow2(static_cast<unsigned>(sieve.bits()));
  if (n < block) return true;  // the first block is computed without the sieve
  const uint64_t residue = static_cast<uint64_t>(n & (block - 1));
  return std::binary_search(sieve.residues().begin(), sieve.residues().end(), residue);
}

OffsetTable::OffsetTable(std::shared_ptr<const Sieve> sieve, unsigned modulus)
    : sieve_(std::move(sieve)), modulus_(modulus) {
  if (modulus != 1 && modulus != 3 && modulus != 9) throw std::invalid_argument("offset table modulus must be 1, 3 or 9");
  const unsigned block_mod = static_cast<unsigned>((Pow2(static_cast<unsigned>(sieve_->bits())) % modulus));
  variants_.resize(modulus);
  const auto& residues = sieve_->residues();
  for (unsigned h = 0; h < modulus; ++h) {
    auto& v = variants_[h];
    for (size_t j = 0; j < residues.size(); ++j) {
      const unsigned n_mod = (block_mod * h + static_cast<unsigned>(residues[j] % modulus)) % modulus;
      bool keep = true;
      if (modulus == 9) keep = !DelayOnlySkipsMod9(n_mod);
      if (modulus == 3) keep = !DelayOnlySkipsMod3(n_mod);
      if (keep) v.push_back(static_cast<uint32_t>(j));
    }
  }
}

}  // namespace collatz
