#include "server/auth.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <memory>

namespace collatz::server {

namespace {

using grpc::StatusCode;

std::string Hex(const unsigned char* p, size_t n) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out(2 * n, '0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[p[i] >> 4];
    out[2 * i + 1] = kDigits[p[i] & 15];
  }
  return out;
}

}  // namespace

bool ConstantTimeEquals(const std::string& a, const std::string& b) {
  volatile unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff = diff | (x ^ y);
  }
  return diff == 0;
}

std::string Sha256Hex(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  // EVP_Digest fails only without memory or a SHA-256 implementation; an empty digest
  // then matches no stored token.
  if (EVP_Digest(text.data(), text.size(), digest, &n, EVP_sha256(), nullptr) != 1 || n != 32) return "";
  return Hex(digest, n);
}

Status NewTokenText(std::string* token) {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return Status::Internal("no random bytes for a token (OpenSSL RAND_bytes)");
  *token = Hex(bytes, sizeof bytes);
  return Status::Ok();
}

bool ValidTokenName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  });
}

TokenAuth::TokenAuth(std::string shared, TokenStore* tokens, const Clock* clock)
    : shared_(std::move(shared)), tokens_(tokens), clock_(clock) {}

int64_t TokenAuth::NowMs() const { return clock_ != nullptr ? clock_->NowMs() : system_clock_.NowMs(); }

grpc::Status TokenAuth::Unavailable(const Status& st) const {
  return grpc::Status(StatusCode::UNAVAILABLE, "cannot read the server's tokens: " + st.message());
}

bool TokenAuth::enabled() const {
  if (!shared_.empty()) return true;
  if (tokens_ == nullptr) return false;
  std::lock_guard<std::mutex> lock(mu_);
  if (any_stored_) return true;
  bool any = false;
  if (!tokens_->Any(&any).ok()) return true;  // a database error closes rather than opens
  any_stored_ = any;
  return any;
}

grpc::Status TokenAuth::Check(const grpc::ServerContext* context, Caller* caller) const {
  const auto& md = context->client_metadata();
  auto it = md.find("authorization");
  if (it == md.end()) return Authenticate(nullptr, caller);
  const std::string value(it->second.data(), it->second.size());
  const std::string prefix = "Bearer ";
  if (value.compare(0, prefix.size(), prefix) != 0) {
    if (!enabled()) {
      *caller = Caller();
      return grpc::Status::OK;
    }
    return grpc::Status(StatusCode::UNAUTHENTICATED, "wrong token");
  }
  const std::string presented = value.substr(prefix.size());
  return Authenticate(&presented, caller);
}

grpc::Status TokenAuth::Authenticate(const std::string* presented, Caller* caller) const {
  *caller = Caller();  // admin, no name: the shared token, or authentication off
  if (presented == nullptr || presented->empty()) {
    if (!enabled()) return grpc::Status::OK;
    return grpc::Status(StatusCode::UNAUTHENTICATED, "missing token (authorization: Bearer ...)");
  }
  if (!shared_.empty() && ConstantTimeEquals(*presented, shared_)) return grpc::Status::OK;
  if (tokens_ != nullptr) {
    StoredToken t;
    bool found = false;
    Status st = tokens_->FindBySha256(Sha256Hex(*presented), &t, &found);
    if (!st.ok()) return Unavailable(st);
    if (found) {
      if (t.revoked_ms != 0) return grpc::Status(StatusCode::UNAUTHENTICATED, "token '" + t.name + "' was revoked");
      caller->role = t.role;
      caller->token_name = t.name;
      std::lock_guard<std::mutex> lock(mu_);
      any_stored_ = true;
      last_used_[t.name] = NowMs();
      return grpc::Status::OK;
    }
  }
  // Authentication off: a token sent anyway is not checked (as before tokens were stored).
  if (!enabled()) return grpc::Status::OK;
  return grpc::Status(StatusCode::UNAUTHENTICATED, "wrong token");
}

grpc::Status TokenAuth::WorkerTokenDenied(const Caller& caller) {
  return grpc::Status(StatusCode::PERMISSION_DENIED,
                      "token '" + caller.token_name +
                          "' has the worker role: it may call only the Worker service (Register, Lease, Heartbeat, "
                          "Complete, Release); this call needs an admin token or the server's shared token");
}

grpc::Status TokenAuth::CheckAdmin(const grpc::ServerContext* context) const {
  Caller caller;
  grpc::Status st = Check(context, &caller);
  if (!st.ok()) return st;
  return caller.role == TokenRole::kAdmin ? grpc::Status::OK : WorkerTokenDenied(caller);
}

grpc::Status TokenAuth::AddToken(const std::string& name, TokenRole role, std::string* token) {
  if (tokens_ == nullptr) return grpc::Status(StatusCode::FAILED_PRECONDITION, "this server keeps no tokens");
  if (!ValidTokenName(name)) {
    return grpc::Status(StatusCode::INVALID_ARGUMENT, "a token name is 1 to 64 of A-Z a-z 0-9 . _ - (a host name)");
  }
  std::lock_guard<std::mutex> lock(manage_mu_);
  StoredToken old;
  bool found = false;
  Status st = tokens_->FindByName(name, &old, &found);
  if (!st.ok()) return Unavailable(st);
  if (found) {
    return grpc::Status(StatusCode::ALREADY_EXISTS,
                        "a token named '" + name + "' exists" + (old.revoked_ms != 0 ? " (revoked)" : "") +
                            ": names are never reused, since flags and workers refer to them");
  }
  if (role == TokenRole::kWorker && shared_.empty()) {
    std::vector<StoredToken> all;
    if (!(st = tokens_->List(&all)).ok()) return Unavailable(st);
    const bool admin = std::any_of(all.begin(), all.end(),
                                   [](const StoredToken& t) { return t.role == TokenRole::kAdmin && t.revoked_ms == 0; });
    if (!admin) {
      return grpc::Status(StatusCode::FAILED_PRECONDITION,
                          "this server has no shared token and no admin token: add an admin token first "
                          "(collatzctl tokens add --name NAME --role admin), since once a token exists every call "
                          "needs one and a worker token cannot manage tokens");
    }
  }
  std::string text;
  if (!(st = NewTokenText(&text)).ok()) return grpc::Status(StatusCode::INTERNAL, st.message());
  StoredToken t;
  t.name = name;
  t.role = role;
  t.sha256 = Sha256Hex(text);
  t.created_ms = NowMs();
  if (t.sha256.size() != 64) return grpc::Status(StatusCode::INTERNAL, "cannot compute SHA-256 (OpenSSL)");
  if (!(st = tokens_->Insert(t)).ok()) return Unavailable(st);
  {
    std::lock_guard<std::mutex> l(mu_);
    any_stored_ = true;
  }
  *token = std::move(text);
  return grpc::Status::OK;
}

grpc::Status TokenAuth::RevokeToken(const std::string& name) {
  if (tokens_ == nullptr) return grpc::Status(StatusCode::NOT_FOUND, "this server keeps no tokens");
  std::lock_guard<std::mutex> lock(manage_mu_);
  std::vector<StoredToken> all;
  Status st = tokens_->List(&all);
  if (!st.ok()) return Unavailable(st);
  auto it = std::find_if(all.begin(), all.end(), [&](const StoredToken& t) { return t.name == name; });
  if (it == all.end()) return grpc::Status(StatusCode::NOT_FOUND, "no token named '" + name + "'");
  if (it->revoked_ms != 0) return grpc::Status(StatusCode::ALREADY_EXISTS, "token '" + name + "' is already revoked");
  if (it->role == TokenRole::kAdmin && shared_.empty()) {
    const bool other = std::any_of(all.begin(), all.end(), [&](const StoredToken& t) {
      return t.role == TokenRole::kAdmin && t.revoked_ms == 0 && t.name != name;
    });
    if (!other) {
      return grpc::Status(StatusCode::FAILED_PRECONDITION,
                          "'" + name + "' is the last admin token and the server has no shared token: add another "
                          "admin token first (collatzctl tokens add --role admin), or nobody could manage it");
    }
  }
  if (!(st = tokens_->Revoke(name, NowMs())).ok()) return Unavailable(st);
  return grpc::Status::OK;
}

grpc::Status TokenAuth::ListTokens(std::vector<StoredToken>* out) const {
  if (tokens_ == nullptr) {
    out->clear();
    return grpc::Status::OK;
  }
  Status st = tokens_->List(out);
  if (!st.ok()) return Unavailable(st);
  std::lock_guard<std::mutex> lock(mu_);
  for (StoredToken& t : *out) {
    auto it = last_used_.find(t.name);
    if (it != last_used_.end()) t.last_used_ms = std::max(t.last_used_ms, it->second);
  }
  return grpc::Status::OK;
}

Status TokenAuth::FlushLastUsed() {
  if (tokens_ == nullptr) return Status::Ok();
  std::map<std::string, int64_t> pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending.swap(last_used_);
  }
  Status st = tokens_->RecordLastUsed(pending);
  if (!st.ok()) {
    // Kept for the next flush (a later use of the same token wins).
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [name, ms] : pending) last_used_[name] = std::max(last_used_[name], ms);
  }
  return st;
}

}  // namespace collatz::server
