// The out-of-core PartitionedStore: one list of STXXL blocks per (partition, writer),
// written asynchronously and read back with read-ahead.
// STXXL is the only slow-to-compile header; it is confined to this file.
#include <stdlib.h>

#include <algorithm>
#include <deque>
#include <iostream>
#include <mutex>
#include <stxxl.h>
#include <streambuf>

#include "sieve_gen/lift.h"
#include "sieve_gen/sub_list_store.h"

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

// STXXL's I/O layer (requests, queues, disk allocator) is thread-safe, but the block
// manager keeps unguarded allocation counters: block allocation and release are
// serialized here. Reads, writes and grouping run concurrently.
std::mutex& StxxlMutex() {
  static std::mutex m;
  return m;
}

// Each (partition, writer) sub-list is a list of STXXL blocks, allocated one at a time
// from the block manager (so disk use is the data rounded up to a block, not the
// doubling growth of stxxl::vector's buffered writer), written asynchronously and
// read back with a few blocks of read-ahead.
template <typename Rec>
struct BlockList {
  using Block = stxxl::typed_block<kExternalBlockBytes, Rec>;
  std::vector<typename Block::bid_type> bids;
  uint64_t size = 0;
  Block* current = nullptr;  // block being filled (records size % Block::size)
};

template <typename Rec>
class ExternalStore final : public SubListStore<Rec, BlockList<Rec>> {
  using Base = SubListStore<Rec, BlockList<Rec>>;
  using SubList = BlockList<Rec>;
  using Base::Index;
  using Base::lists_;
  using Base::writers_;
  using Block = typename SubList::Block;
  using Bid = typename Block::bid_type;
  static constexpr size_t kPerBlock = Block::size;
  static constexpr size_t kReadAhead = 4;

  // Per writer: its blocks in flight and spare buffers (only the owning thread touches them).
  struct WriterState {
    std::deque<std::pair<Block*, stxxl::request_ptr>> in_flight;
    std::vector<Block*> spare;
  };

 public:
  ExternalStore(int partitions, int writers) : Base(partitions, writers), writer_state_(writers) {}

  ~ExternalStore() override {
    try {
      for (auto& w : writer_state_) Drain(&w, 0);
    } catch (...) {
    }
    std::lock_guard<std::mutex> lock(StxxlMutex());
    for (auto& l : lists_) {
      delete l.current;
      if (!l.bids.empty()) stxxl::block_manager::get_instance()->delete_blocks(l.bids.begin(), l.bids.end());
    }
    for (auto& w : writer_state_) {
      for (Block* b : w.spare) delete b;
    }
  }

  bool external() const override { return true; }

  void Append(int writer, int partition, const Rec* records, size_t n) override {
    SubList& l = lists_[Index(partition, writer)];
    WriterState& w = writer_state_[writer];
    while (n > 0) {
      if (l.current == nullptr) l.current = TakeSpare(&w);
      const size_t fill = l.size % kPerBlock;
      const size_t take = std::min(n, kPerBlock - fill);
      std::copy(records, records + take, l.current->elem + fill);
      l.size += take;
      records += take;
      n -= take;
      if (l.size % kPerBlock == 0) WriteCurrent(&l, &w);
    }
  }

  Status FinishWriting() override {
    for (int i = 0; i < static_cast<int>(lists_.size()); ++i) {
      SubList& l = lists_[i];
      WriterState& w = writer_state_[i % writers_];
      if (l.current != nullptr && l.size % kPerBlock != 0) WriteCurrent(&l, &w);
    }
    for (auto& w : writer_state_) {
      Drain(&w, 0);
      for (Block* b : w.spare) delete b;
      w.spare.clear();
    }
    return Status::Ok();
  }

  Status TakePartition(int partition, std::vector<Rec>* out) override {
    out->clear();
    out->reserve(this->PartitionSize(partition));
    std::vector<std::unique_ptr<Block>> buffers;
    for (size_t i = 0; i < kReadAhead; ++i) buffers.emplace_back(new Block);
    for (int w = 0; w < writers_; ++w) {
      SubList& l = lists_[Index(partition, w)];
      const size_t nblocks = l.bids.size();
      std::vector<stxxl::request_ptr> requests(nblocks);
      size_t issued = 0;
      for (; issued < std::min(nblocks, kReadAhead); ++issued) {
        requests[issued] = buffers[issued % kReadAhead]->read(l.bids[issued]);
      }
      uint64_t left = l.size;
      for (size_t b = 0; b < nblocks; ++b) {
        requests[b]->wait();
        Block* blk = buffers[b % kReadAhead].get();
        const size_t count = static_cast<size_t>(std::min<uint64_t>(left, kPerBlock));
        out->insert(out->end(), blk->elem, blk->elem + count);
        left -= count;
        requests[b] = stxxl::request_ptr();
        if (issued < nblocks) {
          requests[issued] = buffers[issued % kReadAhead]->read(l.bids[issued]);
          ++issued;
        }
      }
      if (left != 0) return Status::Internal("external partition shorter than recorded");
      {
        std::lock_guard<std::mutex> lock(StxxlMutex());
        if (!l.bids.empty()) stxxl::block_manager::get_instance()->delete_blocks(l.bids.begin(), l.bids.end());
      }
      std::vector<Bid>().swap(l.bids);
      l.size = 0;
    }
    return Status::Ok();
  }

 private:
  Block* TakeSpare(WriterState* w) {
    if (w->spare.empty()) return new Block;
    Block* b = w->spare.back();
    w->spare.pop_back();
    return b;
  }

  // Waits until at most `keep` writes of this writer are in flight.
  void Drain(WriterState* w, size_t keep) {
    while (w->in_flight.size() > keep) {
      w->in_flight.front().second->wait();
      w->spare.push_back(w->in_flight.front().first);
      w->in_flight.pop_front();
    }
  }

  void WriteCurrent(SubList* l, WriterState* w) {
    Bid bid;
    {
      std::lock_guard<std::mutex> lock(StxxlMutex());
      stxxl::block_manager::get_instance()->new_block(stxxl::striping(), bid);
    }
    l->bids.push_back(bid);
    w->in_flight.emplace_back(l->current, l->current->write(bid));
    l->current = nullptr;
    Drain(w, kExternalWriterBuffers);
  }

  std::vector<WriterState> writer_state_;
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

void ExternalIoVolume(uint64_t* read_bytes, uint64_t* written_bytes) {
  *read_bytes = *written_bytes = 0;
  {
    std::lock_guard<std::mutex> lock(ConfigMutex());
    if (ConfiguredDir().empty()) return;
  }
  stxxl::stats* s = stxxl::stats::get_instance();
  *read_bytes = static_cast<uint64_t>(s->get_read_volume());
  *written_bytes = static_cast<uint64_t>(s->get_written_volume());
}

template <typename Rec>
std::unique_ptr<PartitionedStore<Rec>> MakeExternalStore(int partitions, int writers) {
  return std::make_unique<ExternalStore<Rec>>(partitions, writers);
}

template std::unique_ptr<PartitionedStore<LiftRecord>> MakeExternalStore<LiftRecord>(int, int);
template std::unique_ptr<PartitionedStore<uint64_t>> MakeExternalStore<uint64_t>(int, int);

}  // namespace collatz::sievegen
