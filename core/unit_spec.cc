#include "core/unit_spec.h"

#include "core/class_members.h"
#include "core/published_points.h"

namespace collatz {

Status MakeUnitSpec(const MergedRecords& merged, u128 begin, u128 end, Kinds kinds, ClassMemberCache* cache,
                    UnitSpec* spec, UnitSpecNotes* notes) {
  if (begin < 1 || end <= begin) {
    return Status::InvalidArgument("unit [" + ToDecimal(begin) + ", " + ToDecimal(end) + ") is empty");
  }
  const std::vector<Record>& published = PublishedDelayPoints();
  LeaseContext ctx = ComputeLeaseContext(merged, begin, kinds, published);
  const size_t holes_before = ctx.open_holes.size();
  // Below a class-covered prefix every class with a member there has its minimum among the
  // merged records, so the holes are already exact and the member search (tens of ms a
  // unit) could close none.
  const bool holes_exact = merged.class_covered_prefix >= begin;
  const Status closed = holes_exact        ? Status::Ok()
                        : cache != nullptr ? cache->CloseHoles(merged, begin, &ctx, published)
                                           : CloseHolesFromKnownPoints(merged, begin, &ctx, published);
  UnitSpecNotes local;
  if (notes == nullptr) notes = &local;
  notes->holes_closed_by_members = holes_before - ctx.open_holes.size();
  notes->member_search_error = closed.ok() ? "" : closed.ToString();

  *spec = UnitSpec{};
  spec->begin = begin;
  spec->end = end;
  spec->kinds = kinds;
  spec->floor = ctx.floor;
  spec->open_holes = std::move(ctx.open_holes);
  spec->known_records = std::move(ctx.known_records);
  spec->records_complete_below = ctx.records_complete_below;
  return ValidateUnitSpec(*spec);
}

}  // namespace collatz
