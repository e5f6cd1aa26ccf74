// Trust (docs/PROTOCOL.md, "Trust model"): which results must be checked and by whom, what
// each lease depended on, and the free check of the merge against the published records.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>

#include "core/embedded_records.h"
#include "core/published_points.h"
#include "core/records_csv.h"
#include "server/coordinator.h"
#include "server/coordinator_util.h"

namespace collatz::server {

std::vector<std::string> Coordinator::CheckIdentities(const StoredWorker& w) {
  std::vector<std::string> out = {"host:" + w.host};
  for (const auto& [model, uuid] : w.gpus) {
    if (!uuid.empty()) out.push_back("gpu:" + uuid);
  }
  for (const std::string& identity : WorkerIdentities(w)) {
    if (identity.rfind("token:", 0) == 0) out.push_back(identity);
  }
  return out;
}

bool Coordinator::IndependentChecker(const UnitMem& u, int64_t worker_id) const {
  if (HasOpinion(u, worker_id)) return false;
  auto cit = workers_.find(worker_id);
  if (cit == workers_.end()) return false;
  const std::vector<std::string> mine = CheckIdentities(cit->second);
  auto shares = [&](int64_t other_id) {
    auto it = workers_.find(other_id);
    if (it == workers_.end()) return false;
    for (const std::string& identity : CheckIdentities(it->second)) {
      if (std::find(mine.begin(), mine.end(), identity) != mine.end()) return true;
    }
    return false;
  };
  if (shares(u.finished_by)) return false;
  auto dit = disputes_.find(u.id);
  if (dit != disputes_.end()) {
    for (const Dispute& d : dit->second) {
      if (shares(d.auditor)) return false;
    }
  }
  return true;
}

bool Coordinator::WantsCheck(const WorkerMem& w, int64_t unit_id, const std::string& token) const {
  switch (options_.double_check) {
    case DoubleCheck::kAll: return true;
    case DoubleCheck::kNone: return WantsAudit(unit_id);
    case DoubleCheck::kAdaptive: {
      const double p = AdaptiveCheckProbability(w.checks_agreed, options_.adaptive_floor);
      // Decided by the seed, the unit and its lease: reproducible, and not foreseeable by a
      // worker (the lease token is random).
      uint64_t h = Mix64(static_cast<uint64_t>(unit_id) ^ options_.audit_seed);
      for (char c : token) h = Mix64(h ^ static_cast<unsigned char>(c));
      return static_cast<double>(h >> 11) / static_cast<double>(uint64_t{1} << 53) < p;
    }
  }
  return true;
}

int64_t Coordinator::TableSeqOf(const UnitMem& u) const {
  auto it = leases_.find(u.finished_token);
  return it == leases_.end() ? 0 : it->second.table_seq;
}

void Coordinator::RecordTableAsOf(const UnitMem& u, int64_t seq, UnitSpec* spec) {
  // The merge the search's lease was made from, while it is kept.
  auto hit = merge_history_.find(seq);
  if (hit != merge_history_.end()) {
    RecordTableBelow(*hit->second, u.begin, &spec->known_records, &spec->records_complete_below);
    return;
  }
  // Else the table below u comes from the counted results below it; when none of those was
  // counted after `seq`, it is the current merge's (the usual case: the search moves up).
  std::vector<FinishedUnit> inputs;
  bool newer = false;
  for (const auto& [id, f] : finished_) {
    if (f.end > u.begin) continue;
    auto it = units_.find(id);
    if (it == units_.end() || it->second.audit == AuditState::kWanted) continue;
    if (it->second.counted_seq > seq) {
      newer = true;
      continue;
    }
    inputs.push_back(f);
  }
  if (!newer) {
    RecordTableBelow(merged_, u.begin, &spec->known_records, &spec->records_complete_below);
    return;
  }
  ++counters_.check_table_merges;
  const MergedRecords then = MergeRecords(imports_, inputs);
  RecordTableBelow(then, u.begin, &spec->known_records, &spec->records_complete_below);
}

void Coordinator::PruneMergeHistoryLocked() {
  // The merges still wanted: the current one, those of active leases (a search's result will
  // want its check) and those of results awaiting their check.
  std::set<int64_t> wanted = {merged_seq_};
  for (const auto& [token, l] : leases_) {
    if (l.state == LeaseState::kActive) wanted.insert(l.table_seq);
  }
  for (const auto& [id, u] : units_) {
    if (u.state == StoredUnitState::kFinished && u.audit == AuditState::kWanted) wanted.insert(TableSeqOf(u));
  }
  for (auto it = merge_history_.begin(); it != merge_history_.end();) {
    it = wanted.count(it->first) != 0 ? std::next(it) : merge_history_.erase(it);
  }
}

namespace {

// For each unit begin, the smallest counted_seq among revoked results ending at or below it.
class RevokedBelow {
 public:
  explicit RevokedBelow(const std::vector<RevokedResult>& revoked) {
    for (const auto& r : revoked) {
      if (r.counted_seq == 0) continue;
      auto [it, fresh] = by_end_.emplace(r.end, std::make_pair(r.counted_seq, r.unit_id));
      if (!fresh && r.counted_seq < it->second.first) it->second = {r.counted_seq, r.unit_id};
    }
    std::pair<int64_t, int64_t> best = {INT64_MAX, 0};
    for (auto& [end, v] : by_end_) {
      if (v.first < best.first) best = v;
      v = best;
    }
  }
  // The revoked unit that a search of [begin, ...) with table_seq depended on, or 0.
  int64_t DependedOn(u128 begin, int64_t table_seq) const {
    auto it = by_end_.upper_bound(begin);
    if (it == by_end_.begin()) return 0;
    --it;
    return it->second.first <= table_seq ? it->second.second : 0;
  }
  bool empty() const { return by_end_.empty(); }

 private:
  std::map<u128, std::pair<int64_t, int64_t>> by_end_;  // end -> (min counted_seq, its unit) up to end
};

}  // namespace

std::vector<std::pair<int64_t, int64_t>> Coordinator::DependentUnits(const std::vector<RevokedResult>& revoked,
                                                                     const std::set<int64_t>& skip) const {
  std::vector<std::pair<int64_t, int64_t>> out;
  const RevokedBelow below(revoked);
  if (below.empty()) return out;
  for (const auto& [id, u] : units_) {
    if (u.state != StoredUnitState::kFinished || skip.count(id)) continue;
    const int64_t on = below.DependedOn(u.begin, TableSeqOf(u));
    if (on != 0) out.emplace_back(id, on);
  }
  return out;
}

std::vector<std::pair<std::string, int64_t>> Coordinator::DependentLeases(
    const std::vector<RevokedResult>& revoked) const {
  std::vector<std::pair<std::string, int64_t>> out;
  const RevokedBelow below(revoked);
  if (below.empty()) return out;
  for (const std::string& token : active_tokens_) {
    auto lit = leases_.find(token);
    if (lit == leases_.end() || lit->second.state != LeaseState::kActive) continue;
    auto uit = units_.find(lit->second.unit_id);
    if (uit == units_.end()) continue;
    const int64_t on = below.DependedOn(uit->second.begin, lit->second.table_seq);
    if (on != 0) out.emplace_back(token, on);
  }
  return out;
}

grpc::Status Coordinator::CreditCheckLocked(int64_t worker_id, bool agreed) {
  auto wit = workers_.find(worker_id);
  if (wit == workers_.end() || wit->second.flagged) return grpc::Status::OK;
  WorkerMem& w = wit->second;
  StoredWorker copy = w;
  copy.checks_agreed = agreed ? w.checks_agreed + 1 : 0;
  RETURN_IF_DB_ERROR(store_->UpdateWorker(copy), "crediting a check");
  w.checks_agreed = copy.checks_agreed;
  if (agreed || options_.double_check != DoubleCheck::kAdaptive) return grpc::Status::OK;
  // A disagreement: its latest unchecked results are checked after all (they leave the
  // merge until then).
  std::vector<UnitMem*> unchecked;
  for (auto& [id, u] : units_) {
    if (u.state == StoredUnitState::kFinished && u.finished_by == worker_id && u.audit == AuditState::kNone) {
      unchecked.push_back(&u);
    }
  }
  const size_t first = unchecked.size() > static_cast<size_t>(kRecheckAfterDisagreement)
                           ? unchecked.size() - kRecheckAfterDisagreement
                           : 0;
  // Units by id: the latest finished are not always the highest ids, but ids follow cutting
  // order, which a campaign searches in.
  for (size_t i = first; i < unchecked.size(); ++i) {
    UnitMem* u = unchecked[i];
    UnitMem c = *u;
    c.audit = AuditState::kWanted;
    RETURN_IF_DB_ERROR(store_->UpdateUnit(c), "re-checking after a disagreement");
    u->audit = AuditState::kWanted;
    if (u->audit_token.empty()) audit_queue_.insert(u->id);
  }
  if (unchecked.size() > first) {
    Remerge();
    spdlog::warn("worker={} disagreed with a check: {} of its unchecked results are checked now", worker_id,
                 unchecked.size() - first);
  }
  return grpc::Status::OK;
}

namespace {

// The class records below 2^28 compiled into the binary (core/embedded_records.h), by n.
const std::vector<Record>& EmbeddedClassRecords() {
  static const std::vector<Record> records = [] {
    std::vector<Record> r;
    if (!ParseRecordsCsv(EmbeddedClassRecordsCsv(), RecordCsvKind::kClass, &r).ok()) r.clear();
    std::sort(r.begin(), r.end(), [](const Record& a, const Record& b) { return a.n < b.n; });
    return r;
  }();
  return records;
}
constexpr u128 kEmbeddedClassBound = u128{1} << 28;

// The first difference between `want` and `have` (both by n) below `bound`: the number and
// whether `have` misses it; false when they agree.
bool FirstDifference(const std::vector<Record>& want, std::vector<Record> have, u128 bound, Record* at, bool* missing) {
  std::sort(have.begin(), have.end(), [](const Record& a, const Record& b) { return a.n < b.n; });
  size_t i = 0, j = 0;
  auto below = [&](const std::vector<Record>& v, size_t k) { return k < v.size() && v[k].n < bound; };
  while (below(want, i) && below(have, j) && want[i].n == have[j].n && want[i].delay == have[j].delay) {
    ++i;
    ++j;
  }
  if (!below(want, i) && !below(have, j)) return false;
  *missing = below(want, i) && (!below(have, j) || want[i].n <= have[j].n);
  *at = *missing ? want[i] : have[j];
  return true;
}

}  // namespace

grpc::Status Coordinator::CheckAgainstPublishedLocked(int64_t now) {
  if (!options_.check_published) return grpc::Status::OK;
  for (int round = 0; round < 64 && !published_checked_; ++round) {
    // The merge as it is (a stale one is checked when it is made again), and after a flag
    // the merge without the flagged worker's results.
    if (merged_dirty_) {
      if (round == 0) return grpc::Status::OK;
      RefreshMergedLocked(true);
    }
    // The published delay records (complete below their last + 1) and the exhaustive class
    // records below 2^28, each below the checked prefix of its kind.
    const std::vector<Record>& published = PublishedDelayPoints();
    Record at;
    bool missing = false, is_class = false;
    bool differs = !published.empty() &&
                   FirstDifference(published, merged_.delay_final,
                                   std::min(merged_.covered_prefix, published.back().n + 1), &at, &missing);
    if (!differs && !EmbeddedClassRecords().empty()) {
      differs = FirstDifference(EmbeddedClassRecords(), merged_.class_final,
                                std::min(merged_.class_covered_prefix, kEmbeddedClassBound), &at, &missing);
      is_class = differs;
    }
    if (!differs) {
      published_checked_ = true;
      return grpc::Status::OK;
    }
    // A record left out (or, impossibly for verified entries, one too many or a wrong
    // delay) by the unit that holds the number.
    int64_t culprit_unit = 0, culprit = 0;
    for (const auto& [id, f] : finished_) {
      if (f.begin > at.n || at.n >= f.end || (is_class && f.kinds != Kinds::kDelayAndClass)) continue;
      auto uit = units_.find(id);
      if (uit != units_.end() && uit->second.audit != AuditState::kWanted) {
        culprit_unit = id;
        culprit = uit->second.finished_by;
      }
    }
    const std::string what = std::string(missing ? "misses" : "differs from") +
                             (is_class ? " the class record " : " the published delay record ") + ToDecimal(at.n) +
                             " (delay " + std::to_string(at.delay) + ")";
    if (culprit_unit == 0 || culprit == 0) {
      // An import or a unit stored by collatzctl run: nobody to flag; said once a merge.
      spdlog::error("the merged records {}: no worker's unit holds it (an import or a local run)", what);
      published_checked_ = true;
      return grpc::Status::OK;
    }
    auto txn = store_->Begin();
    RETURN_IF_DB_ERROR(txn->status(), "published check");
    const std::string why = "its unit " + std::to_string(culprit_unit) + " " + what;
    grpc::Status st = FlagWorker(culprit, why, now);
    if (!st.ok()) return st;
    // A result an independent check passed stays with a flag: revoked here all the same (and
    // its checker flagged too: it agreed with a result that leaves a record out).
    const UnitMem& u = units_[culprit_unit];
    if (u.state == StoredUnitState::kFinished) {
      if (u.checked_by != 0 && !(st = FlagWorker(u.checked_by, "passed the check of unit " + std::to_string(culprit_unit) +
                                                                 ", which " + what, now)).ok()) {
        return st;
      }
      if (!(st = RevokeResultsLocked({culprit_unit}, why, now)).ok()) return st;
    }
    RETURN_IF_DB_ERROR(txn->Commit(), "published check");
    spdlog::warn("published check: unit {} of worker {} {}; the worker is flagged", culprit_unit, culprit, what);
    Remerge();
  }
  return grpc::Status::OK;
}

}  // namespace collatz::server
