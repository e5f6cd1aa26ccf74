// Row encodings shared by the files of CoordinatorStore (coordinator_store.cc and
// coordinator_store_stats.cc): unit and lease states as the schema's text, N as n_text.
#pragma once

#include <string>

#include "storage/coordinator_store.h"
#include "storage/n_text.h"

namespace collatz::coordinator_rows {

inline const char* UnitStateText(StoredUnitState s) {
  switch (s) {
    case StoredUnitState::kPending: return "pending";
    case StoredUnitState::kLeased: return "leased";
    case StoredUnitState::kFinished: return "finished";
  }
  return "pending";
}
inline StoredUnitState UnitStateOf(const std::string& s) {
  if (s == "leased") return StoredUnitState::kLeased;
  if (s == "finished") return StoredUnitState::kFinished;
  return StoredUnitState::kPending;
}
inline LeaseState LeaseStateOf(const std::string& s) {
  for (LeaseState st : {LeaseState::kActive, LeaseState::kExpired, LeaseState::kReleased, LeaseState::kCompleted,
                        LeaseState::kSuperseded, LeaseState::kRevoked, LeaseState::kRejected}) {
    if (s == LeaseStateName(st)) return st;
  }
  return LeaseState::kRevoked;
}
inline Status Decode(const std::string& text, u128* out) { return DecodeNText(text, out); }

}  // namespace collatz::coordinator_rows
