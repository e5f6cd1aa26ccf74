// One residue of a sieve level with its (p, c), and the lifting step of SPEC section 2:
// level-(k+1) candidates are the lifts s and s + 2^k of the level-k survivors s.
#pragma once

#include <cstdint>

namespace collatz::sievegen {

// N = 2^k h + residue becomes 3^p h + c after k T-steps. c < 3^p <= 3^40 < 2^64.
// Packed in 16 bytes: rp = p << 48 | residue (residue < 2^40). Ordering by (c, rp)
// puts equal (p, c) next to each other with the smallest residue first.
struct LiftRecord {
  uint64_t c;
  uint64_t rp;

  uint64_t residue() const { return rp & kResidueMask; }
  unsigned p() const { return static_cast<unsigned>(rp >> 48); }
  bool SameGroup(const LiftRecord& o) const { return c == o.c && (rp >> 48) == (o.rp >> 48); }
  bool operator<(const LiftRecord& o) const { return c < o.c || (c == o.c && rp < o.rp); }

  static constexpr uint64_t kResidueMask = (uint64_t{1} << 48) - 1;
  static LiftRecord Make(uint64_t residue, unsigned p, uint64_t c) {
    return LiftRecord{c, (static_cast<uint64_t>(p) << 48) | residue};
  }
};
static_assert(sizeof(LiftRecord) == 16);

inline uint64_t Pow3(unsigned p) {
  uint64_t v = 1;
  for (unsigned i = 0; i < p; ++i) v *= 3;
  return v;
}

// The two lifts of a level-`level` survivor s (residue < 2^level) to level + 1.
// N = 2^(level+1) h + s + b 2^level is, after `level` T-steps, 2 * 3^p h + x with
// x = 3^p b + c; one more T-step gives (p, x/2) for even x, (p+1, (3x+1)/2) for odd x.
inline void LiftChildren(const LiftRecord& s, int level, const uint64_t* pow3, LiftRecord out[2]) {
  const unsigned p = s.p();
  const uint64_t r = s.residue();
  for (uint64_t b = 0; b < 2; ++b) {
    const uint64_t x = pow3[p] * b + s.c;  // < 2 * 3^p <= 2 * 3^39 < 2^64
    const uint64_t residue = r | (b << level);
    if ((x & 1) == 0) {
      out[b] = LiftRecord::Make(residue, p, x >> 1);
    } else {
      const unsigned __int128 y = static_cast<unsigned __int128>(x) * 3 + 1;
      out[b] = LiftRecord::Make(residue, p + 1, static_cast<uint64_t>(y >> 1));
    }
  }
}

// A hash of (p, c) (splitmix64's finalizer): records of one group hash alike.
inline uint64_t GroupHash(const LiftRecord& r) {
  uint64_t z = r.c ^ ((r.rp >> 48) * 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Partition of a record from the top hash bits: equal groups land in the same partition.
// partition_bits may be 0 (one partition).
inline uint32_t GroupPartition(const LiftRecord& r, int partition_bits) {
  return partition_bits == 0 ? 0 : static_cast<uint32_t>(GroupHash(r) >> (64 - partition_bits));
}

// Cache-sized sub-bucket inside a partition, from the low hash bits.
inline uint32_t GroupSubBucket(const LiftRecord& r, int sub_bits) {
  return static_cast<uint32_t>(GroupHash(r) & ((uint64_t{1} << sub_bits) - 1));
}

}  // namespace collatz::sievegen
