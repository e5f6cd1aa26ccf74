#include "core/sieve_membership.h"

#include <vector>

#include "core/step_table.h"
#include "core/u128.h"

namespace collatz {

bool IsJoinSurvivor(uint64_t i, int bits) {
  uint32_t p = 0;
  uint64_t c = 0;
  TStepsOfResidue(i, bits, &p, &c);
  // Depth-first over the paths back from c: (value, steps left, odd steps left).
  struct Node {
    u128 x;
    int steps;
    int odd;
  };
  std::vector<Node> stack;
  stack.push_back({c, bits, static_cast<int>(p)});
  while (!stack.empty()) {
    const Node n = stack.back();
    stack.pop_back();
    if (n.steps == 0) {
      // A preimage with the same (p, c): a smaller one means i is not the group's smallest.
      if (n.x < i) return false;
      continue;
    }
    if (n.steps > n.odd) stack.push_back({2 * n.x, n.steps - 1, n.odd});  // an even step
    if (n.odd > 0 && n.x % 3 == 2) stack.push_back({(2 * n.x - 1) / 3, n.steps - 1, n.odd - 1});  // an odd one
  }
  return true;
}

}  // namespace collatz
