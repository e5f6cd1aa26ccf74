// The largest unit delay+class work gets by default, in one place: collatzctl run's plan
// (cli::DefaultUnitSize) and a coordinator's submissions that name no unit size
// (collatz-server --class-unit-size). No engine here, so the coordinator links it without the GPU.
#pragma once

#include "core/u128.h"

namespace collatz::engines {

// At 2^66 a GPU searches delay+class work about ten times slower than delay-only work
// (5.14e12 numbers/s in units of 2^49, 4.94e12 in 2^50 and 4.99e12 in 2^51 with 30 bits,
// H100/H200, docs/PERFORMANCE.md sessions 35-43), and doublings past 2^49 gain about 1% each,
// while a lost lease loses the whole unit: a unit of 2^52 takes about 15 minutes there, the
// 2^54 of a delay-only campaign would take an hour.
constexpr int kMaxDefaultClassUnitBits = 52;
constexpr u128 kMaxDefaultClassUnitNumbers = static_cast<u128>(1) << kMaxDefaultClassUnitBits;

}  // namespace collatz::engines
