#include "core/delay.h"

#include <gmp.h>

namespace collatz {

namespace {

void SetMpz(mpz_t z, u128 v) {
  const uint64_t words[2] = {Lo64(v), Hi64(v)};
  mpz_import(z, 2, -1, sizeof(uint64_t), 0, 0, words);
}

u128 GetMpz(const mpz_t z) {
  uint64_t words[2] = {0, 0};
  size_t count = 0;
  mpz_export(words, &count, -1, sizeof(uint64_t), 0, 0, z);
  return MakeU128(words[1], words[0]);
}

// One step of the definition on an unbounded integer: x -> 3x+1 if odd, x/2 if even.
inline void WideStep(mpz_t x) {
  if (mpz_odd_p(x)) {
    mpz_mul_ui(x, x, 3);
    mpz_add_ui(x, x, 1);
  } else {
    mpz_fdiv_q_2exp(x, x, 1);
  }
}

}  // namespace

uint32_t WideDelay(u128 n, const FastDelay* fast) {
  mpz_t x;
  mpz_init(x);
  SetMpz(x, n);
  uint32_t steps = 0;
  // Collatz steps on unbounded integers until the value fits in 64 bits: from there no
  // trajectory reaches 2^128 (path records: nothing below 2^64 climbs above 2^126), and
  // even if one did, FinishFrom would come back here.
  while (mpz_sizeinbase(x, 2) > 64 || (fast == nullptr && mpz_cmp_ui(x, 1) > 0)) {
    WideStep(x);
    ++steps;
  }
  const u128 v = GetMpz(x);
  mpz_clear(x);
  if (fast == nullptr) return steps;
  return fast->FinishFrom(v, steps);
}

uint32_t SlowDelay(u128 n) {
  // The definition, step by step: native 128-bit while 3n+1 fits, GMP from there on.
  uint32_t steps = 0;
  while (n > 1) {
    if ((n & 1) == 0) {
      n >>= 1;
    } else if (n <= (kU128Max - 1) / 3) {
      n = 3 * n + 1;
    } else {
      break;
    }
    ++steps;
  }
  if (n <= 1) return steps;
  mpz_t x;
  mpz_init(x);
  SetMpz(x, n);
  while (mpz_cmp_ui(x, 1) > 0) {
    WideStep(x);
    ++steps;
  }
  mpz_clear(x);
  return steps;
}

FastDelay::FastDelay(std::shared_ptr<const StepTable> steps, std::shared_ptr<const TailTable> tail)
    : steps_(std::move(steps)), tail_(std::move(tail)) {}

uint32_t FastDelay::FinishFrom(u128 v, uint32_t spent) const {
  const int bits = steps_->bits();
  const uint64_t mask = steps_->mask();
  const uint64_t* table = steps_->packed().data();
  const u128 limit = tail_->limit();  // tail bits >= step bits keeps every iteration valid (h >= 1)
  while (v >= limit) {
    const uint64_t e = table[Lo64(v) & mask];
    const uint32_t p = static_cast<uint32_t>(e >> 32);
    u128 next;
    if (!MulAddChecked(v >> bits, kPow3[p], static_cast<uint32_t>(e), &next)) {
      return spent + WideDelay(v, this);
    }
    v = next;
    spent += static_cast<uint32_t>(bits) + p;
  }
  return spent + (*tail_)[static_cast<uint64_t>(v)];
}

}  // namespace collatz
