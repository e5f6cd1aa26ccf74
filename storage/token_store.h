// Access tokens per host and role (schema v9, storage/token_schema.h): what the server's
// authentication (server/auth.h) reads on every call and `collatzctl tokens` changes. Only
// a token's SHA-256 is stored. A connection of its own to the record database, apart from
// the coordinator's (CoordinatorStore), so that a lookup never waits for the coordinator's
// lock; its writes are single short statements. Thread-safe.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/status.h"
#include "storage/sqlite_statement.h"

namespace collatz {

enum class TokenRole { kWorker, kAdmin };
const char* TokenRoleName(TokenRole role);                      // "worker", "admin"
bool ParseTokenRole(const std::string& text, TokenRole* role);  // the names above

struct StoredToken {
  std::string name;
  TokenRole role = TokenRole::kWorker;
  std::string sha256;        // lowercase hex digest of the token
  int64_t created_ms = 0;
  int64_t revoked_ms = 0;    // 0: valid
  int64_t last_used_ms = 0;  // 0: never (as last written)
};

class TokenStore {
 public:
  // Opens the existing database at `path`, already migrated to v9 or later (by
  // CoordinatorStore::Open); FailedPrecondition when it has no tokens table.
  static Status Open(const std::string& path, std::unique_ptr<TokenStore>* out);
  ~TokenStore();

  // FailedPrecondition when the name is taken (by a valid or a revoked token).
  Status Insert(const StoredToken& t);
  Status FindBySha256(const std::string& sha256, StoredToken* out, bool* found);
  Status FindByName(const std::string& name, StoredToken* out, bool* found);
  // NotFound for an unknown name; a revoked token keeps its first revocation time.
  Status Revoke(const std::string& name, int64_t at_ms);
  Status List(std::vector<StoredToken>* out);  // by name
  // Whether any token was ever issued (revoked ones count).
  Status Any(bool* any);
  // Raises last_used_ms of the named tokens to the given times (one transaction).
  Status RecordLastUsed(const std::map<std::string, int64_t>& last_used);

 private:
  TokenStore() = default;
  Status Find(const char* column, const std::string& value, StoredToken* out, bool* found);

  std::mutex mu_;
  sqlite3* db_ = nullptr;
  std::unique_ptr<SqliteStatement> by_sha_;  // the per-call lookup, prepared once
};

}  // namespace collatz
