// The record database: finished units with their results, trusted imports, and the
// merged records derived from them (docs/DATABASE.md). One SQLite file in WAL mode with
// synchronous=FULL; every change is one transaction, so a crash loses nothing committed.
//
// Opening checks the file first on a read-only connection (PRAGMA quick_check, the
// application id, the schema version), so a damaged, foreign or too-new file is refused
// with a clear message and is never written to.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/merge.h"
#include "core/status.h"
#include "core/unit.h"

namespace collatz {

enum class RecordKind { kDelay, kClass };

// How a unit was searched; stored beside its result for audits.
struct UnitProvenance {
  uint32_t floor = 0;
  uint64_t open_holes = 0;
  std::string engine;
  double seconds = 0;
};

class RecordDb {
 public:
  enum class OpenMode {
    kCreateIfMissing,  // creates the file and the schema when absent
    kExistingOnly,     // NotFound when the file is absent
  };

  // Opens (and migrates to the latest schema) the database at `path`.
  static Status Open(const std::string& path, OpenMode mode, std::unique_ptr<RecordDb>* out);

  ~RecordDb();
  RecordDb(const RecordDb&) = delete;
  RecordDb& operator=(const RecordDb&) = delete;

  const std::string& path() const { return path_; }
  Status SchemaVersion(int* version);

  // Every unit in state 'finished', ascending by begin.
  Status LoadFinishedUnits(std::vector<FinishedUnit>* out);
  // Every trusted import, in the order imported.
  Status LoadImports(std::vector<TrustedImport>* out);

  // Stores a finished unit and its result in one transaction. If `merged` is given, the
  // merged records are replaced in the same transaction (they then include this unit).
  Status StoreFinishedUnit(const FinishedUnit& unit, const UnitProvenance& provenance,
                           const MergedRecords* merged = nullptr, int64_t* unit_id = nullptr);

  // Stores a trusted import in one transaction (and the merged records, as above).
  Status StoreImport(const TrustedImport& import, const std::string& source, const MergedRecords* merged = nullptr);

  // Stores one import of known points (checked by the caller: core/known_points.h) in one
  // transaction; numbers already stored keep their rows. *added: the new ones.
  Status StoreKnownPoints(const std::vector<Record>& points, const std::string& source, size_t* added);
  // Every stored known point, ascending by n.
  Status LoadKnownPoints(std::vector<Record>* out);

  // Replaces the derived records (final and candidates) and the covered prefixes.
  Status StoreMergedRecords(const MergedRecords& merged);

  // The merged records as last stored; *present is false if none were ever stored.
  Status LoadMergedRecords(MergedRecords* out, bool* present);

  // Final records of one kind (delay: ascending n; class: ascending delay), all below
  // the covered prefix of that kind, which is returned too (1 when nothing is covered).
  Status QueryFinalRecords(RecordKind kind, std::vector<Record>* out, u128* covered_prefix);

 private:
  RecordDb(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  Status WriteMergedRecords(const MergedRecords& merged);

  std::string path_;
  sqlite3* db_;
};

}  // namespace collatz
