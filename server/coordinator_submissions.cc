// Submissions: a range cut into units (server/submission_units.h), cancelled, and
// quarantined units put back in the queue.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>

#include "server/coordinator.h"
#include "server/coordinator_util.h"
#include "server/submission_units.h"

namespace collatz::server {

namespace {

using grpc::StatusCode;

}  // namespace

grpc::Status Coordinator::Submit(u128 begin, u128 end, Kinds kinds, u128 unit_size, int32_t priority,
                                 SubmitOutcome* out) {
  if (begin < 1) return grpc::Status(StatusCode::INVALID_ARGUMENT, "range must start at 1 or above");
  if (end <= begin) {
    return grpc::Status(StatusCode::INVALID_ARGUMENT,
                        "empty or reversed range [" + ToDecimal(begin) + ", " + ToDecimal(end) + ")");
  }
  if (unit_size == 0) unit_size = default_unit_size(kinds);
  // The width of a unit of `numbers` numbers with `delay_bits` as the wide width.
  const auto width_of = [&](u128 numbers, int delay_bits) {
    return engines::UnitSieveBits(kinds, numbers, base_bits_, class_bits_, options_.class_sieve_min_numbers, delay_bits,
                                  options_.delay_sieve_min_numbers);
  };
  WriteLock lock(this);
  // What is covered already: imports, and every unit of the same or a wider kind.
  std::vector<std::pair<u128, u128>> covered;
  for (const TrustedImport& imp : imports_) {
    if (kinds == Kinds::kDelay || ImportCoversClasses(imp)) covered.emplace_back(1, imp.complete_below);
  }
  for (const auto& [id, u] : units_) {
    if (u.end <= begin || u.begin >= end) continue;
    if (u.kinds == Kinds::kDelay && kinds == Kinds::kDelayAndClass) {
      return grpc::Status(StatusCode::FAILED_PRECONDITION,
                          "range overlaps delay-only unit [" + ToDecimal(u.begin) + ", " + ToDecimal(u.end) +
                              "); submit it as delay-only or choose another range");
    }
    covered.emplace_back(u.begin, u.end);
  }
  std::sort(covered.begin(), covered.end());
  std::vector<std::pair<u128, u128>> pieces;
  u128 at = begin;
  for (const auto& [a, b] : covered) {
    if (b <= at) continue;
    if (a >= end) break;
    if (a > at) pieces.emplace_back(at, a);
    at = std::max(at, b);
    if (at >= end) break;
  }
  if (at < end) pieces.emplace_back(at, end);
  if (pieces.empty()) {
    return grpc::Status(StatusCode::ALREADY_EXISTS,
                        "[" + ToDecimal(begin) + ", " + ToDecimal(end) + ") is already covered or queued");
  }
  u128 units = 0;
  for (const auto& [a, b] : pieces) units += CountUnits(a, b, unit_size);
  if (units > options_.max_units_per_submission) {
    return grpc::Status(StatusCode::INVALID_ARGUMENT, "submission would make " + ToDecimal(units) +
                                                          " units; choose a larger unit size");
  }
  StoredSubmission sub;
  sub.begin = begin;
  sub.end = end;
  sub.kinds = kinds;
  sub.unit_size = unit_size;
  sub.priority = priority;
  std::vector<UnitMem> made;
  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), "submit");
  RETURN_IF_DB_ERROR(store_->InsertSubmission(sub, &sub.id), "submit");
  for (const auto& [a, b] : pieces) {
    for (u128 x = a; x < b;) {
      UnitMem u;
      u.begin = x;
      u.end = UnitEnd(x, b, unit_size);
      u.kinds = kinds;
      u.submission_id = sub.id;
      u.priority = priority;
      // Fixed from now on: the unit is searched, verified and audited with this width.
      u.sieve_bits = width_of(u.end - u.begin, delay_sieve_bits());
      RETURN_IF_DB_ERROR(store_->InsertUnit(u, &u.id), "submit");
      made.push_back(u);
      x = u.end;
    }
  }
  RETURN_IF_DB_ERROR(txn->Commit(), "submit");
  submissions_[sub.id] = sub;
  for (UnitMem& u : made) {
    Enqueue(u);
    units_[u.id] = u;
  }
  out->submission_id = sub.id;
  out->accepted = pieces;
  out->units = made.size();
  std::map<int, uint64_t> by_width;
  for (const UnitMem& u : made) ++by_width[u.sieve_bits];
  std::string widths;
  for (const auto& [bits, n] : by_width) widths += (widths.empty() ? "" : ", ") + std::to_string(n) + " of " + std::to_string(bits) + " bits";
  spdlog::info("submission={} [{}, {}) {} priority {}: {} pieces, {} units ({})", sub.id, ToDecimal(begin), ToDecimal(end),
               kinds == Kinds::kDelay ? "delay" : "delay,class", priority, pieces.size(), made.size(), widths);
  // Units that the wide width would serve, on a server that did not build its tables.
  const int kept_bits = width_of(unit_size, delay_sieve_bits());
  if (kept_bits != width_of(unit_size, delay_bits_)) {
    spdlog::warn("submission={}: its {} units of {} numbers keep {} bits: this server did not build the {}-bit "
                 "tables (start it with --unit-size {} or more for GPU campaigns; docs/OPERATIONS.md, section 13)",
                 sub.id, kinds == Kinds::kDelay ? "delay-only" : "delay+class", ToDecimal(unit_size), kept_bits,
                 delay_bits_, ToDecimal(options_.delay_sieve_min_numbers));
  }
  return grpc::Status::OK;
}

grpc::Status Coordinator::Cancel(int64_t submission_id, uint64_t* units_removed) {
  WriteLock lock(this);
  auto sit = submissions_.find(submission_id);
  if (sit == submissions_.end()) {
    return grpc::Status(StatusCode::NOT_FOUND, "unknown submission " + std::to_string(submission_id));
  }
  if (sit->second.cancelled) {
    return grpc::Status(StatusCode::FAILED_PRECONDITION, "submission " + std::to_string(submission_id) + " is already cancelled");
  }
  std::vector<int64_t> doomed;
  for (const auto& [id, u] : units_) {
    if (u.submission_id == submission_id && u.state != StoredUnitState::kFinished) doomed.push_back(id);
  }
  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), "cancel");
  RETURN_IF_DB_ERROR(store_->SetSubmissionCancelled(submission_id), "cancel");
  for (int64_t id : doomed) RETURN_IF_DB_ERROR(store_->DeleteUnit(id), "cancel");  // cascades to its leases
  RETURN_IF_DB_ERROR(txn->Commit(), "cancel");
  sit->second.cancelled = true;
  for (int64_t id : doomed) {
    Dequeue(units_[id]);
    units_.erase(id);
  }
  for (auto it = leases_.begin(); it != leases_.end();) {
    it = units_.count(it->second.unit_id) ? std::next(it) : leases_.erase(it);
  }
  *units_removed = doomed.size();
  spdlog::info("submission={} cancelled: {} unfinished units removed", submission_id, doomed.size());
  return grpc::Status::OK;
}

grpc::Status Coordinator::RequeueQuarantined(int64_t unit_id, int64_t stats_unit_id, bool all, uint64_t* requeued) {
  *requeued = 0;
  if (static_cast<int>(unit_id != 0) + static_cast<int>(stats_unit_id != 0) + static_cast<int>(all) != 1) {
    return grpc::Status(StatusCode::INVALID_ARGUMENT, "give one unit, one stats unit, or all");
  }
  WriteLock lock(this);
  std::vector<int64_t> units, stats_units;
  auto pick = [&](auto& map, int64_t id, const char* what, std::vector<int64_t>* out) -> grpc::Status {
    auto it = map.find(id);
    if (it == map.end()) return grpc::Status(StatusCode::NOT_FOUND, std::string("unknown ") + what + " " + std::to_string(id));
    if (!it->second.quarantined) {
      return grpc::Status(StatusCode::FAILED_PRECONDITION, std::string(what) + " " + std::to_string(id) + " is not quarantined");
    }
    out->push_back(id);
    return grpc::Status::OK;
  };
  if (all) {
    for (const auto& [id, u] : units_) {
      if (u.quarantined) units.push_back(id);
    }
    for (const auto& [id, u] : stats_units_) {
      if (u.quarantined) stats_units.push_back(id);
    }
  } else if (grpc::Status st = unit_id != 0 ? pick(units_, unit_id, "unit", &units)
                                            : pick(stats_units_, stats_unit_id, "stats unit", &stats_units);
             !st.ok()) {
    return st;
  }
  // Write first, then change memory.
  auto cleared = [](auto u) {
    u.failures = 0;
    u.quarantined = false;
    return u;
  };
  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), "requeue");
  for (int64_t id : units) RETURN_IF_DB_ERROR(store_->UpdateUnit(cleared(StoredUnit(units_[id]))), "requeue");
  for (int64_t id : stats_units) {
    RETURN_IF_DB_ERROR(store_->UpdateStatsUnit(cleared(StoredStatsUnit(stats_units_[id]))), "requeue");
  }
  RETURN_IF_DB_ERROR(txn->Commit(), "requeue");
  auto requeue = [&](auto& u, const char* what) {
    u = cleared(u);
    if (u.state == StoredUnitState::kPending) Enqueue(u);
    spdlog::info("{}={} requeued after quarantine (last error: {})", what, u.id, u.last_error);
  };
  for (int64_t id : units) requeue(units_[id], "unit");
  for (int64_t id : stats_units) requeue(stats_units_[id], "stats unit");
  *requeued = units.size() + stats_units.size();
  return grpc::Status::OK;
}

}  // namespace collatz::server
