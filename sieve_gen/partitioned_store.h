// A level of the generator: records split into partitions, written concurrently by a
// fixed set of writer threads (each writer owns its own sub-list of every partition, so
// writers never contend), then taken out one partition at a time to be grouped in memory.
// Two implementations: in RAM, and out of core in STXXL blocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace collatz::sievegen {

template <typename Rec>
class PartitionedStore {
 public:
  virtual ~PartitionedStore() = default;
  virtual int partitions() const = 0;
  virtual bool external() const = 0;
  // Writer `writer` appends to `partition`; distinct writers may call concurrently.
  virtual void Append(int writer, int partition, const Rec* records, size_t n) = 0;
  // Called once all writers are done.
  virtual Status FinishWriting() = 0;
  virtual uint64_t PartitionSize(int partition) const = 0;
  uint64_t TotalSize() const {
    uint64_t total = 0;
    for (int i = 0; i < partitions(); ++i) total += PartitionSize(i);
    return total;
  }
  // Replaces *out with partition `partition` and frees it in the store. Calls for
  // different partitions may run concurrently.
  virtual Status TakePartition(int partition, std::vector<Rec>* out) = 0;
};

template <typename Rec>
std::unique_ptr<PartitionedStore<Rec>> MakeMemoryStore(int partitions, int writers);

// Out of core. ConfigureExternalMemory must have been called first.
template <typename Rec>
std::unique_ptr<PartitionedStore<Rec>> MakeExternalStore(int partitions, int writers);

// Points STXXL at one auto-growing file in `tmpdir` (unlinked as soon as it is opened,
// so nothing is left behind) and keeps its messages off stdout and out of log files
// in the working directory. Idempotent for the same directory.
Status ConfigureExternalMemory(const std::string& tmpdir);

// Largest number of bytes STXXL has held on disk at once in this process (0 if unused).
uint64_t ExternalPeakBytes();
// Bytes STXXL has read and written in this process.
void ExternalIoVolume(uint64_t* read_bytes, uint64_t* written_bytes);

// STXXL block size. While written, each external (partition, writer) holds one block
// being filled, and each writer has up to kExternalWriterBuffers more blocks in flight.
constexpr size_t kExternalBlockBytes = 256 * 1024;
constexpr size_t kExternalWriterBuffers = 8;

}  // namespace collatz::sievegen
