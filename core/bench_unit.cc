#include "core/bench_unit.h"

#include <algorithm>
#include <set>

#include "core/class_members.h"
#include "core/delay.h"
#include "core/known_points.h"
#include "core/merge.h"
#include "core/records_csv.h"

namespace collatz {
namespace {

std::string Row(const Record& r) { return ToDecimal(r.n) + "," + std::to_string(r.delay); }

// Trusted does not mean unchecked: a damaged file would give the bench a wrong floor.
Status CheckDelays(const std::vector<Record>& rows, const char* what) {
  for (const Record& r : rows) {
    if (r.n == 0) return Status::InvalidArgument(std::string(what) + ": n = 0 in row " + Row(r));
    const uint32_t delay = SlowDelay(r.n);
    if (delay != r.delay) {
      return Status::InvalidArgument(std::string(what) + ": row " + Row(r) + " is wrong, delay(" + ToDecimal(r.n) +
                                     ") = " + std::to_string(delay));
    }
  }
  return Status::Ok();
}

Status CheckDelayRecords(std::vector<Record> rows) {
  std::sort(rows.begin(), rows.end(), [](const Record& a, const Record& b) { return a.n < b.n; });
  if (rows.empty() || rows.front().n != 1) return Status::InvalidArgument("delay records: the list must start at n = 1");
  for (size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].n == rows[i - 1].n || rows[i].delay <= rows[i - 1].delay) {
      return Status::InvalidArgument("delay records: " + Row(rows[i]) + " after " + Row(rows[i - 1]) +
                                     " is no delay record");
    }
  }
  return CheckDelays(rows, "delay records");
}

Status CheckClassRecords(const std::vector<Record>& rows) {
  std::set<uint32_t> delays;
  std::set<u128> ns;
  for (const Record& r : rows) {
    if (!delays.insert(r.delay).second || !ns.insert(r.n).second) {
      return Status::InvalidArgument("class records: row " + Row(r) + " repeats a delay or an n");
    }
  }
  return CheckDelays(rows, "class records");
}

u128 LargestN(const std::vector<Record>& rows) {
  u128 largest = 0;
  for (const Record& r : rows) largest = std::max(largest, r.n);
  return largest;
}

// min(largest + 1, limit), without overflow.
u128 TrustedBound(u128 largest, u128 limit) { return largest >= limit ? limit : largest + 1; }

std::vector<Record> Below(const std::vector<Record>& rows, u128 bound) {
  std::vector<Record> out;
  for (const Record& r : rows) {
    if (r.n < bound) out.push_back(r);
  }
  return out;
}

// The classes open without the points (`without`'s context at the same floor) that are
// closed in ctx: what the points close before any member search.
size_t HolesClosedByPoints(const LeaseContext& ctx, const MergedRecords& without, u128 at, Kinds kinds,
                           const std::vector<Record>& extra_points) {
  const LeaseContext plain = ComputeLeaseContext(without, at, kinds, extra_points);
  size_t closed = 0;
  for (uint32_t d : plain.open_holes) {
    if (!std::binary_search(ctx.open_holes.begin(), ctx.open_holes.end(), d)) ++closed;
  }
  return closed;
}

}  // namespace

Status BuildBenchUnit(const std::vector<Record>& delay_records, const std::vector<Record>& class_records, u128 at,
                      u128 numbers, Kinds kinds, BenchUnit* out, const BenchUnitOptions& options) {
  if (at < 1) return Status::InvalidArgument("the bench range must start at 1 or above");
  if (numbers < 1 || numbers > kU128Max - at) {
    return Status::InvalidArgument("the bench range must be non-empty and end below 2^128");
  }
  Status st = CheckDelayRecords(delay_records);
  if (st.ok()) st = CheckClassRecords(class_records);
  if (!st.ok()) return st;
  const std::vector<Record>& points = options.known_points;

  out->holes_closed_by_members = 0;
  out->holes_closed_by_points = 0;
  out->delay_complete_below = 1;
  out->class_complete_below = 1;
  if (options.context != BenchContext::kTrusted) {
    out->spec = UnitSpec{};
    out->spec.begin = at;
    out->spec.end = at + numbers;
    out->spec.kinds = kinds;
    if (options.context == BenchContext::kFloor) {
      // The delay list's numbers as known points only (their delays were just recomputed),
      // and the imported known points.
      if (!points.empty() && !(st = CheckKnownPointRows(points)).ok()) return st;
      MergedRecords with_points;
      with_points.known_points = points;
      LeaseContext ctx = ComputeLeaseContext(with_points, at, kinds, delay_records);
      out->holes_closed_by_points = HolesClosedByPoints(ctx, MergedRecords{}, at, kinds, delay_records);
      const size_t before = ctx.open_holes.size();
      if (options.close_holes_by_members) st = CloseHolesFromKnownPoints(with_points, at, &ctx, delay_records);
      if (!st.ok()) return st;
      out->holes_closed_by_members = before - ctx.open_holes.size();
      out->spec.floor = ctx.floor;
      out->spec.open_holes = ctx.open_holes;
    }
    return ValidateUnitSpec(out->spec);
  }

  // Each list says nothing beyond its largest n (a list "complete below 2^28" is in
  // particular complete below its largest n + 1), and nothing at or above `at` is used.
  TrustedImport delays;
  delays.complete_below = TrustedBound(LargestN(delay_records), at);
  delays.delay_records = Below(delay_records, delays.complete_below);
  std::vector<TrustedImport> imports = {delays};
  out->class_complete_below = 1;
  if (!class_records.empty()) {
    // An import carries both kinds complete below one bound: the class list's, within
    // the delay list's.
    TrustedImport classes;
    classes.complete_below = TrustedBound(LargestN(class_records), delays.complete_below);
    classes.delay_records = Below(delay_records, classes.complete_below);
    classes.class_records = Below(class_records, classes.complete_below);
    if (!classes.class_records.empty()) {
      out->class_complete_below = classes.complete_below;
      imports.push_back(std::move(classes));
    }
  }
  if (!points.empty() && !(st = CheckKnownPoints(points, imports)).ok()) return st;
  LeaseContext ctx = ComputeLeaseContext(MergeRecords(imports, {}, points), at, kinds);
  out->holes_closed_by_points = HolesClosedByPoints(ctx, MergeRecords(imports, {}), at, kinds, {});
  if (options.close_holes_by_members && !ctx.open_holes.empty()) {
    // Seeds: every trusted row and known point, at any height (its trajectory may pass below `at`).
    std::vector<Record> seeds = delay_records;
    seeds.insert(seeds.end(), class_records.begin(), class_records.end());
    seeds.insert(seeds.end(), points.begin(), points.end());
    ClassMemberSearch search;
    search.below = at;
    search.max_delay = ctx.floor;
    std::vector<Record> members;
    if (!(st = FindClassMembers(seeds, search, &members)).ok()) return st;
    const size_t before = ctx.open_holes.size();
    CloseHoles(members, at, &ctx);
    out->holes_closed_by_members = before - ctx.open_holes.size();
  }
  out->delay_complete_below = delays.complete_below;
  out->spec = UnitSpec{};
  out->spec.begin = at;
  out->spec.end = at + numbers;
  out->spec.kinds = kinds;
  out->spec.floor = ctx.floor;
  out->spec.open_holes = ctx.open_holes;
  out->spec.known_records = ctx.known_records;
  out->spec.records_complete_below = ctx.records_complete_below;
  return ValidateUnitSpec(out->spec);
}

const char* BenchContextName(BenchContext context) {
  switch (context) {
    case BenchContext::kNone: return "none";
    case BenchContext::kFloor: return "floor";
    case BenchContext::kTrusted: return "trusted";
  }
  return "?";
}

Status ParseBenchContext(const std::string& text, BenchContext* out) {
  for (BenchContext c : {BenchContext::kNone, BenchContext::kFloor, BenchContext::kTrusted}) {
    if (text == BenchContextName(c)) {
      *out = c;
      return Status::Ok();
    }
  }
  return Status::InvalidArgument("--context must be none, floor or trusted, not \"" + text + "\"");
}

Status LoadBenchUnit(const std::string& delay_csv, const std::string& class_csv, u128 at, u128 numbers, Kinds kinds,
                     BenchUnit* out, const BenchUnitOptions& options) {
  std::vector<Record> delays, classes;
  Status st = ReadRecordsCsv(delay_csv, RecordCsvKind::kDelay, &delays);  // its errors name the file
  if (st.ok() && !class_csv.empty()) st = ReadRecordsCsv(class_csv, RecordCsvKind::kClass, &classes);
  if (!st.ok()) return st;
  return NameBenchUnitError(BuildBenchUnit(delays, classes, at, numbers, kinds, out, options), delay_csv, class_csv);
}

Status NameBenchUnitError(const Status& st, const std::string& delay_source, const std::string& class_source) {
  if (st.ok()) return st;
  if (st.message().rfind("delay records:", 0) == 0) return Status::InvalidArgument(delay_source + ": " + st.message());
  if (st.message().rfind("class records:", 0) == 0) return Status::InvalidArgument(class_source + ": " + st.message());
  return st;
}

}  // namespace collatz
