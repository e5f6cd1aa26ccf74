// Token authentication, the server side: workers and admin clients send
// "authorization: Bearer TOKEN" (client/channel.h). Two kinds of token are accepted:
// - the shared token (--token-file / $COLLATZ_TOKEN): role admin, and it may act as a
//   worker; the one-machine set-up. Compared in constant time.
// - stored tokens (collatzctl tokens add, storage/token_store.h), one per host and role,
//   found by their SHA-256 on every call, so that a revocation counts from the next call.
// A worker token may call only the Worker service. Tokens are never logged or echoed.
// Authentication is on when there is a shared token or any stored token was ever issued
// (revoking every token never opens a server). Read-only admin queries need no token.
#pragma once

#include <grpcpp/grpcpp.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/status.h"
#include "server/clock.h"
#include "storage/token_store.h"

namespace collatz::server {

// Equal length and bytes, in time that depends only on the lengths.
bool ConstantTimeEquals(const std::string& a, const std::string& b);

// Lowercase hex SHA-256 of `text` (OpenSSL EVP).
std::string Sha256Hex(const std::string& text);
// A new token: 32 random bytes (OpenSSL's RAND_bytes) as 64 hex digits.
Status NewTokenText(std::string* token);
// Token names: 1 to 64 of [A-Za-z0-9._-] (a host name fits).
bool ValidTokenName(const std::string& name);

// Who made a call.
struct Caller {
  TokenRole role = TokenRole::kAdmin;
  // The stored token's name; "" for the shared token and when authentication is off (no
  // identity: flagging one shared-token worker must not flag them all).
  std::string token_name;
};

class TokenAuth {
 public:
  // shared: the shared token ("" none); tokens: the stored tokens (null: none, and none can
  // be added); clock: for creation, revocation and last-use times (null: the system's).
  explicit TokenAuth(std::string shared, TokenStore* tokens = nullptr, const Clock* clock = nullptr);
  bool enabled() const;

  // OK (either role; *caller set), or UNAUTHENTICATED: missing, wrong or revoked token.
  grpc::Status Check(const grpc::ServerContext* context, Caller* caller) const;
  // As Check, and PERMISSION_DENIED for a worker token.
  grpc::Status CheckAdmin(const grpc::ServerContext* context) const;
  // Check for a token given otherwise (the dashboard's header or cookie); null: none given.
  grpc::Status Authenticate(const std::string* presented, Caller* caller) const;
  // The PERMISSION_DENIED of a worker token on an admin call.
  static grpc::Status WorkerTokenDenied(const Caller& caller);

  // collatzctl tokens (the Admin service). AddToken: INVALID_ARGUMENT for a bad name,
  // ALREADY_EXISTS for a name taken before (revoked or not), FAILED_PRECONDITION for a
  // worker token while no admin credential exists (it would lock every admin out).
  grpc::Status AddToken(const std::string& name, TokenRole role, std::string* token);
  // NOT_FOUND, ALREADY_EXISTS (revoked before), FAILED_PRECONDITION for the last admin
  // credential (no shared token, no other valid admin token).
  grpc::Status RevokeToken(const std::string& name);
  // Every token, revoked ones too; last_used_ms includes calls not yet written.
  grpc::Status ListTokens(std::vector<StoredToken>* out) const;
  // Writes the last-use times noticed since the previous call (the server's sweeper, about
  // once a minute: a write per call would cost an fsync per call).
  Status FlushLastUsed();

 private:
  int64_t NowMs() const;
  grpc::Status Unavailable(const Status& st) const;

  const std::string shared_;
  TokenStore* const tokens_;
  const Clock* const clock_;
  SystemClock system_clock_;
  std::mutex manage_mu_;  // AddToken and RevokeToken, one at a time
  mutable std::mutex mu_;
  mutable bool any_stored_ = false;                     // sticky once true
  mutable std::map<std::string, int64_t> last_used_;    // noticed, not yet written
};

}  // namespace collatz::server
