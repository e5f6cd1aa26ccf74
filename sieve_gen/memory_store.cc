// The in-RAM PartitionedStore: one std::vector per (partition, writer).
#include <algorithm>
#include <memory>
#include <utility>

#include "sieve_gen/lift.h"
#include "sieve_gen/sub_list_store.h"

namespace collatz::sievegen {
namespace {

// Each (partition, writer) sub-list grows in fixed chunks, so appending never copies
// and never over-allocates by more than one chunk (a growing std::vector would double).
template <typename Rec>
struct ChunkList {
  std::vector<std::unique_ptr<Rec[]>> chunks;
  uint64_t size = 0;
};

template <typename Rec>
class MemoryStore final : public SubListStore<Rec, ChunkList<Rec>> {
  using Base = SubListStore<Rec, ChunkList<Rec>>;
  using Base::Index;
  using Base::lists_;
  using Base::writers_;
  static constexpr size_t kChunk = 16384;

 public:
  MemoryStore(int partitions, int writers) : Base(partitions, writers) {}

  bool external() const override { return false; }

  void Append(int writer, int partition, const Rec* records, size_t n) override {
    ChunkList<Rec>& l = lists_[Index(partition, writer)];
    while (n > 0) {
      const size_t fill = l.size % kChunk;
      if (fill == 0) l.chunks.emplace_back(new Rec[kChunk]);
      const size_t take = std::min(n, kChunk - fill);
      std::copy(records, records + take, l.chunks.back().get() + fill);
      l.size += take;
      records += take;
      n -= take;
    }
  }

  Status FinishWriting() override { return Status::Ok(); }

  Status TakePartition(int partition, std::vector<Rec>* out) override {
    out->clear();
    out->reserve(this->PartitionSize(partition));
    for (int w = 0; w < writers_; ++w) {
      ChunkList<Rec>& l = lists_[Index(partition, w)];
      uint64_t left = l.size;
      for (auto& chunk : l.chunks) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(left, kChunk));
        out->insert(out->end(), chunk.get(), chunk.get() + n);
        left -= n;
        chunk.reset();
      }
      l = ChunkList<Rec>();
    }
    return Status::Ok();
  }
};

}  // namespace

template <typename Rec>
std::unique_ptr<PartitionedStore<Rec>> MakeMemoryStore(int partitions, int writers) {
  return std::make_unique<MemoryStore<Rec>>(partitions, writers);
}

template std::unique_ptr<PartitionedStore<LiftRecord>> MakeMemoryStore<LiftRecord>(int, int);
template std::unique_ptr<PartitionedStore<uint64_t>> MakeMemoryStore<uint64_t>(int, int);

}  // namespace collatz::sievegen
