#include "core/thread_count.h"

#include <thread>

namespace collatz {

int ResolveThreadCount(int requested) {
  if (requested > 0) return requested;
  const unsigned hardware = std::thread::hardware_concurrency();  // 0 where unknown
  return hardware > 0 ? static_cast<int>(hardware) : 1;
}

}  // namespace collatz
