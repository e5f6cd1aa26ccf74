// The sieve width of each unit, in one place: the rule the coordinator cuts its units by
// (collatz-server --class-sieve-bits) and collatzctl run picks its width by
// (engines::SieveBitsForRun). No engine here, so the coordinator links it without the GPU.
#pragma once

#include "core/sieve.h"
#include "core/u128.h"

namespace collatz::engines {

// Delay+class units of 2^46 numbers (a coordinator's default unit) have the cycles for a wider
// sieve's residue groups: H200, 2^46 numbers, 19 / 25 bits: 3.366 / 3.983e12 numbers/s at
// 2^66, 2.417 / 2.752e12 at 2^60 (with 2^44 numbers 25 bits are slower: 3.116 / 3.365e12 at
// 2^66; docs/PERFORMANCE.md, session 21). Delay-only units are fastest at 19 bits.
constexpr int kWideUnitClassSieveBits = 25;
constexpr u128 kWideClassUnitNumbers = static_cast<u128>(1) << 46;

// Delay-only units of 2^48 numbers and more (a GPU campaign's units of 2^52, docs/OPERATIONS.md
// section 13) are fastest with a wide sieve: fewer numbers are examined, and their residue
// groups still keep a few hundred members (about 455 since session 40, 227 before), each doubling of the unit a bit deeper (k + G = 37 at
// 2^48, 41 at 2^52: 4.07e13 numbers/s, session 29). H200, the campaign point above the published bound, 2^49 numbers: 19 / 22 / 24 / 25 /
// 26 / 27 / 28 bits gave 3.146 / 3.354 / 3.462 / 3.528 / 3.588 / 3.645 / 3.703e13 numbers/s;
// 2^48 numbers: 19 / 24 / 26 / 28 bits 3.145 / 3.386 / 3.488 / 3.592e13 (docs/PERFORMANCE.md,
// session 27). 30 bits against 28 at the first multiple of each size above the published bound
// (session 33, same call): 2^48 3.696 / 3.628e13 (+1.9%), 2^49 3.830 / 3.734e13 (+2.6%), 2^50
// 3.914 / 3.805e13 (+2.8%), 2^51 4.172 / 4.050e13 (+3.0%). A GPU builds it in 1.5 s; a host (a
// coordinator, a CPU worker) in about 40 s on two cores and 3 GB at the peak. Smaller units keep the base
// width (2^46: 20 to 23 bits gave -1.5% to +5.2% against 19; 28 bits not measured there).
// Delay+class units that large take it too, when it is wider than theirs: at 2^66 with 2^48
// numbers 25 / 26 / 27 / 28 / 29 / 30 bits gave 4.319 / 4.364 / 4.404 / 4.450 / 4.493 /
// 4.528e12 (H200, session 32), four times the cycles keeping the wider sieve's groups full.
constexpr int kWideUnitDelaySieveBits = 30;
constexpr u128 kWideDelayUnitNumbers = static_cast<u128>(1) << 48;

// The widest sieve a unit may ask for: what a GPU builds on the device
// (engines::kMaxGpuBuiltSieveBits); a host builds it too, in tens of seconds.
constexpr int kMaxUnitSieveBits = 30;

// The sieve width of a unit of `kinds` and `unit_numbers` numbers. Units of at least
// `delay_min_numbers` are wide: a delay-only one takes `delay_bits`, a delay+class one the
// wider of `delay_bits` and its class width. Below that, delay+class units of at least
// `class_min_numbers` take `class_bits`; every other unit `base_bits`. A width of 0 means
// base_bits (for delay_bits: no wide units).
int UnitSieveBits(Kinds kinds, u128 unit_numbers, int base_bits, int class_bits,
                  u128 class_min_numbers = kWideClassUnitNumbers, int delay_bits = 0,
                  u128 delay_min_numbers = kWideDelayUnitNumbers);

// Whether a unit may ask for a sieve of `bits` (1 .. kMaxUnitSieveBits).
inline bool IsUnitSieveBits(int bits) { return bits >= 1 && bits <= kMaxUnitSieveBits; }

}  // namespace collatz::engines
