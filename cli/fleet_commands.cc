#include "cli/fleet_commands.h"

#include <grpcpp/grpcpp.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <optional>
#include <regex>
#include <set>

#include "cli/admin_rpc.h"
#include "cli/cli_util.h"
#include "cli/exit_codes.h"
#include "proto/collatz.grpc.pb.h"
#include "proto/wire.h"

namespace collatz::cli {

namespace {

using wire::FromWire;

struct UnflagArgs {
  Connection c;
  uint64_t worker = 0;
  bool all = false;
};
void PrintUnflagged(uint64_t worker, const v1::UnflagResponse& resp) {
  std::string others;
  for (int i = 1; i < resp.workers_cleared_size(); ++i) {
    others += (others.empty() ? "" : ", ") + std::to_string(resp.workers_cleared(i));
  }
  std::printf("worker %llu unflagged (it was: %s); %llu flagged identities cleared%s\n",
              static_cast<unsigned long long>(worker), resp.reason().c_str(),
              static_cast<unsigned long long>(resp.identities_cleared()),
              others.empty() ? "" : ("; cleared with it: workers " + others).c_str());
}

// --all: every flagged worker, each in the order the server asks for (a worker whose identity
// was flagged with another waits for that one: "unflag worker N first"), as an operator would
// one by one once the cause (a broken card, a bad build) is fixed fleet-wide.
int UnflagAll(const UnflagArgs& a) {
  Client client;
  if (int rc = Connect("unflag", a.c, &client)) return rc;
  v1::ListWorkersResponse workers;
  if (grpc::Status gs = Invoke(client, &v1::Admin::Stub::ListWorkers, v1::ListWorkersRequest(), &workers); !gs.ok()) {
    return RpcError("unflag", client, gs);
  }
  std::set<uint64_t> flagged;
  for (const auto& w : workers.workers()) {
    if (w.flagged()) flagged.insert(w.worker_id());
  }
  size_t unflagged = 0;
  // Each call clears at least one worker or names another flagged one to clear first, so
  // twice the flagged workers bound the calls of a fleet whose flags do not change meanwhile.
  const size_t max_calls = 2 * flagged.size() + 1;
  std::optional<uint64_t> next;
  for (size_t calls = 0; !flagged.empty() && calls < max_calls; ++calls) {
    const uint64_t id = next.value_or(*flagged.begin());
    next.reset();
    v1::UnflagRequest req;
    req.set_worker_id(id);
    v1::UnflagResponse resp;
    const grpc::Status gs = Invoke(client, &v1::Admin::Stub::Unflag, req, &resp);
    if (gs.ok()) {
      PrintUnflagged(id, resp);
      for (uint64_t cleared : resp.workers_cleared()) unflagged += flagged.erase(cleared);
      unflagged += flagged.erase(id);
      continue;
    }
    const std::string message = gs.error_message();
    std::smatch first;
    static const std::regex kFirst("unflag worker ([0-9]+) first");
    if (gs.error_code() == grpc::StatusCode::FAILED_PRECONDITION && std::regex_search(message, first, kFirst) &&
        flagged.count(std::stoull(first[1])) != 0) {
      next = std::stoull(first[1]);
    } else if (gs.error_code() == grpc::StatusCode::FAILED_PRECONDITION &&
               message.find("is not flagged") != std::string::npos) {
      flagged.erase(id);  // cleared meanwhile
    } else {
      return RpcError("unflag", client, gs);
    }
  }
  if (!flagged.empty()) {
    std::fprintf(stderr, "unflag: %zu workers are still flagged (flagged again meanwhile?); run it again\n",
                 flagged.size());
    return kExitFailure;
  }
  std::printf("%zu workers unflagged; their revoked results stay revoked; worker processes refused meanwhile must be "
              "started again\n",
              unflagged);
  return kExitOk;
}

int Unflag(const UnflagArgs& a) {
  if (a.all) return UnflagAll(a);
  if (a.worker == 0) return UsageError("unflag", "give --worker ID or --all (collatzctl workers lists the flagged ones)");
  v1::UnflagRequest req;
  req.set_worker_id(a.worker);
  v1::UnflagResponse resp;
  if (int rc = Call("unflag", a.c, &v1::Admin::Stub::Unflag, req, &resp)) return rc;
  PrintUnflagged(a.worker, resp);
  std::printf("its revoked results stay revoked; a worker process refused meanwhile must be started again\n");
  return kExitOk;
}

struct WorkersArgs {
  Connection c;
};
int Workers(const WorkersArgs& a) {
  v1::ListWorkersResponse resp;
  if (int rc = Call("workers", a.c, &v1::Admin::Stub::ListWorkers, v1::ListWorkersRequest(), &resp)) return rc;
  std::printf("%6s  %-20s %-7s %5s %8s %12s %7s %9s  %-16s %s\n", "id", "host", "backend", "gpus", "units",
              "numbers/s", "leases", "max unit", "token", "state");
  int flagged = 0;
  for (const auto& w : resp.workers()) {
    flagged += w.flagged() ? 1 : 0;
    // Its lease requests' limit: "-" before its first since the server started, "any" without one.
    const u128 max_unit = w.has_max_unit_numbers() ? FromWire(w.max_unit_numbers()) : 0;
    const std::string limit = !w.has_max_unit_numbers() ? "-" : max_unit == 0 ? "any" : FormatNumberShort(max_unit);
    std::printf("%6llu  %-20s %-7s %5d %8llu %12s %7llu %9s  %-16s %s\n", static_cast<unsigned long long>(w.worker_id()),
                w.host().c_str(), w.backend().c_str(), w.gpus_size(), static_cast<unsigned long long>(w.units_finished()),
                FormatRate(w.numbers_per_second()).c_str(), static_cast<unsigned long long>(w.active_leases()),
                limit.c_str(), w.token_name().empty() ? "-" : w.token_name().c_str(),
                w.flagged() ? ("FLAGGED: " + w.flag_reason()).c_str() : "ok");
  }
  if (flagged > 0) {
    std::fprintf(stderr, "%d flagged: once the cause is fixed, collatzctl unflag --worker ID, or --all (docs/CLI.md)\n",
                 flagged);
  }
  return kExitOk;
}

// UTC, to the second; "-" for 0.
std::string UtcTime(uint64_t unix_ms) {
  if (unix_ms == 0) return "-";
  const std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

struct TokensArgs {
  Connection c;
  std::string name;
  std::string role = "worker";
};

int TokensAdd(const TokensArgs& a) {
  v1::AddTokenRequest req;
  req.set_name(a.name);
  if (a.role == "worker") req.set_role(v1::TOKEN_ROLE_WORKER);
  else if (a.role == "admin") req.set_role(v1::TOKEN_ROLE_ADMIN);
  else return UsageError("tokens add", "--role must be worker or admin");
  v1::AddTokenResponse resp;
  if (int rc = Call("tokens add", a.c, &v1::Admin::Stub::AddToken, req, &resp)) return rc;
  // The token alone on stdout (collatzctl tokens add --name h > h.token); the rest on stderr.
  std::printf("%s\n", resp.token().c_str());
  std::fprintf(stderr,
               "collatzctl tokens add: %s token '%s' added. It is shown this once (the server keeps only its "
               "SHA-256): put it in that host's --token-file (mode 0600)\n",
               a.role.c_str(), a.name.c_str());
  return kExitOk;
}

int TokensList(const TokensArgs& a) {
  v1::ListTokensResponse resp;
  if (int rc = Call("tokens list", a.c, &v1::Admin::Stub::ListTokens, v1::ListTokensRequest(), &resp)) return rc;
  std::printf("%-24s %-7s %-21s %-21s %s\n", "name", "role", "created", "revoked", "last used");
  for (const auto& t : resp.tokens()) {
    std::printf("%-24s %-7s %-21s %-21s %s\n", t.name().c_str(), t.role() == v1::TOKEN_ROLE_ADMIN ? "admin" : "worker",
                UtcTime(t.created_unix_ms()).c_str(), UtcTime(t.revoked_unix_ms()).c_str(),
                UtcTime(t.last_used_unix_ms()).c_str());
  }
  return kExitOk;
}

int TokensRevoke(const TokensArgs& a) {
  v1::RevokeTokenRequest req;
  req.set_name(a.name);
  v1::RevokeTokenResponse resp;
  if (int rc = Call("tokens revoke", a.c, &v1::Admin::Stub::RevokeToken, req, &resp)) return rc;
  std::printf("token '%s' revoked: refused from its next call on\n", a.name.c_str());
  return kExitOk;
}

}  // namespace

// The argument structs live as long as the process: CLI11 writes into them while parsing.
void AddUnflagCommand(CLI::App& app) {
  static UnflagArgs unflag;
  CLI::App* uf = app.add_subcommand("unflag", "Clear a worker's flag once its cause is fixed (admin)");
  AddConnectionFlags(uf, &unflag.c);
  CLI::Option* one = uf->add_option("--worker", unflag.worker, "The flagged worker's id (collatzctl workers)");
  uf->add_flag("--all", unflag.all, "Every flagged worker, in the order the server asks for")->excludes(one);
  uf->callback([] { std::exit(Unflag(unflag)); });
}

void AddWorkersCommand(CLI::App& app) {
  static WorkersArgs workers;
  CLI::App* w = app.add_subcommand("workers", "Registered workers, their speed and state");
  AddConnectionFlags(w, &workers.c);
  w->callback([] { std::exit(Workers(workers)); });
}

void AddTokensCommand(CLI::App& app) {
  // One set of arguments for the three: the connection flags go before or after the
  // subcommand (collatzctl tokens --server S add ... or tokens add --server S ...).
  static TokensArgs tokens;
  TokensArgs& tokens_add = tokens;
  TokensArgs& tokens_list = tokens;
  TokensArgs& tokens_revoke = tokens;
  CLI::App* tk = app.add_subcommand("tokens", "Access tokens per host and role on the server (docs/CLI.md)");
  tk->require_subcommand(1);
  AddConnectionFlags(tk, &tokens.c);
  CLI::App* ta = tk->add_subcommand("add", "Issue a token and print it (once: the server keeps only its hash)");
  AddConnectionFlags(ta, &tokens_add.c);
  ta->add_option("--name", tokens_add.name, "Its name, e.g. the host's (A-Z a-z 0-9 . _ -; never reused)")->required();
  ta->add_option("--role", tokens_add.role, "worker (the Worker service only) or admin (everything)")
      ->capture_default_str();
  ta->callback([] { std::exit(TokensAdd(tokens)); });
  CLI::App* tl = tk->add_subcommand("list", "Every token: name, role, created, revoked, last used");
  AddConnectionFlags(tl, &tokens_list.c);
  tl->callback([] { std::exit(TokensList(tokens)); });
  CLI::App* tr = tk->add_subcommand("revoke", "Revoke a token: refused from its next call on");
  AddConnectionFlags(tr, &tokens_revoke.c);
  tr->add_option("name", tokens_revoke.name, "The token's name")->required();
  tr->callback([] { std::exit(TokensRevoke(tokens)); });
}

}  // namespace collatz::cli
