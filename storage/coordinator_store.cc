#include "storage/coordinator_store.h"

#include <sys/stat.h>

#include <cinttypes>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>

#include "storage/coordinator_store_rows.h"
#include "storage/known_points_table.h"
#include "storage/merged_records_table.h"
#include "storage/n_text.h"

namespace collatz {

using coordinator_rows::Decode;
using coordinator_rows::LeaseStateOf;
using coordinator_rows::UnitStateOf;
using coordinator_rows::UnitStateText;

namespace {

const char* KindsText(Kinds k) { return k == Kinds::kDelay ? "delay" : "delay,class"; }
Kinds KindsOf(const std::string& s) { return s == "delay" ? Kinds::kDelay : Kinds::kDelayAndClass; }

const char* AuditText(AuditState a) {
  return a == AuditState::kWanted ? "wanted" : a == AuditState::kPassed ? "passed" : "none";
}
AuditState AuditOf(const std::string& s) {
  return s == "wanted" ? AuditState::kWanted : s == "passed" ? AuditState::kPassed : AuditState::kNone;
}

std::string Hex16(uint64_t x) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, x);
  return buf;
}

std::string JoinHoles(const std::vector<uint32_t>& holes) {
  std::string s;
  for (size_t i = 0; i < holes.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(holes[i]);
  }
  return s;
}
std::vector<uint32_t> SplitHoles(const std::string& s) {
  std::vector<uint32_t> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(static_cast<uint32_t>(std::stoul(item)));
  }
  return out;
}

std::string JoinGpus(const std::vector<std::pair<std::string, std::string>>& gpus) {
  std::string s;
  for (const auto& [model, uuid] : gpus) s += model + "|" + uuid + "\n";
  return s;
}
std::vector<std::pair<std::string, std::string>> SplitGpus(const std::string& s) {
  std::vector<std::pair<std::string, std::string>> out;
  std::stringstream ss(s);
  std::string line;
  while (std::getline(ss, line)) {
    const size_t bar = line.find('|');
    if (bar == std::string::npos) continue;
    out.emplace_back(line.substr(0, bar), line.substr(bar + 1));
  }
  return out;
}

}  // namespace

const char* LeaseStateName(LeaseState s) {
  switch (s) {
    case LeaseState::kActive: return "active";
    case LeaseState::kExpired: return "expired";
    case LeaseState::kReleased: return "released";
    case LeaseState::kCompleted: return "completed";
    case LeaseState::kSuperseded: return "superseded";
    case LeaseState::kRevoked: return "revoked";
    case LeaseState::kRejected: return "rejected";
  }
  return "revoked";
}

Status CoordinatorStore::Open(const std::string& path, std::unique_ptr<CoordinatorStore>* out) {
  // RecordDb checks the file (quick_check, application id, version) and migrates it.
  std::unique_ptr<CoordinatorStore> store(new CoordinatorStore());
  Status st = RecordDb::Open(path, RecordDb::OpenMode::kCreateIfMissing, &store->records_);
  if (!st.ok()) return st;
  int rc = sqlite3_open_v2(path.c_str(), &store->db_, SQLITE_OPEN_READWRITE, nullptr);
  if (rc != SQLITE_OK) return SqliteStatus(store->db_, rc, "cannot open database " + path);
  sqlite3_busy_timeout(store->db_, 10000);
  if (!(st = SqliteExec(store->db_, "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON")).ok()) return st;
  *out = std::move(store);
  return Status::Ok();
}

CoordinatorStore::~CoordinatorStore() {
  statements_.clear();  // finalize before closing
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

Status CoordinatorStore::Prepared(const std::string& sql, SqliteStatement** out) {
  auto it = statements_.find(sql);
  if (it == statements_.end()) {
    auto stmt = std::make_unique<SqliteStatement>();
    Status st = stmt->Prepare(db_, sql);
    if (!st.ok()) return st;
    it = statements_.emplace(sql, std::move(stmt)).first;
  }
  *out = it->second.get();
  return Status::Ok();
}

CoordinatorStore::Write::Write(CoordinatorStore* store) : store_(store) {
  if (!store_->batch_open_) {
    status_ = SqliteExec(store_->db_, "BEGIN IMMEDIATE");
    if (!status_.ok()) return;
    store_->batch_open_ = true;
  }
  status_ = SqliteExec(store_->db_, "SAVEPOINT request");
  open_ = status_.ok();
}

CoordinatorStore::Write::~Write() {
  if (!open_) return;
  sqlite3_exec(store_->db_, "ROLLBACK TO request; RELEASE request", nullptr, nullptr, nullptr);
}

Status CoordinatorStore::Write::Commit() {
  if (!open_) return Status::FailedPrecondition("write is not open");
  Status st = SqliteExec(store_->db_, "RELEASE request");
  if (st.ok()) open_ = false;
  return st;
}

Status CoordinatorStore::FlushBatch() {
  if (!batch_open_) return Status::Ok();
  Status st = SqliteExec(db_, "COMMIT");
  if (st.ok()) batch_open_ = false;
  return st;
}

bool CoordinatorStore::BatchIntact() const { return !batch_open_ || sqlite3_get_autocommit(db_) == 0; }

Status CoordinatorStore::LoadSubmissions(std::vector<StoredSubmission>* out) {
  out->clear();
  SqliteStatement q;
  Status st = q.Prepare(db_, "SELECT id, begin_n, end_n, kinds, unit_size, priority, cancelled FROM submissions ORDER BY id");
  if (!st.ok()) return st;
  for (bool row; (st = q.Step(&row)).ok() && row;) {
    StoredSubmission s;
    s.id = q.ColumnInt64(0);
    if (!(st = Decode(q.ColumnText(1), &s.begin)).ok()) return st;
    if (!(st = Decode(q.ColumnText(2), &s.end)).ok()) return st;
    s.kinds = KindsOf(q.ColumnText(3));
    if (!(st = Decode(q.ColumnText(4), &s.unit_size)).ok()) return st;
    s.priority = static_cast<int32_t>(q.ColumnInt64(5));
    s.cancelled = q.ColumnInt64(6) != 0;
    out->push_back(s);
  }
  return st;
}

Status CoordinatorStore::LoadUnits(std::vector<StoredUnit>* out) {
  out->clear();
  SqliteStatement q;
  Status st = q.Prepare(db_,
                        "SELECT u.id, u.begin_n, u.end_n, u.kinds, u.state, w.submission_id, w.priority, w.failures, "
                        "w.quarantined, w.last_error, w.finished_by, w.finished_token, w.audit_state, u.sieve_bits, "
                        "w.counted_seq, w.checked_by FROM units u LEFT JOIN unit_work w ON w.unit_id = u.id ORDER BY u.begin_n, u.id");
  if (!st.ok()) return st;
  for (bool row; (st = q.Step(&row)).ok() && row;) {
    StoredUnit u;
    u.id = q.ColumnInt64(0);
    if (!(st = Decode(q.ColumnText(1), &u.begin)).ok()) return st;
    if (!(st = Decode(q.ColumnText(2), &u.end)).ok()) return st;
    u.kinds = KindsOf(q.ColumnText(3));
    u.state = UnitStateOf(q.ColumnText(4));
    u.sieve_bits = static_cast<int32_t>(q.ColumnInt64(13));
    if (!q.ColumnIsNull(5)) {
      u.submission_id = q.ColumnInt64(5);
      u.priority = static_cast<int32_t>(q.ColumnInt64(6));
      u.failures = static_cast<int32_t>(q.ColumnInt64(7));
      u.quarantined = q.ColumnInt64(8) != 0;
      u.last_error = q.ColumnText(9);
      u.finished_by = q.ColumnIsNull(10) ? 0 : q.ColumnInt64(10);
      u.finished_token = q.ColumnText(11);
      u.audit = AuditOf(q.ColumnText(12));
      u.counted_seq = q.ColumnInt64(14);
      u.checked_by = q.ColumnInt64(15);
    }
    out->push_back(std::move(u));
  }
  return st;
}

Status CoordinatorStore::LoadWorkers(std::vector<StoredWorker>* out) {
  out->clear();
  SqliteStatement q;
  Status st = q.Prepare(db_,
                        "SELECT id, host, gpus, driver, binary_version, backend, sieve_bits, flagged, flag_reason, "
                        "units_finished, numbers_finished, seconds, work_hash_version, instance_id, unit_sieve_bits, "
                        "checks_agreed, token_name FROM workers ORDER BY id");
  if (!st.ok()) return st;
  for (bool row; (st = q.Step(&row)).ok() && row;) {
    StoredWorker w;
    w.id = q.ColumnInt64(0);
    w.host = q.ColumnText(1);
    w.gpus = SplitGpus(q.ColumnText(2));
    w.driver = q.ColumnText(3);
    w.binary_version = q.ColumnText(4);
    w.backend = q.ColumnText(5);
    w.sieve_bits = static_cast<int32_t>(q.ColumnInt64(6));
    w.flagged = q.ColumnInt64(7) != 0;
    w.flag_reason = q.ColumnText(8);
    w.units_finished = static_cast<uint64_t>(q.ColumnInt64(9));
    if (!(st = Decode(q.ColumnText(10), &w.numbers_finished)).ok()) return st;
    w.seconds = q.ColumnDouble(11);
    w.work_hash_version = static_cast<uint32_t>(q.ColumnInt64(12));
    w.instance_id = q.ColumnText(13);
    w.unit_sieve_bits = q.ColumnInt64(14) != 0;
    w.checks_agreed = static_cast<uint64_t>(q.ColumnInt64(15));
    w.token_name = q.ColumnText(16);
    out->push_back(std::move(w));
  }
  return st;
}

Status CoordinatorStore::LoadLeases(std::vector<StoredLease>* out) {
  out->clear();
  SqliteStatement q;
  Status st = q.Prepare(db_,
                        "SELECT token, unit_id, worker_id, purpose, state, floor, open_holes, issued_ms, deadline_ms, "
                        "table_seq FROM leases ORDER BY issued_ms");
  if (!st.ok()) return st;
  for (bool row; (st = q.Step(&row)).ok() && row;) {
    StoredLease l;
    l.token = q.ColumnText(0);
    l.unit_id = q.ColumnInt64(1);
    l.worker_id = q.ColumnInt64(2);
    l.purpose = q.ColumnText(3) == "audit" ? LeasePurpose::kAudit : LeasePurpose::kSearch;
    l.state = LeaseStateOf(q.ColumnText(4));
    l.floor = static_cast<uint32_t>(q.ColumnInt64(5));
    l.open_holes = SplitHoles(q.ColumnText(6));
    l.issued_ms = q.ColumnInt64(7);
    l.deadline_ms = q.ColumnInt64(8);
    l.table_seq = q.ColumnInt64(9);
    out->push_back(std::move(l));
  }
  return st;
}

Status CoordinatorStore::LoadFinishedUnits(std::vector<std::pair<int64_t, FinishedUnit>>* out) {
  // Same content as RecordDb::LoadFinishedUnits, keyed by unit id.
  out->clear();
  std::vector<FinishedUnit> units;
  Status st = records_->LoadFinishedUnits(&units);
  if (!st.ok()) return st;
  SqliteStatement q;
  if (!(st = q.Prepare(db_, "SELECT id FROM units WHERE state = 'finished' AND id IN (SELECT unit_id FROM unit_results) "
                            "ORDER BY begin_n, id"))
           .ok()) {
    return st;
  }
  size_t i = 0;
  for (bool row; (st = q.Step(&row)).ok() && row; ++i) {
    if (i >= units.size()) return Status::Internal("finished units changed while loading");
    out->emplace_back(q.ColumnInt64(0), std::move(units[i]));
  }
  if (st.ok() && i != units.size()) return Status::Internal("finished units changed while loading");
  return st;
}

Status CoordinatorStore::InsertSubmission(const StoredSubmission& s, int64_t* id) {
  SqliteStatement* q;
  Status st = Prepared(
      "INSERT INTO submissions (begin_n, end_n, kinds, unit_size, priority, cancelled) VALUES (?1, ?2, ?3, ?4, ?5, ?6)", &q);
  if (!st.ok()) return st;
  q->BindText(1, EncodeNText(s.begin));
  q->BindText(2, EncodeNText(s.end));
  q->BindText(3, KindsText(s.kinds));
  q->BindText(4, EncodeNText(s.unit_size));
  q->BindInt64(5, s.priority);
  q->BindInt64(6, s.cancelled ? 1 : 0);
  if (!(st = q->Run()).ok()) return st;
  *id = sqlite3_last_insert_rowid(db_);
  return Status::Ok();
}

Status CoordinatorStore::SetSubmissionCancelled(int64_t id) {
  SqliteStatement* q;
  Status st = Prepared("UPDATE submissions SET cancelled = 1 WHERE id = ?1", &q);
  if (!st.ok()) return st;
  q->BindInt64(1, id);
  return q->Run();
}

Status CoordinatorStore::InsertUnit(const StoredUnit& u, int64_t* id) {
  SqliteStatement* q;
  Status st = Prepared("INSERT INTO units (begin_n, end_n, kinds, state, sieve_bits) VALUES (?1, ?2, ?3, ?4, ?5)", &q);
  if (!st.ok()) return st;
  q->BindText(1, EncodeNText(u.begin));
  q->BindText(2, EncodeNText(u.end));
  q->BindText(3, KindsText(u.kinds));
  q->BindText(4, UnitStateText(u.state));
  q->BindInt64(5, u.sieve_bits);
  if (!(st = q->Run()).ok()) return st;
  *id = sqlite3_last_insert_rowid(db_);
  SqliteStatement* w;
  if (!(st = Prepared("INSERT INTO unit_work (unit_id, submission_id, priority) VALUES (?1, ?2, ?3)", &w)).ok()) return st;
  w->BindInt64(1, *id);
  w->BindInt64(2, u.submission_id);
  w->BindInt64(3, u.priority);
  return w->Run();
}

Status CoordinatorStore::UpdateUnit(const StoredUnit& u) {
  SqliteStatement* q;
  Status st = Prepared(
      "UPDATE units SET state = ?2, finished_at = CASE WHEN ?2 = 'finished' THEN "
      "coalesce(finished_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) ELSE NULL END WHERE id = ?1",
      &q);
  if (!st.ok()) return st;
  q->BindInt64(1, u.id);
  q->BindText(2, UnitStateText(u.state));
  if (!(st = q->Run()).ok()) return st;
  if (u.submission_id == 0) return Status::Ok();
  SqliteStatement* w;
  if (!(st = Prepared("UPDATE unit_work SET failures = ?2, quarantined = ?3, last_error = ?4, finished_by = ?5, "
                      "finished_token = ?6, audit_state = ?7, counted_seq = ?8, checked_by = ?9 WHERE unit_id = ?1",
                      &w))
           .ok()) {
    return st;
  }
  w->BindInt64(1, u.id);
  w->BindInt64(2, u.failures);
  w->BindInt64(3, u.quarantined ? 1 : 0);
  w->BindText(4, u.last_error);
  if (u.finished_by != 0) w->BindInt64(5, u.finished_by); else w->BindNull(5);
  if (!u.finished_token.empty()) w->BindText(6, u.finished_token); else w->BindNull(6);
  w->BindText(7, AuditText(u.audit));
  w->BindInt64(8, u.counted_seq);
  w->BindInt64(9, u.checked_by);
  return w->Run();
}

Status CoordinatorStore::DeleteUnit(int64_t id) {
  SqliteStatement* q;
  Status st = Prepared("DELETE FROM units WHERE id = ?1", &q);  // cascades to bookkeeping, leases, attempts
  if (!st.ok()) return st;
  q->BindInt64(1, id);
  return q->Run();
}

Status CoordinatorStore::InsertWorker(const StoredWorker& w, int64_t* id) {
  SqliteStatement* q;
  Status st = Prepared(
      "INSERT INTO workers (host, gpus, driver, binary_version, backend, sieve_bits, work_hash_version, instance_id, "
      "unit_sieve_bits, token_name) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
      &q);
  if (!st.ok()) return st;
  q->BindText(1, w.host);
  q->BindText(2, JoinGpus(w.gpus));
  q->BindText(3, w.driver);
  q->BindText(4, w.binary_version);
  q->BindText(5, w.backend);
  q->BindInt64(6, w.sieve_bits);
  q->BindInt64(7, w.work_hash_version);
  q->BindText(8, w.instance_id);
  q->BindInt64(9, w.unit_sieve_bits ? 1 : 0);
  q->BindText(10, w.token_name);
  if (!(st = q->Run()).ok()) return st;
  *id = sqlite3_last_insert_rowid(db_);
  return Status::Ok();
}

Status CoordinatorStore::UpdateWorker(const StoredWorker& w) {
  SqliteStatement* q;
  Status st = Prepared(
      "UPDATE workers SET flagged = ?2, flag_reason = ?3, units_finished = ?4, numbers_finished = ?5, seconds = ?6, "
      "checks_agreed = ?7 WHERE id = ?1",
      &q);
  if (!st.ok()) return st;
  q->BindInt64(1, w.id);
  q->BindInt64(2, w.flagged ? 1 : 0);
  q->BindText(3, w.flag_reason);
  q->BindInt64(4, static_cast<int64_t>(w.units_finished));
  q->BindText(5, EncodeNText(w.numbers_finished));
  q->BindDouble(6, w.seconds);
  q->BindInt64(7, static_cast<int64_t>(w.checks_agreed));
  return q->Run();
}

Status CoordinatorStore::InsertLease(const StoredLease& l) {
  SqliteStatement* q;
  Status st = Prepared(
      "INSERT INTO leases (token, unit_id, worker_id, purpose, state, floor, open_holes, issued_ms, deadline_ms, "
      "table_seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
      &q);
  if (!st.ok()) return st;
  q->BindText(1, l.token);
  q->BindInt64(2, l.unit_id);
  q->BindInt64(3, l.worker_id);
  q->BindText(4, l.purpose == LeasePurpose::kAudit ? "audit" : "search");
  q->BindText(5, LeaseStateName(l.state));
  q->BindInt64(6, l.floor);
  q->BindText(7, JoinHoles(l.open_holes));
  q->BindInt64(8, l.issued_ms);
  q->BindInt64(9, l.deadline_ms);
  q->BindInt64(10, l.table_seq);
  return q->Run();
}

Status CoordinatorStore::UpdateLeaseRow(const std::string& sql, const std::string& token, LeaseState state,
                                        int64_t deadline_ms) {
  SqliteStatement* q;
  Status st = Prepared(sql, &q);
  if (!st.ok()) return st;
  q->BindText(1, token);
  q->BindText(2, LeaseStateName(state));
  q->BindInt64(3, deadline_ms);
  return q->Run();
}

Status CoordinatorStore::UpdateLease(const StoredLease& l) {
  return UpdateLeaseRow("UPDATE leases SET state = ?2, deadline_ms = ?3 WHERE token = ?1", l.token, l.state,
                        l.deadline_ms);
}

Status CoordinatorStore::InsertAttemptRow(const std::string& sql, int64_t unit_id, int64_t worker_id,
                                          const std::string& token, bool empty_token_is_null, const std::string& kind,
                                          const std::string& error, int64_t at_ms) {
  SqliteStatement* q;
  Status st = Prepared(sql, &q);
  if (!st.ok()) return st;
  q->BindInt64(1, unit_id);
  if (worker_id != 0) q->BindInt64(2, worker_id); else q->BindNull(2);
  if (empty_token_is_null && token.empty()) q->BindNull(3); else q->BindText(3, token);
  q->BindText(4, kind);
  q->BindText(5, error);
  q->BindInt64(6, at_ms);
  return q->Run();
}

Status CoordinatorStore::InsertAttempt(int64_t unit_id, int64_t worker_id, const std::string& token,
                                       const std::string& kind, const std::string& error, int64_t at_ms) {
  return InsertAttemptRow(
      "INSERT INTO attempts (unit_id, worker_id, token, kind, error, at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)", unit_id,
      worker_id, token, /*empty_token_is_null=*/false, kind, error, at_ms);
}

Status CoordinatorStore::InsertAudit(const StoredAudit& a) {
  SqliteStatement* q;
  Status st = Prepared(
      "INSERT INTO audits (unit_id, original_worker, auditor_worker, token, outcome, detail, at_ms, audited_token, "
      "auditor_result, verdict) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
      &q);
  if (!st.ok()) return st;
  q->BindInt64(1, a.unit_id);
  if (a.original_worker != 0) q->BindInt64(2, a.original_worker); else q->BindNull(2);
  q->BindInt64(3, a.auditor);
  q->BindText(4, a.token);
  q->BindText(5, a.matched ? "matched" : "mismatch");
  q->BindText(6, a.detail);
  q->BindInt64(7, a.at_ms);
  q->BindText(8, a.audited_token);
  q->BindText(9, a.auditor_result);
  q->BindText(10, a.verdict);
  return q->Run();
}

Status CoordinatorStore::LoadOpenAudits(std::vector<StoredAudit>* out) {
  out->clear();
  SqliteStatement q;
  Status st = q.Prepare(db_,
                        "SELECT unit_id, coalesce(original_worker, 0), auditor_worker, token, detail, at_ms, "
                        "audited_token, auditor_result FROM audits WHERE outcome = 'mismatch' AND verdict = ?1 "
                        "ORDER BY id");
  if (!st.ok()) return st;
  q.BindText(1, kVerdictOpen);
  for (bool row; (st = q.Step(&row)).ok() && row;) {
    StoredAudit a;
    a.unit_id = q.ColumnInt64(0);
    a.original_worker = q.ColumnInt64(1);
    a.auditor = q.ColumnInt64(2);
    a.token = q.ColumnText(3);
    a.detail = q.ColumnText(4);
    a.at_ms = q.ColumnInt64(5);
    a.audited_token = q.ColumnText(6);
    a.auditor_result = q.ColumnText(7);
    a.verdict = kVerdictOpen;
    out->push_back(std::move(a));
  }
  return st;
}

Status CoordinatorStore::InsertFlaggedIdentity(const FlaggedIdentity& f) {
  SqliteStatement* q;
  Status st = Prepared(
      "INSERT OR IGNORE INTO flagged_identities (identity, worker_id, reason, flagged_ms) VALUES (?1, ?2, ?3, ?4)", &q);
  if (!st.ok()) return st;
  q->BindText(1, f.identity);
  q->BindInt64(2, f.worker_id);
  q->BindText(3, f.reason);
  q->BindInt64(4, f.flagged_ms);
  return q->Run();
}

Status CoordinatorStore::DeleteFlaggedIdentitiesOf(int64_t worker_id) {
  SqliteStatement* q;
  Status st = Prepared("DELETE FROM flagged_identities WHERE worker_id = ?1", &q);
  if (!st.ok()) return st;
  q->BindInt64(1, worker_id);
  return q->Run();
}

Status CoordinatorStore::LoadFlaggedIdentities(std::vector<FlaggedIdentity>* out) {
  out->clear();
  SqliteStatement q;
  Status st = q.Prepare(db_, "SELECT identity, worker_id, reason, flagged_ms FROM flagged_identities ORDER BY identity");
  if (!st.ok()) return st;
  for (bool row; (st = q.Step(&row)).ok() && row;) {
    FlaggedIdentity f;
    f.identity = q.ColumnText(0);
    f.worker_id = q.ColumnInt64(1);
    f.reason = q.ColumnText(2);
    f.flagged_ms = q.ColumnInt64(3);
    out->push_back(std::move(f));
  }
  return st;
}

Status CoordinatorStore::StoreUnitResult(int64_t unit_id, const UnitResult& r, const UnitProvenance& p) {
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (r.candidates > kMax || r.tally_count > kMax) return Status::OutOfRange("counts do not fit 63 bits");
  SqliteStatement* q;
  Status st = Prepared(
      "INSERT INTO unit_results (unit_id, floor, open_holes, candidates, tally_count, tally_sum, work_hash, engine, "
      "seconds, work_hash_version) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
      &q);
  if (!st.ok()) return st;
  q->BindInt64(1, unit_id);
  q->BindInt64(2, p.floor);
  q->BindInt64(3, static_cast<int64_t>(p.open_holes));
  q->BindInt64(4, static_cast<int64_t>(r.candidates));
  q->BindInt64(5, static_cast<int64_t>(r.tally_count));
  q->BindText(6, std::to_string(r.tally_sum));
  q->BindText(7, Hex16(r.work_hash));
  q->BindText(8, p.engine);
  q->BindDouble(9, p.seconds);
  q->BindInt64(10, r.work_hash_version);
  if (!(st = q->Run()).ok()) return st;
  SqliteStatement* lad;
  if (!(st = Prepared("INSERT INTO unit_ladder (unit_id, n, delay) VALUES (?1, ?2, ?3)", &lad)).ok()) return st;
  for (const Record& rec : r.ladder) {
    lad->BindInt64(1, unit_id);
    lad->BindText(2, EncodeNText(rec.n));
    lad->BindInt64(3, rec.delay);
    if (!(st = lad->Run()).ok()) return st;
  }
  SqliteStatement* mins;
  if (!(st = Prepared("INSERT INTO unit_class_minima (unit_id, delay, n) VALUES (?1, ?2, ?3)", &mins)).ok()) return st;
  for (const Record& rec : r.class_minima) {
    mins->BindInt64(1, unit_id);
    mins->BindInt64(2, rec.delay);
    mins->BindText(3, EncodeNText(rec.n));
    if (!(st = mins->Run()).ok()) return st;
  }
  return Status::Ok();
}

Status CoordinatorStore::DeleteUnitResult(int64_t unit_id) {
  for (const char* sql : {"DELETE FROM unit_results WHERE unit_id = ?1", "DELETE FROM unit_ladder WHERE unit_id = ?1",
                          "DELETE FROM unit_class_minima WHERE unit_id = ?1"}) {
    SqliteStatement* q;
    Status st = Prepared(sql, &q);
    if (!st.ok()) return st;
    q->BindInt64(1, unit_id);
    if (!(st = q->Run()).ok()) return st;
  }
  return Status::Ok();
}

Status CoordinatorStore::WriteMergedRecords(const MergedRecords& merged) {
  return WriteMergedRecordsTable(db_, merged);
}

Status CoordinatorStore::StoreImport(const TrustedImport& import, const std::string& source) {
  SqliteStatement* ins;
  Status st = Prepared("INSERT INTO imports (complete_below, source) VALUES (?1, ?2)", &ins);
  if (!st.ok()) return st;
  ins->BindText(1, EncodeNText(import.complete_below));
  ins->BindText(2, source);
  if (!(st = ins->Run()).ok()) return st;
  const int64_t id = sqlite3_last_insert_rowid(db_);
  SqliteStatement* rec;
  if (!(st = Prepared("INSERT INTO import_records (import_id, kind, n, delay) VALUES (?1, ?2, ?3, ?4)", &rec)).ok()) {
    return st;
  }
  for (int k = 0; k < 2; ++k) {
    for (const Record& r : k == 0 ? import.delay_records : import.class_records) {
      rec->BindInt64(1, id);
      rec->BindText(2, k == 0 ? "delay" : "class");
      rec->BindText(3, EncodeNText(r.n));
      rec->BindInt64(4, r.delay);
      if (!(st = rec->Run()).ok()) return st;
    }
  }
  return Status::Ok();
}

Status CoordinatorStore::StoreKnownPoints(const std::vector<Record>& points, const std::string& source,
                                          size_t* added) {
  return InsertKnownPoints(db_, points, source, added);
}

Status CoordinatorStore::Backup(const std::string& destination, uint64_t* bytes) {
  if (Status st = FlushBatch(); !st.ok()) return st;
  struct stat info;
  if (::stat(destination.c_str(), &info) == 0) return Status::FailedPrecondition(destination + " already exists");
  sqlite3* dest = nullptr;
  int rc = sqlite3_open_v2(destination.c_str(), &dest, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc != SQLITE_OK) {
    Status st = SqliteStatus(dest, rc, "cannot create backup " + destination);
    sqlite3_close_v2(dest);
    return st;
  }
  sqlite3_backup* b = sqlite3_backup_init(dest, "main", db_, "main");
  if (b == nullptr) {
    Status st = SqliteStatus(dest, sqlite3_errcode(dest), "backup to " + destination);
    sqlite3_close_v2(dest);
    return st;
  }
  rc = sqlite3_backup_step(b, -1);
  sqlite3_backup_finish(b);
  Status st = rc == SQLITE_DONE ? Status::Ok() : SqliteStatus(dest, rc, "backup to " + destination);
  sqlite3_close_v2(dest);
  if (st.ok() && ::stat(destination.c_str(), &info) == 0) *bytes = static_cast<uint64_t>(info.st_size);
  return st;
}

Status CoordinatorStore::IntegrityCheck(std::string* result) {
  if (Status st = FlushBatch(); !st.ok()) return st;
  SqliteStatement q;
  Status st = q.Prepare(db_, "PRAGMA integrity_check");
  if (!st.ok()) return st;
  result->clear();
  for (bool row; (st = q.Step(&row)).ok() && row;) {
    if (!result->empty()) *result += "; ";
    *result += q.ColumnText(0);
  }
  return st;
}

}  // namespace collatz
