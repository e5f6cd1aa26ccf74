// Trusted imports: record lists checked against the published points before they count
// as covered (core/import_check.h); and known points, exact numbers that close classes
// (core/known_points.h).
#include <spdlog/spdlog.h>

#include "core/class_members.h"
#include "core/import_check.h"
#include "core/known_points.h"
#include "core/published_points.h"
#include "server/coordinator.h"
#include "server/coordinator_util.h"

namespace collatz::server {

namespace {

using grpc::StatusCode;

}  // namespace

grpc::Status Coordinator::Import(const TrustedImport& import, const std::string& source, u128* covered_prefix) {
  WriteLock lock(this);
  // Trusted means complete, not unchecked: every delay is recomputed, and every number
  // known here (the published records, every point of the merge) must fit a complete list
  // (core/import_check.h; `collatzctl import --db` applies the same rules).
  const Status checked = CheckTrustedImport(import, ClassMemberSeeds(merged_, PublishedDelayPoints()));
  if (!checked.ok()) return grpc::Status(StatusCode::INVALID_ARGUMENT, "import refused: " + checked.message());
  std::vector<TrustedImport> imports = imports_;
  imports.push_back(import);
  MergedRecords merged = MergeRecords(imports, MergeInputs(), known_points_);
  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), "import");
  RETURN_IF_DB_ERROR(store_->StoreImport(import, source.substr(0, 500)), "import");
  RETURN_IF_DB_ERROR(store_->WriteMergedRecords(merged), "import");
  RETURN_IF_DB_ERROR(txn->Commit(), "import");
  imports_ = std::move(imports);
  merged_ = std::move(merged);
  merged_dirty_ = false;
  merged_written_ = true;
  *covered_prefix = merged_.covered_prefix;
  spdlog::info("import from {}: complete below {}, {} delay and {} class records; covered prefix {}", source,
               ToDecimal(import.complete_below), import.delay_records.size(), import.class_records.size(),
               ToDecimal(merged_.covered_prefix));
  return grpc::Status::OK;
}

grpc::Status Coordinator::AddKnownPoints(const std::vector<Record>& points, const std::string& source, size_t* added,
                                         size_t* stored) {
  // Delays are recomputed before the lock: up to 100000 numbers on GMP take seconds.
  Status checked = CheckKnownPointRows(points);
  if (!checked.ok()) return grpc::Status(StatusCode::INVALID_ARGUMENT, "known points refused: " + checked.message());
  WriteLock lock(this);
  // Exact points that contradict a trusted import prove it wrong: refused, with the import named.
  checked = CheckKnownPointsFitImports(points, imports_);
  if (!checked.ok()) return grpc::Status(StatusCode::INVALID_ARGUMENT, "known points refused: " + checked.message());
  auto txn = store_->Begin();
  RETURN_IF_DB_ERROR(txn->status(), "known points");
  RETURN_IF_DB_ERROR(store_->StoreKnownPoints(points, source.substr(0, 500), added), "known points");
  RETURN_IF_DB_ERROR(txn->Commit(), "known points");
  // The same union in memory.
  known_points_.insert(known_points_.end(), points.begin(), points.end());
  SortKnownPoints(&known_points_);
  // The merged records themselves do not change (points are never records); leases made
  // from now on see the points.
  merged_.known_points = known_points_;
  *stored = known_points_.size();
  spdlog::info("known points from {}: {} given, {} new, {} held", source, points.size(), *added, *stored);
  return grpc::Status::OK;
}

}  // namespace collatz::server
