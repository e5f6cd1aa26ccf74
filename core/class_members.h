// Members of delay classes below a bound, found by walking the inverse Collatz tree.
//
// A class-record search must know which delays already have a member below its start: a
// class with no known member stays open, and an open class near the top of the delay range
// keeps every number of a unit running until its trajectory has fallen far enough. Exhaustive
// class records are known only for small n, so this search closes classes another way: from
// numbers of known delay (delay records and every point of their trajectories), it climbs
// the inverse tree, where n of delay d has the predecessors 2n and, for n = 4 (mod 6) and
// n > 4, (n - 1) / 3, both of delay d + 1. Every member it returns is exact (re-verified with
// the slow path) but need not be the smallest of its class; a class it misses stays open,
// which costs speed and never correctness.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/merge.h"
#include "core/status.h"
#include "core/unit.h"

namespace collatz {

struct ClassMemberSearch {
  u128 below = 0;           // members must be < below
  uint32_t max_delay = 0;   // classes 0 .. max_delay are searched
  size_t beam_width = 512;  // numbers kept per delay level
  // Numbers up to below * 2^headroom_bits are climbed through too: (n - 1) / 3 steps bring
  // some of their predecessors below the bound.
  unsigned headroom_bits = 16;
  // Which numbers a level keeps: with lookahead_levels > 0, those whose inverse trees within
  // that many levels weigh most (the sum of 1/y over their numbers y, from n mod 3^9: see
  // class_members.cc); with 0, the smallest. With the published delay records below the
  // bound as seeds, 20 levels close 768 of the 793 classes that have a member below 2^28
  // (the smallest: 759) and 954 of 998 below 2^32 (the smallest: 927); 14 levels or a beam
  // of 384 fall back to the smallest's figures. About 0.16 s at 2^66 (the smallest: 0.10 s).
  unsigned lookahead_levels = 20;
};

// seeds: numbers with their exact delays (e.g. the delay records). Fills `members` with the
// smallest member found of each class d <= max_delay that has one below `below`, ascending
// by delay. InvalidArgument for a seed whose delay is wrong or for below < 2.
Status FindClassMembers(const std::vector<Record>& seeds, const ClassMemberSearch& search,
                        std::vector<Record>* members);

// The seeds of a lease's search: every known point of `merged` (records, candidates and
// imported known points), then `extra_points` (numbers with their exact delays, e.g. PublishedDelayPoints()).
std::vector<Record> ClassMemberSeeds(const MergedRecords& merged, const std::vector<Record>& extra_points = {});

// For a lease at `begin`: closes the holes of ctx that members found from every known point
// of `merged` and `extra_points` (at any height) fill. On error ctx is unchanged.
Status CloseHolesFromKnownPoints(const MergedRecords& merged, u128 begin, LeaseContext* ctx,
                                 const std::vector<Record>& extra_points = {});

}  // namespace collatz
