// The in-RAM PartitionedStore: one std::vector per (partition, writer).
#include <utility>

#include "sieve_gen/lift.h"
#include "sieve_gen/partitioned_store.h"

namespace collatz::sievegen {
namespace {

template <typename Rec>
class MemoryStore final : public PartitionedStore<Rec> {
 public:
  MemoryStore(int partitions, int writers)
      : partitions_(partitions), writers_(writers), parts_(static_cast<size_t>(partitions) * writers) {}

  int partitions() const override { return partitions_; }
  bool external() const override { return false; }

  void Append(int writer, int partition, const Rec* records, size_t n) override {
    auto& v = parts_[Index(partition, writer)];
    v.insert(v.end(), records, records + n);
  }

  Status FinishWriting() override { return Status::Ok(); }

  uint64_t PartitionSize(int partition) const override {
    uint64_t n = 0;
    for (int w = 0; w < writers_; ++w) n += parts_[Index(partition, w)].size();
    return n;
  }

  Status TakePartition(int partition, std::vector<Rec>* out) override {
    out->clear();
    // Move the largest piece (no copy), append the rest.
    int largest = 0;
    for (int w = 1; w < writers_; ++w) {
      if (parts_[Index(partition, w)].size() > parts_[Index(partition, largest)].size()) largest = w;
    }
    std::vector<Rec> result = std::move(parts_[Index(partition, largest)]);
    result.reserve(PartitionSize(partition));
    for (int w = 0; w < writers_; ++w) {
      auto& v = parts_[Index(partition, w)];
      result.insert(result.end(), v.begin(), v.end());
      std::vector<Rec>().swap(v);
    }
    *out = std::move(result);
    return Status::Ok();
  }

 private:
  size_t Index(int partition, int writer) const { return static_cast<size_t>(partition) * writers_ + writer; }
  int partitions_;
  int writers_;
  std::vector<std::vector<Rec>> parts_;
};

}  // namespace

template <typename Rec>
std::unique_ptr<PartitionedStore<Rec>> MakeMemoryStore(int partitions, int writers) {
  return std::make_unique<MemoryStore<Rec>>(partitions, writers);
}

template std::unique_ptr<PartitionedStore<LiftRecord>> MakeMemoryStore<LiftRecord>(int, int);
template std::unique_ptr<PartitionedStore<uint64_t>> MakeMemoryStore<uint64_t>(int, int);

}  // namespace collatz::sievegen
