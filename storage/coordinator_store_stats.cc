// CoordinatorStore: the stats jobs' tables (jobs, units, leases, attempts, results).
#include "storage/coordinator_store.h"

#include "storage/coordinator_store_rows.h"

namespace collatz {

using coordinator_rows::Decode;
using coordinator_rows::LeaseStateOf;
using coordinator_rows::UnitStateOf;
using coordinator_rows::UnitStateText;

Status CoordinatorStore::LoadStatsJobs(std::vector<StoredStatsJob>* out) {
  out->clear();
  SqliteStatement q;
  Status st = q.Prepare(db_, "SELECT id, begin_n, end_n, batch, unit_size, priority, cancelled FROM stats_jobs ORDER BY id");
  if (!st.ok()) return st;
  for (bool row; (st = q.Step(&row)).ok() && row;) {
    StoredStatsJob j;
    j.id = q.ColumnInt64(0);
    if (!(st = Decode(q.ColumnText(1), &j.begin)).ok()) return st;
    if (!(st = Decode(q.ColumnText(2), &j.end)).ok()) return st;
    j.batch = static_cast<uint32_t>(q.ColumnInt64(3));
    if (!(st = Decode(q.ColumnText(4), &j.unit_size)).ok()) return st;
    j.priority = static_cast<int32_t>(q.ColumnInt64(5));
    j.cancelled = q.ColumnInt64(6) != 0;
    out->push_back(j);
  }
  return st;
}

Status CoordinatorStore::LoadStatsUnits(std::vector<StoredStatsUnit>* out) {
  out->clear();
  SqliteStatement q;
  Status st = q.Prepare(db_,
                        "SELECT id, job_id, begin_n, end_n, state, failures, quarantined, last_error, finished_by, "
                        "finished_token FROM stats_units ORDER BY job_id, begin_n");
  if (!st.ok()) return st;
  for (bool row; (st = q.Step(&row)).ok() && row;) {
    StoredStatsUnit u;
    u.id = q.ColumnInt64(0);
    u.job_id = q.ColumnInt64(1);
    if (!(st = Decode(q.ColumnText(2), &u.begin)).ok()) return st;
    if (!(st = Decode(q.ColumnText(3), &u.end)).ok()) return st;
    u.state = UnitStateOf(q.ColumnText(4));
    u.failures = static_cast<int32_t>(q.ColumnInt64(5));
    u.quarantined = q.ColumnInt64(6) != 0;
    u.last_error = q.ColumnText(7);
    u.finished_by = q.ColumnIsNull(8) ? 0 : q.ColumnInt64(8);
    u.finished_token = q.ColumnText(9);
    out->push_back(std::move(u));
  }
  return st;
}

Status CoordinatorStore::LoadStatsLeases(std::vector<StoredStatsLease>* out) {
  out->clear();
  SqliteStatement q;
  Status st = q.Prepare(db_,
                        "SELECT token, stats_unit_id, worker_id, state, issued_ms, deadline_ms FROM stats_leases "
                        "ORDER BY issued_ms");
  if (!st.ok()) return st;
  for (bool row; (st = q.Step(&row)).ok() && row;) {
    StoredStatsLease l;
    l.token = q.ColumnText(0);
    l.unit_id = q.ColumnInt64(1);
    l.worker_id = q.ColumnInt64(2);
    l.state = LeaseStateOf(q.ColumnText(3));
    l.issued_ms = q.ColumnInt64(4);
    l.deadline_ms = q.ColumnInt64(5);
    out->push_back(std::move(l));
  }
  return st;
}

Status CoordinatorStore::InsertStatsJob(const StoredStatsJob& j, int64_t* id) {
  SqliteStatement* q;
  Status st = Prepared(
      "INSERT INTO stats_jobs (begin_n, end_n, batch, unit_size, priority, cancelled) VALUES (?1, ?2, ?3, ?4, ?5, ?6)", &q);
  if (!st.ok()) return st;
  q->BindText(1, EncodeNText(j.begin));
  q->BindText(2, EncodeNText(j.end));
  q->BindInt64(3, j.batch);
  q->BindText(4, EncodeNText(j.unit_size));
  q->BindInt64(5, j.priority);
  q->BindInt64(6, j.cancelled ? 1 : 0);
  if (!(st = q->Run()).ok()) return st;
  *id = sqlite3_last_insert_rowid(db_);
  return Status::Ok();
}

Status CoordinatorStore::SetStatsJobCancelled(int64_t id) {
  SqliteStatement* q;
  Status st = Prepared("UPDATE stats_jobs SET cancelled = 1 WHERE id = ?1", &q);
  if (!st.ok()) return st;
  q->BindInt64(1, id);
  return q->Run();
}

Status CoordinatorStore::InsertStatsUnit(const StoredStatsUnit& u, int64_t* id) {
  SqliteStatement* q;
  Status st = Prepared("INSERT INTO stats_units (job_id, begin_n, end_n, state) VALUES (?1, ?2, ?3, ?4)", &q);
  if (!st.ok()) return st;
  q->BindInt64(1, u.job_id);
  q->BindText(2, EncodeNText(u.begin));
  q->BindText(3, EncodeNText(u.end));
  q->BindText(4, UnitStateText(u.state));
  if (!(st = q->Run()).ok()) return st;
  *id = sqlite3_last_insert_rowid(db_);
  return Status::Ok();
}

Status CoordinatorStore::UpdateStatsUnit(const StoredStatsUnit& u) {
  if (u.state == StoredUnitState::kFinished) return Status::Internal("a finished stats unit is written by FinishStatsUnit");
  SqliteStatement* q;
  Status st = Prepared(
      "UPDATE stats_units SET state = ?2, failures = ?3, quarantined = ?4, last_error = ?5, finished_by = ?6, "
      "finished_token = ?7, result = NULL, engine = NULL, seconds = NULL, finished_at = NULL WHERE id = ?1",
      &q);
  if (!st.ok()) return st;
  q->BindInt64(1, u.id);
  q->BindText(2, UnitStateText(u.state));
  q->BindInt64(3, u.failures);
  q->BindInt64(4, u.quarantined ? 1 : 0);
  q->BindText(5, u.last_error);
  if (u.finished_by != 0) q->BindInt64(6, u.finished_by); else q->BindNull(6);
  if (!u.finished_token.empty()) q->BindText(7, u.finished_token); else q->BindNull(7);
  return q->Run();
}

Status CoordinatorStore::FinishStatsUnit(const StoredStatsUnit& u, const std::string& result, const std::string& engine,
                                         double seconds) {
  if (u.state != StoredUnitState::kFinished) return Status::Internal("FinishStatsUnit needs a finished unit");
  SqliteStatement* q;
  Status st = Prepared(
      "UPDATE stats_units SET state = 'finished', failures = ?2, quarantined = 0, last_error = ?3, finished_by = ?4, "
      "finished_token = ?5, result = ?6, engine = ?7, seconds = ?8, "
      "finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?1",
      &q);
  if (!st.ok()) return st;
  q->BindInt64(1, u.id);
  q->BindInt64(2, u.failures);
  q->BindText(3, u.last_error);
  q->BindInt64(4, u.finished_by);
  q->BindText(5, u.finished_token);
  q->BindBlob(6, result);
  q->BindText(7, engine);
  q->BindDouble(8, seconds);
  return q->Run();
}

Status CoordinatorStore::DeleteStatsUnit(int64_t id) {
  SqliteStatement* q;
  Status st = Prepared("DELETE FROM stats_units WHERE id = ?1", &q);  // cascades to its leases and attempts
  if (!st.ok()) return st;
  q->BindInt64(1, id);
  return q->Run();
}

Status CoordinatorStore::InsertStatsLease(const StoredStatsLease& l) {
  SqliteStatement* q;
  Status st = Prepared(
      "INSERT INTO stats_leases (token, stats_unit_id, worker_id, state, issued_ms, deadline_ms) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
      &q);
  if (!st.ok()) return st;
  q->BindText(1, l.token);
  q->BindInt64(2, l.unit_id);
  q->BindInt64(3, l.worker_id);
  q->BindText(4, LeaseStateName(l.state));
  q->BindInt64(5, l.issued_ms);
  q->BindInt64(6, l.deadline_ms);
  return q->Run();
}

Status CoordinatorStore::UpdateStatsLease(const StoredStatsLease& l) {
  return UpdateLeaseRow("UPDATE stats_leases SET state = ?2, deadline_ms = ?3 WHERE token = ?1", l.token, l.state,
                        l.deadline_ms);
}

Status CoordinatorStore::InsertStatsAttempt(int64_t unit_id, int64_t worker_id, const std::string& token,
                                            const std::string& kind, const std::string& error, int64_t at_ms) {
  return InsertAttemptRow(
      "INSERT INTO stats_attempts (stats_unit_id, worker_id, token, kind, error, at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
      unit_id, worker_id, token, /*empty_token_is_null=*/true, kind, error, at_ms);
}

Status CoordinatorStore::LoadStatsResults(int64_t job_id, u128 from, u128 to,
                                          std::vector<std::pair<u128, std::string>>* out) {
  out->clear();
  SqliteStatement* q;
  Status st = Prepared(
      "SELECT begin_n, result FROM stats_units WHERE job_id = ?1 AND state = 'finished' AND end_n > ?2 AND begin_n < ?3 "
      "ORDER BY begin_n",
      &q);
  if (!st.ok()) return st;
  q->BindInt64(1, job_id);
  q->BindText(2, EncodeNText(from));
  q->BindText(3, EncodeNText(to));
  for (bool row; (st = q->Step(&row)).ok() && row;) {
    u128 begin = 0;
    if (!(st = Decode(q->ColumnText(0), &begin)).ok()) break;
    out->emplace_back(begin, q->ColumnBlob(1));
  }
  q->Reset();
  return st;
}

}  // namespace collatz
