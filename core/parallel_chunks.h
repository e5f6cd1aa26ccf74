// Splits [0, n) into `chunks` consecutive ranges and runs fn(chunk, begin, end) for each on
// its own thread (the calling thread takes the first): passes over tens of millions of
// sieve survivors (their checks, their counts per class) on every core.
#pragma once

#include <cstddef>
#include <functional>

namespace collatz {

void ParallelChunks(size_t n, int chunks, const std::function<void(int chunk, size_t begin, size_t end)>& fn);

}  // namespace collatz
