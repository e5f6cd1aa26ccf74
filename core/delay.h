// delay(N), exactly, for every 1 <= N < 2^128.
//  - FastDelay: the S-bit step table, the tail table and the 128-bit loop with the
//    overflow check of SPEC section 4; a number whose next step would overflow
//    128 bits is finished by WideDelay (GMP), never dropped or wrapped.
//  - SlowDelay: the plain definition on GMP integers, kept as the test oracle.
#pragma once

#include <cstdint>
#include <memory>

#include "core/step_table.h"
#include "core/tail_table.h"
#include "core/u128.h"

namespace collatz {

// 3^p * h + c in 128 bits; false if the result would not fit (the overflow check).
inline bool MulAddChecked(u128 h, uint64_t m, uint64_t c, u128* out) {
  const u128 lo = static_cast<u128>(Lo64(h)) * m;
  const u128 hi = static_cast<u128>(Hi64(h)) * m;
  if (Hi64(hi) != 0) return false;
  const u128 r = lo + (static_cast<u128>(Lo64(hi)) << 64);
  if (r < lo) return false;
  const u128 r2 = r + c;
  if (r2 < r) return false;
  *out = r2;
  return true;
}

// Exact delay of n >= 1 computed on unbounded integers, T-step by T-step, until the
// value fits in 64 bits again; the rest goes through `fast` if given (else stays wide).
class FastDelay;
uint32_t WideDelay(u128 n, const FastDelay* fast);

// The obviously-correct version: n -> n/2 or 3n+1 on GMP integers until 1. n >= 1.
uint32_t SlowDelay(u128 n);

class FastDelay {
 public:
  FastDelay(std::shared_ptr<const StepTable> steps, std::shared_ptr<const TailTable> tail);

  // delay(n) for n >= 1.
  uint32_t Delay(u128 n) const { return FinishFrom(n, 0); }

  // delay of a number that has reached value v after `spent` steps: spent + delay(v).
  uint32_t FinishFrom(u128 v, uint32_t spent) const;

  const StepTable& steps() const { return *steps_; }
  const TailTable& tail() const { return *tail_; }

 private:
  std::shared_ptr<const StepTable> steps_;
  std::shared_ptr<const TailTable> tail_;
};

}  // namespace collatz
