// One class-member search (core/class_members.h) reused across the leases of a
// coordinator. The search takes tens of milliseconds near 2^60 and ran under the
// coordinator's lock on every lease of a unit with open classes; at the frontier
// consecutive leases ask it the same question.
//
// Reuse is always exact: members found below b0 are members below any begin >= b0, so
// they close only classes that really have a member below the unit. It can only leave a
// hole open that a fresh search would close with a member in [b0, begin), so the search is
// redone once begin moves more than b0 / 2^reuse_shift past b0, when the known points (the
// search's seeds) change, when a unit's floor is above the classes searched, and for a
// begin below b0 (not kept: the frontier moves up).
#pragma once

#include <cstdint>
#include <vector>

#include "core/merge.h"
#include "core/status.h"

namespace collatz {

class ClassMemberCache {
 public:
  explicit ClassMemberCache(unsigned reuse_shift = 6) : reuse_shift_(reuse_shift) {}

  // CloseHolesFromKnownPoints(merged, begin, ctx, extra_points), reusing the last search
  // when it may. On error ctx is unchanged.
  Status CloseHoles(const MergedRecords& merged, u128 begin, LeaseContext* ctx,
                    const std::vector<Record>& extra_points = {});

  uint64_t searches() const { return searches_; }  // member searches run
  uint64_t reuses() const { return reuses_; }      // leases served from the last one

 private:
  unsigned reuse_shift_;
  bool valid_ = false;
  std::vector<Record> seeds_;    // the known points it started from
  u128 below_ = 0;               // b0: its members are below it
  uint32_t max_delay_ = 0;       // the classes it searched: 0 .. max_delay_
  std::vector<Record> members_;
  uint64_t searches_ = 0, reuses_ = 0;
};

}  // namespace collatz
