// The out-of-core PartitionedStore: one STXXL vector per (partition, writer), written
// through overlapped buffered writers and read back through prefetching readers.
// STXXL is the only slow-to-compile header; it is confined to this file.
#include <stdlib.h>

#include <iostream>
#include <mutex>
#include <stxxl.h>
#include <streambuf>

#include "sieve_gen/lift.h"
#include "sieve_gen/partitioned_store.h"

namespace collatz::sievegen {
namespace {

// Swallows STXXL's banner lines, which it writes to std::cout.
class NullBuffer : public std::streambuf {
 protected:
  int overflow(int c) override { return c; }
};

class ScopedSilentStdout {
 public:
  ScopedSilentStdout() : saved_(std::cout.rdbuf(&null_)) {}
  ~ScopedSilentStdout() { std::cout.rdbuf(saved_); }

 private:
  NullBuffer null_;
  std::streambuf* saved_;
};

std::mutex& ConfigMutex() {
  static std::mutex m;
  return m;
}
std::string& ConfiguredDir() {
  static std::string dir;
  return dir;
}

// STXXL's containers are not documented as thread-safe, even for distinct
// containers (the block manager keeps unguarded counters), so every call into
// STXXL is serialized. Grouping, the expensive part, runs outside this lock.
std::mutex& StxxlMutex() {
  static std::mutex m;
  return m;
}

template <typename Rec>
class ExternalStore final : public PartitionedStore<Rec> {
  using Vector = typename stxxl::VECTOR_GENERATOR<Rec, 1, 1, kExternalBlockBytes>::result;
  using Writer = typename Vector::bufwriter_type;
  using Reader = typename Vector::bufreader_type;

 public:
  ExternalStore(int partitions, int writers)
      : partitions_(partitions), writers_(writers), vectors_(static_cast<size_t>(partitions) * writers),
        bufwriters_(static_cast<size_t>(partitions) * writers), sizes_(static_cast<size_t>(partitions) * writers, 0) {}

  ~ExternalStore() override {
    std::lock_guard<std::mutex> lock(StxxlMutex());
    bufwriters_.clear();
    vectors_.clear();
  }

  int partitions() const override { return partitions_; }
  bool external() const override { return true; }

  void Append(int writer, int partition, const Rec* records, size_t n) override {
    const size_t i = Index(partition, writer);
    std::lock_guard<std::mutex> lock(StxxlMutex());
    if (!bufwriters_[i]) {
      vectors_[i] = std::make_unique<Vector>();
      bufwriters_[i] = std::make_unique<Writer>(*vectors_[i], kExternalWriterBuffers);
    }
    Writer& w = *bufwriters_[i];
    for (size_t j = 0; j < n; ++j) w << records[j];
    sizes_[i] += n;
  }

  Status FinishWriting() override {
    std::lock_guard<std::mutex> lock(StxxlMutex());
    for (auto& w : bufwriters_) {
      if (w) w->finish();
      w.reset();
    }
    return Status::Ok();
  }

  uint64_t PartitionSize(int partition) const override {
    uint64_t n = 0;
    for (int w = 0; w < writers_; ++w) n += sizes_[Index(partition, w)];
    return n;
  }

  Status TakePartition(int partition, std::vector<Rec>* out) override {
    out->clear();
    out->reserve(PartitionSize(partition));
    std::lock_guard<std::mutex> lock(StxxlMutex());
    for (int w = 0; w < writers_; ++w) {
      const size_t i = Index(partition, w);
      if (!vectors_[i]) continue;
      if (vectors_[i]->size() != sizes_[i]) {
        return Status::Internal("external partition size mismatch");
      }
      {
        Reader reader(*vectors_[i], 2);
        for (; !reader.empty(); ++reader) out->push_back(*reader);
      }
      vectors_[i].reset();  // frees its disk blocks for reuse
    }
    return Status::Ok();
  }

 private:
  size_t Index(int partition, int writer) const { return static_cast<size_t>(partition) * writers_ + writer; }
  int partitions_;
  int writers_;
  std::vector<std::unique_ptr<Vector>> vectors_;
  std::vector<std::unique_ptr<Writer>> bufwriters_;
  std::vector<uint64_t> sizes_;
};

}  // namespace

Status ConfigureExternalMemory(const std::string& tmpdir) {
  std::lock_guard<std::mutex> lock(ConfigMutex());
  if (!ConfiguredDir().empty()) {
    if (ConfiguredDir() == tmpdir) return Status::Ok();
    return Status::FailedPrecondition("external memory already configured in " + ConfiguredDir() +
                                      "; one directory per process");
  }
  // Without these STXXL writes stxxl.log / stxxl.errlog into the working directory.
  ::setenv("STXXLLOGFILE", "/dev/null", 0);
  ::setenv("STXXLERRLOGFILE", "/dev/null", 0);
  ScopedSilentStdout silent;
  try {
    stxxl::config* cfg = stxxl::config::get_instance();
    const std::string path = tmpdir + "/collatz-sieve-stxxl." + std::to_string(::getpid()) + ".tmp";
    // Size 0: grows on demand. "unlink": removed from the directory once opened.
    stxxl::disk_config disk(path, 0, "syscall unlink");
    disk.autogrow = true;
    disk.delete_on_exit = false;
    cfg->add_disk(disk);
    stxxl::block_manager::get_instance();  // opens the disk now, while stdout is silenced
  } catch (const std::exception& e) {
    return Status::IOError(std::string("cannot set up external memory in ") + tmpdir + ": " + e.what());
  }
  ConfiguredDir() = tmpdir;
  return Status::Ok();
}

uint64_t ExternalPeakBytes() {
  {
    std::lock_guard<std::mutex> lock(ConfigMutex());
    if (ConfiguredDir().empty()) return 0;
  }
  std::lock_guard<std::mutex> lock(StxxlMutex());
  return stxxl::block_manager::get_instance()->get_maximum_allocation();
}

template <typename Rec>
std::unique_ptr<PartitionedStore<Rec>> MakeExternalStore(int partitions, int writers) {
  return std::make_unique<ExternalStore<Rec>>(partitions, writers);
}

template std::unique_ptr<PartitionedStore<LiftRecord>> MakeExternalStore<LiftRecord>(int, int);
template std::unique_ptr<PartitionedStore<uint64_t>> MakeExternalStore<uint64_t>(int, int);

}  // namespace collatz::sievegen
