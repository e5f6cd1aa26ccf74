#include "core/class_member_cache.h"

#include "core/class_members.h"

namespace collatz {

Status ClassMemberCache::CloseHoles(const MergedRecords& merged, u128 begin, LeaseContext* ctx,
                                    const std::vector<Record>& extra_points) {
  if (ctx->open_holes.empty() || begin < 2) return Status::Ok();
  std::vector<Record> seeds = ClassMemberSeeds(merged, extra_points);
  const bool reusable = valid_ && seeds == seeds_ && begin >= below_ && begin - below_ <= (below_ >> reuse_shift_) &&
                        ctx->floor <= max_delay_;
  if (reusable) {
    ++reuses_;
    collatz::CloseHoles(members_, begin, ctx);
    return Status::Ok();
  }
  ClassMemberSearch search;
  search.below = begin;
  search.max_delay = ctx->floor;
  std::vector<Record> members;
  if (Status st = FindClassMembers(seeds, search, &members); !st.ok()) return st;
  ++searches_;
  collatz::CloseHoles(members, begin, ctx);
  if (!valid_ || begin >= below_) {  // a unit below the last search's: answered, not kept
    valid_ = true;
    seeds_ = std::move(seeds);
    below_ = begin;
    max_delay_ = ctx->floor;
    members_ = std::move(members);
  }
  return Status::Ok();
}

}  // namespace collatz
