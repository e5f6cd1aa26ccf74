// Conversions between the wire messages (collatz.v1) and the core types. N is always a
// lossless {hi, lo} pair; kinds and records map one to one.
#pragma once

#include <vector>

#include "core/status.h"
#include "core/unit.h"
#include "proto/collatz.pb.h"

namespace collatz::wire {

inline u128 FromWire(const v1::U128& x) { return MakeU128(x.hi(), x.lo()); }
inline void ToWire(u128 x, v1::U128* out) {
  out->set_hi(Hi64(x));
  out->set_lo(Lo64(x));
}

v1::Kinds KindsToWire(Kinds k);
// InvalidArgument for KINDS_UNSPECIFIED and unknown values.
Status KindsFromWire(v1::Kinds k, Kinds* out);

void RecordsToWire(const std::vector<Record>& in, google::protobuf::RepeatedPtrField<v1::Record>* out);
std::vector<Record> RecordsFromWire(const google::protobuf::RepeatedPtrField<v1::Record>& in);

void ResultToWire(const UnitResult& in, v1::UnitResult* out);
UnitResult ResultFromWire(const v1::UnitResult& in);

// The unit as a worker searches it (UnitSpec); the unit id is carried separately.
void SpecToWire(const UnitSpec& in, v1::Unit* out);
Status SpecFromWire(const v1::Unit& in, UnitSpec* out);

}  // namespace collatz::wire
