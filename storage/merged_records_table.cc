#include "storage/merged_records_table.h"

#include <vector>

#include "storage/n_text.h"
#include "storage/sqlite_statement.h"

namespace collatz {

Status WriteMergedRecordsTable(sqlite3* db, const MergedRecords& merged) {
  Status st = SqliteExec(db, "DELETE FROM final_records; DELETE FROM merge_state");
  if (!st.ok()) return st;
  SqliteStatement ins;
  if (!(st = ins.Prepare(db, "INSERT INTO final_records (kind, status, n, delay) VALUES (?1, ?2, ?3, ?4)")).ok()) {
    return st;
  }
  struct Part {
    const char* kind;
    const char* status;
    const std::vector<Record>* records;
  };
  const Part parts[] = {{"delay", "final", &merged.delay_final},
                        {"delay", "candidate", &merged.delay_candidates},
                        {"class", "final", &merged.class_final},
                        {"class", "candidate", &merged.class_candidates}};
  for (const Part& part : parts) {
    for (const Record& r : *part.records) {
      ins.BindText(1, part.kind);
      ins.BindText(2, part.status);
      ins.BindText(3, EncodeNText(r.n));
      ins.BindInt64(4, r.delay);
      if (!(st = ins.Run()).ok()) return st;
    }
  }
  SqliteStatement ms;
  if (!(st = ms.Prepare(db, "INSERT INTO merge_state (id, covered_prefix, class_covered_prefix) VALUES (1, ?1, ?2)"))
           .ok()) {
    return st;
  }
  ms.BindText(1, EncodeNText(merged.covered_prefix));
  ms.BindText(2, EncodeNText(merged.class_covered_prefix));
  return ms.Run();
}

}  // namespace collatz
