// What both PartitionedStore implementations share: one sub-list per (partition, writer),
// each with a record count `size`, so writers never contend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sieve_gen/partitioned_store.h"

namespace collatz::sievegen {

template <typename Rec, typename SubList>
class SubListStore : public PartitionedStore<Rec> {
 public:
  SubListStore(int partitions, int writers)
      : partitions_(partitions), writers_(writers), lists_(static_cast<size_t>(partitions) * writers) {}

  int partitions() const override { return partitions_; }

  uint64_t PartitionSize(int partition) const override {
    uint64_t n = 0;
    for (int w = 0; w < writers_; ++w) n += lists_[Index(partition, w)].size;
    return n;
  }

 protected:
  size_t Index(int partition, int writer) const { return static_cast<size_t>(partition) * writers_ + writer; }

  const int partitions_;
  const int writers_;
  std::vector<SubList> lists_;
};

}  // namespace collatz::sievegen
