#include "storage/token_store.h"

namespace collatz {

namespace {

constexpr const char* kColumns = "name, role, sha256, created_ms, revoked_ms, last_used_ms";

Status ReadRow(const SqliteStatement& q, StoredToken* t) {
  t->name = q.ColumnText(0);
  if (!ParseTokenRole(q.ColumnText(1), &t->role)) return Status::Corruption("bad token role \"" + q.ColumnText(1) + "\"");
  t->sha256 = q.ColumnText(2);
  t->created_ms = q.ColumnInt64(3);
  t->revoked_ms = q.ColumnInt64(4);
  t->last_used_ms = q.ColumnInt64(5);
  return Status::Ok();
}

}  // namespace

const char* TokenRoleName(TokenRole role) { return role == TokenRole::kAdmin ? "admin" : "worker"; }

bool ParseTokenRole(const std::string& text, TokenRole* role) {
  if (text == "worker") *role = TokenRole::kWorker;
  else if (text == "admin") *role = TokenRole::kAdmin;
  else return false;
  return true;
}

Status TokenStore::Open(const std::string& path, std::unique_ptr<TokenStore>* out) {
  std::unique_ptr<TokenStore> store(new TokenStore());
  const int rc = sqlite3_open_v2(path.c_str(), &store->db_, SQLITE_OPEN_READWRITE, nullptr);
  if (rc != SQLITE_OK) return SqliteStatus(store->db_, rc, "cannot open database " + path);
  sqlite3_busy_timeout(store->db_, 10000);
  Status st = SqliteExec(store->db_, "PRAGMA synchronous = FULL");
  if (!st.ok()) return st;
  SqliteStatement q;
  if (!(st = q.Prepare(store->db_, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'tokens'")).ok()) {
    return st;
  }
  bool row = false;
  if (!(st = q.Step(&row)).ok()) return st;
  if (!row || q.ColumnInt64(0) != 1) {
    return Status::FailedPrecondition("database " + path + " has no tokens table (schema before v9)");
  }
  *out = std::move(store);
  return Status::Ok();
}

TokenStore::~TokenStore() {
  by_sha_.reset();  // finalize before closing
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

Status TokenStore::Insert(const StoredToken& t) {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStatement q;
  Status st = q.Prepare(db_,
                        "INSERT INTO tokens (name, role, sha256, created_ms, revoked_ms, last_used_ms) "
                        "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (name) DO NOTHING");
  if (!st.ok()) return st;
  q.BindText(1, t.name);
  q.BindText(2, TokenRoleName(t.role));
  q.BindText(3, t.sha256);
  q.BindInt64(4, t.created_ms);
  q.BindInt64(5, t.revoked_ms);
  q.BindInt64(6, t.last_used_ms);
  if (!(st = q.Run()).ok()) return st;
  if (sqlite3_changes(db_) != 1) return Status::FailedPrecondition("a token named '" + t.name + "' exists");
  return Status::Ok();
}

Status TokenStore::Find(const char* column, const std::string& value, StoredToken* out, bool* found) {
  *found = false;
  SqliteStatement q;
  Status st = q.Prepare(db_, std::string("SELECT ") + kColumns + " FROM tokens WHERE " + column + " = ?1");
  if (!st.ok()) return st;
  q.BindText(1, value);
  if (!(st = q.Step(found)).ok()) return st;
  return *found ? ReadRow(q, out) : Status::Ok();
}

Status TokenStore::FindBySha256(const std::string& sha256, StoredToken* out, bool* found) {
  std::lock_guard<std::mutex> lock(mu_);
  *found = false;
  Status st;
  if (by_sha_ == nullptr) {
    auto q = std::make_unique<SqliteStatement>();
    if (!(st = q->Prepare(db_, std::string("SELECT ") + kColumns + " FROM tokens WHERE sha256 = ?1")).ok()) return st;
    by_sha_ = std::move(q);
  }
  by_sha_->BindText(1, sha256);
  st = by_sha_->Step(found);
  if (st.ok() && *found) st = ReadRow(*by_sha_, out);
  // Reset at once: a statement left stepping would hold a read transaction open.
  Status rst = by_sha_->Reset();
  return st.ok() ? rst : st;
}

Status TokenStore::FindByName(const std::string& name, StoredToken* out, bool* found) {
  std::lock_guard<std::mutex> lock(mu_);
  return Find("name", name, out, found);
}

Status TokenStore::Revoke(const std::string& name, int64_t at_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStatement q;
  Status st = q.Prepare(db_, "UPDATE tokens SET revoked_ms = CASE WHEN revoked_ms = 0 THEN ?2 ELSE revoked_ms END "
                             "WHERE name = ?1");
  if (!st.ok()) return st;
  q.BindText(1, name);
  q.BindInt64(2, at_ms);
  if (!(st = q.Run()).ok()) return st;
  if (sqlite3_changes(db_) != 1) return Status::NotFound("no token named '" + name + "'");
  return Status::Ok();
}

Status TokenStore::List(std::vector<StoredToken>* out) {
  std::lock_guard<std::mutex> lock(mu_);
  out->clear();
  SqliteStatement q;
  Status st = q.Prepare(db_, std::string("SELECT ") + kColumns + " FROM tokens ORDER BY name");
  if (!st.ok()) return st;
  for (bool row; (st = q.Step(&row)).ok() && row;) {
    StoredToken t;
    if (!(st = ReadRow(q, &t)).ok()) return st;
    out->push_back(std::move(t));
  }
  return st;
}

Status TokenStore::Any(bool* any) {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStatement q;
  Status st = q.Prepare(db_, "SELECT EXISTS (SELECT 1 FROM tokens)");
  if (!st.ok()) return st;
  bool row = false;
  if (!(st = q.Step(&row)).ok()) return st;
  *any = row && q.ColumnInt64(0) != 0;
  return Status::Ok();
}

Status TokenStore::RecordLastUsed(const std::map<std::string, int64_t>& last_used) {
  if (last_used.empty()) return Status::Ok();
  std::lock_guard<std::mutex> lock(mu_);
  SqliteTransaction txn(db_);
  if (!txn.status().ok()) return txn.status();
  SqliteStatement q;
  Status st = q.Prepare(db_, "UPDATE tokens SET last_used_ms = max(last_used_ms, ?2) WHERE name = ?1");
  if (!st.ok()) return st;
  for (const auto& [name, ms] : last_used) {
    q.BindText(1, name);
    q.BindInt64(2, ms);
    if (!(st = q.Run()).ok()) return st;
  }
  return txn.Commit();
}

}  // namespace collatz
