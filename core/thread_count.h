// The worker-thread count behind every `--threads` option: 0 (or less) means one thread per
// hardware thread of this machine, at least one.
#pragma once

namespace collatz {

// `requested` if positive, else the machine's hardware threads (1 where the platform cannot
// tell).
int ResolveThreadCount(int requested);

}  // namespace collatz
