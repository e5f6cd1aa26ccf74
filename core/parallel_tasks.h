// Small work-sharing helpers on plain threads, for passes over tens of millions of sieve
// survivors (core/sieve.cc: lifts, sorts, checks; gpu/sieve_cycle.cc: counts per class).
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace collatz {

// Runs task(order[0]), task(order[1]), ... each once, on `threads` threads (the calling one
// among them), each thread taking the next in `order` when it is free.
void RunTasks(const std::vector<size_t>& order, int threads, const std::function<void(size_t)>& task);

// The indices of `sizes`, largest first (ties in index order): an order that balances RunTasks.
std::vector<size_t> LargestFirst(const std::vector<size_t>& sizes);

// Splits [0, n) into `chunks` consecutive ranges of nearly equal length and runs
// fn(chunk, begin, end) for each, one thread a chunk.
void ParallelChunks(size_t n, int chunks, const std::function<void(int chunk, size_t begin, size_t end)>& fn);

}  // namespace collatz
