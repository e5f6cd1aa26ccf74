// The coordinator's writes for the dashboard (schema v6 and v7): finished work per minute
// (search and stats units apart) and events. Part of CoordinatorStore; they run inside the caller's Write like every other.
#include "storage/coordinator_store.h"
#include "storage/n_text.h"

namespace collatz {

Status CoordinatorStore::AddMinuteTotal(const char* read_sql, const char* upsert_sql, int64_t at_ms, u128 numbers) {
  const int64_t minute = at_ms - at_ms % 60000;
  SqliteStatement* read;
  Status st = Prepared(read_sql, &read);
  if (!st.ok()) return st;
  read->BindInt64(1, minute);
  bool row = false;
  u128 total = numbers;
  if (!(st = read->Step(&row)).ok()) return st;
  if (row) {
    u128 before = 0;
    st = DecodeNText(read->ColumnText(0), &before);
    if (st.ok()) total += before;
  }
  Status reset = read->Reset();
  if (!st.ok()) return st;
  if (!reset.ok()) return reset;
  SqliteStatement* q;
  if (!(st = Prepared(upsert_sql, &q)).ok()) return st;
  q->BindInt64(1, minute);
  q->BindText(2, EncodeNText(total));
  return q->Run();
}

Status CoordinatorStore::AddThroughput(int64_t at_ms, u128 numbers) {
  return AddMinuteTotal("SELECT numbers FROM throughput WHERE minute_ms = ?1",
                        "INSERT INTO throughput (minute_ms, units, numbers) VALUES (?1, 1, ?2) "
                        "ON CONFLICT (minute_ms) DO UPDATE SET units = units + 1, numbers = ?2",
                        at_ms, numbers);
}

Status CoordinatorStore::AddStatsThroughput(int64_t at_ms, u128 numbers) {
  return AddMinuteTotal("SELECT numbers FROM stats_throughput WHERE minute_ms = ?1",
                        "INSERT INTO stats_throughput (minute_ms, units, numbers) VALUES (?1, 1, ?2) "
                        "ON CONFLICT (minute_ms) DO UPDATE SET units = units + 1, numbers = ?2",
                        at_ms, numbers);
}

Status CoordinatorStore::InsertEvent(int64_t at_ms, const std::string& kind, const std::string& detail) {
  SqliteStatement* q;
  Status st = Prepared("INSERT INTO events (at_ms, kind, detail) VALUES (?1, ?2, ?3)", &q);
  if (!st.ok()) return st;
  q->BindInt64(1, at_ms);
  q->BindText(2, kind);
  q->BindText(3, detail);
  return q->Run();
}

}  // namespace collatz
