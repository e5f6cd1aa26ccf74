// The early-termination bound table the GPU engine copies to the device: for v in the
// octave [2^(b-1), 2^b) split into 2^sub_bits equal sub-buckets, the largest delay of any
// n <= the bucket's last value (R(x) from the unit's record table, SPEC 3), or 0xFFFF when
// that value is not below records_complete_below. With sub_bits = 3 it equals
// EarlyTermination::bound_table(); finer buckets give tighter bounds (exact all the same).
#pragma once

#include <cstdint>
#include <vector>

#include "core/unit.h"

namespace collatz {

// Index: (bitlen << sub_bits) | sub-bucket; 129 << sub_bits entries. sub_bits in 0..8.
std::vector<uint16_t> BuildBoundTable(const UnitSpec& spec, int sub_bits);

}  // namespace collatz
