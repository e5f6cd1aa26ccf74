#include "cli/admin_commands.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "client/admin_client.h"
#include "cli/exit_codes.h"
#include "cli/import_lists.h"
#include "cli/stats_command.h"
#include "core/records_csv.h"
#include "proto/collatz.grpc.pb.h"
#include "proto/wire.h"

namespace collatz::cli {

namespace {

using wire::FromWire;
using wire::ToWire;

const char* const kCommands[] = {"submit", "cancel", "requeue",        "status",     "workers", "import",
                                 "export", "backup",  "server-records", "stats-fetch", "tokens", "unflag"};

struct Connection {
  std::string server;
  std::string token_file;
  std::string tls_ca;
  int timeout_s = 60;
};

void AddConnectionFlags(CLI::App* cmd, Connection* c) {
  cmd->add_option("--server", c->server, "Server address host:port (default: $COLLATZ_SERVER or 127.0.0.1:50051)");
  cmd->add_option("--token-file", c->token_file, "File with the access token (default: $COLLATZ_TOKEN)");
  cmd->add_option("--tls-ca", c->tls_ca, "PEM root certificate: connect with TLS");
  cmd->add_option("--timeout", c->timeout_s, "Seconds to wait for the server")->capture_default_str();
}

using Client = client::AdminClient;

// Connects, or prints why not and returns an exit code (> 0).
int Connect(const std::string& cmd, const Connection& c, Client* out) {
  Status st = Client::Connect(c.server, c.token_file, c.tls_ca, std::chrono::seconds(c.timeout_s), out);
  return st.ok() ? 0 : Failure(cmd, st);
}

// A gRPC error as a sentence; the exit code: usage for refused input, failure otherwise.
int RpcError(const std::string& cmd, const Client& client, const grpc::Status& st) {
  std::string what;
  switch (st.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      what = "cannot reach the server at " + client.server + " (" + st.error_message() + ")";
      break;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      what = "the server at " + client.server + " did not answer in time";
      break;
    case grpc::StatusCode::UNAUTHENTICATED:
      what = "the server refused the token (" + st.error_message() +
             "); give --token-file or set COLLATZ_TOKEN";
      break;
    case grpc::StatusCode::PERMISSION_DENIED: what = "permission denied: " + st.error_message(); break;
    case grpc::StatusCode::INVALID_ARGUMENT: what = "invalid request: " + st.error_message(); break;
    case grpc::StatusCode::ALREADY_EXISTS: what = "nothing to do: " + st.error_message(); break;
    case grpc::StatusCode::NOT_FOUND: what = "not found: " + st.error_message(); break;
    case grpc::StatusCode::FAILED_PRECONDITION: what = "refused: " + st.error_message(); break;
    case grpc::StatusCode::RESOURCE_EXHAUSTED: what = "request too large: " + st.error_message(); break;
    default: what = "server error (code " + std::to_string(st.error_code()) + "): " + st.error_message(); break;
  }
  std::fprintf(stderr, "collatzctl %s: %s\n", cmd.c_str(), what.c_str());
  const bool usage = st.error_code() == grpc::StatusCode::INVALID_ARGUMENT ||
                     st.error_code() == grpc::StatusCode::ALREADY_EXISTS ||
                     st.error_code() == grpc::StatusCode::NOT_FOUND;
  return usage ? kExitUsage : kExitFailure;
}

// One call on a connected client, with its token and deadline.
template <typename Request, typename Response>
grpc::Status Invoke(const Client& client,
                    grpc::Status (v1::Admin::Stub::*method)(grpc::ClientContext*, const Request&, Response*),
                    const Request& req, Response* resp) {
  grpc::ClientContext ctx;
  client.Prepare(&ctx);
  return (client.stub.get()->*method)(&ctx, req, resp);
}

// Connects and makes one call: 0, or the exit code after printing why it failed.
template <typename Request, typename Response>
int Call(const std::string& cmd, const Connection& c,
         grpc::Status (v1::Admin::Stub::*method)(grpc::ClientContext*, const Request&, Response*), const Request& req,
         Response* resp) {
  Client client;
  if (int rc = Connect(cmd, c, &client)) return rc;
  const grpc::Status gs = Invoke(client, method, req, resp);
  return gs.ok() ? 0 : RpcError(cmd, client, gs);
}

std::string Dec(const v1::U128& x) { return ToDecimal(FromWire(x)); }

// ------------------------------------------------------------------------ commands

struct SubmitArgs {
  Connection c;
  std::string kind = "search";
  std::string from, to, kinds = "delay,class", unit_size;
  uint32_t batch = kDefaultStatsBatch;
  bool batch_given = false;
  int priority = 0;
};

// submit --kind stats: a stats job; the range is checked here as `collatzctl stats` checks it.
int SubmitStatsJob(const SubmitArgs& a) {
  const std::string cmd = "submit";
  u128 from = 0, to = 0, unit = 0;
  Status st = ParseNumberFlag("--from", a.from.empty() ? "0" : a.from, &from);
  if (st.ok()) st = ParseNumberFlag("--to", a.to, &to);
  if (st.ok() && !a.unit_size.empty()) st = ParseNumberFlag("--unit-size", a.unit_size, &unit);
  if (st.ok()) st = ValidateStatsRange(from, to, a.batch);
  if (!st.ok()) return UsageError(cmd, st.message());
  if (!a.unit_size.empty() && unit == 0) return UsageError(cmd, "--unit-size must be positive");
  Client client;
  if (int rc = Connect(cmd, a.c, &client)) return rc;
  v1::SubmitStatsRequest req;
  ToWire(from, req.mutable_begin());
  ToWire(to, req.mutable_end());
  req.set_batch(a.batch);
  ToWire(unit, req.mutable_unit_size());
  req.set_priority(a.priority);
  v1::SubmitStatsResponse resp;
  grpc::ClientContext ctx;
  client.Prepare(&ctx);
  grpc::Status gs = client.stub->SubmitStats(&ctx, req, &resp);
  if (!gs.ok()) return RpcError(cmd, client, gs);
  std::printf("stats job %llu: %llu units, [%s, %s) in batches of %u\n", static_cast<unsigned long long>(resp.job_id()),
              static_cast<unsigned long long>(resp.units()), ToDecimal(from).c_str(), ToDecimal(to).c_str(), a.batch);
  return kExitOk;
}

int Submit(const SubmitArgs& a) {
  const std::string cmd = "submit";
  if (a.kind == "stats") return SubmitStatsJob(a);
  if (a.kind != "search") return UsageError(cmd, "--kind: \"" + a.kind + "\" is not one of: search, stats");
  if (a.batch_given) return UsageError(cmd, "--batch is for --kind stats");
  u128 from = 0, to = 0, unit = 0;
  Kinds kinds;
  Status st = ParseNumberFlag("--from", a.from.empty() ? "1" : a.from, &from);
  if (st.ok()) st = ParseNumberFlag("--to", a.to, &to);
  if (st.ok() && !a.unit_size.empty()) st = ParseNumberFlag("--unit-size", a.unit_size, &unit);
  if (st.ok()) st = ParseKindsFlag(a.kinds, &kinds);
  if (!st.ok()) return UsageError(cmd, st.message());
  if (from < 1) return UsageError(cmd, "--from must be at least 1");
  if (to <= from) return UsageError(cmd, "empty or reversed range [" + a.from + ", " + a.to + ")");
  if (!a.unit_size.empty() && unit == 0) return UsageError(cmd, "--unit-size must be positive");
  Client client;
  if (int rc = Connect(cmd, a.c, &client)) return rc;
  v1::SubmitRequest req;
  ToWire(from, req.mutable_begin());
  ToWire(to, req.mutable_end());
  req.set_kinds(wire::KindsToWire(kinds));
  ToWire(unit, req.mutable_unit_size());
  req.set_priority(a.priority);
  v1::SubmitResponse resp;
  grpc::ClientContext ctx;
  client.Prepare(&ctx);
  grpc::Status gs = client.stub->Submit(&ctx, req, &resp);
  if (!gs.ok()) return RpcError(cmd, client, gs);
  std::printf("submission %llu: %llu units\n", static_cast<unsigned long long>(resp.submission_id()),
              static_cast<unsigned long long>(resp.units()));
  for (const auto& r : resp.accepted()) std::printf("  queued [%s, %s)\n", Dec(r.begin()).c_str(), Dec(r.end()).c_str());
  return kExitOk;
}

struct CancelArgs {
  Connection c;
  uint64_t id = 0;
  uint64_t stats_job = 0;
};
int Cancel(const CancelArgs& a) {
  if ((a.id == 0) == (a.stats_job == 0)) return UsageError("cancel", "give one of --id or --stats-job");
  v1::CancelRequest req;
  req.set_submission_id(a.id);
  req.set_stats_job_id(a.stats_job);
  v1::CancelResponse resp;
  if (int rc = Call("cancel", a.c, &v1::Admin::Stub::Cancel, req, &resp)) return rc;
  std::printf("%s %llu cancelled: %llu unfinished units removed (finished units are kept)\n",
              a.stats_job != 0 ? "stats job" : "submission", static_cast<unsigned long long>(a.id ? a.id : a.stats_job),
              static_cast<unsigned long long>(resp.units_removed()));
  return kExitOk;
}

struct RequeueArgs {
  Connection c;
  uint64_t unit = 0;
  uint64_t stats_unit = 0;
  bool all = false;
};
int Requeue(const RequeueArgs& a) {
  if ((a.unit != 0) + (a.stats_unit != 0) + (a.all ? 1 : 0) != 1) {
    return UsageError("requeue", "give one of --unit, --stats-unit or --all-quarantined");
  }
  v1::RequeueRequest req;
  req.set_unit_id(a.unit);
  req.set_stats_unit_id(a.stats_unit);
  req.set_all_quarantined(a.all);
  v1::RequeueResponse resp;
  if (int rc = Call("requeue", a.c, &v1::Admin::Stub::Requeue, req, &resp)) return rc;
  std::printf("%llu quarantined unit(s) queued again, their failure counts reset\n",
              static_cast<unsigned long long>(resp.units_requeued()));
  return kExitOk;
}

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

// Quarantined units (search or stats) for `status`: collatzctl requeue takes their ids.
nlohmann::json QuarantinedJson(const google::protobuf::RepeatedPtrField<v1::QuarantinedUnit>& units) {
  nlohmann::json q = nlohmann::json::array();
  for (const auto& u : units) {
    q.push_back({{"unit", u.unit_id()}, {"begin", Dec(u.begin())}, {"end", Dec(u.end())}, {"failures", u.failures()},
                 {"last_error", u.last_error()}});
  }
  return q;
}
void PrintQuarantined(const char* what, const google::protobuf::RepeatedPtrField<v1::QuarantinedUnit>& units) {
  for (const auto& u : units) {
    std::printf("QUARANTINED %s %llu [%s, %s): %u failures, last: %s\n", what, static_cast<unsigned long long>(u.unit_id()),
                Dec(u.begin()).c_str(), Dec(u.end()).c_str(), u.failures(), u.last_error().c_str());
  }
}

struct StatusArgs {
  Connection c;
  std::string format = "table";
  int wait_s = 0;
};

// --wait: polls until no search unit is pending or leased and at least one is finished
// (for scripts: submit, start workers, wait, read the records). A server that is briefly
// unreachable is asked again; 0 or an exit code.
int WaitUntilFinished(const std::string& cmd, const Client& client, int wait_s, v1::StatusResponse* s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(wait_s);
  for (;;) {
    grpc::ClientContext ctx;
    client.Prepare(&ctx);
    const grpc::Status gs = client.stub->Status(&ctx, v1::StatusRequest(), s);
    if (gs.ok() && s->units_pending() == 0 && s->units_leased() == 0 && s->units_finished() > 0) return 0;
    const bool transient =
        gs.error_code() == grpc::StatusCode::UNAVAILABLE || gs.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
    if (!gs.ok() && !transient) return RpcError(cmd, client, gs);
    if (std::chrono::steady_clock::now() >= until) {
      if (!gs.ok()) return RpcError(cmd, client, gs);
      std::fprintf(stderr, "collatzctl %s: not finished after %d s: %llu units pending, %llu leased, %llu finished\n",
                   cmd.c_str(), wait_s, static_cast<unsigned long long>(s->units_pending()),
                   static_cast<unsigned long long>(s->units_leased()),
                   static_cast<unsigned long long>(s->units_finished()));
      return kExitFailure;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

int StatusCmd(const StatusArgs& a) {
  const std::string cmd = "status";
  if (a.format != "table" && a.format != "json") return UsageError(cmd, "--format must be table or json");
  if (a.wait_s < 0) return UsageError(cmd, "--wait must be >= 0 seconds");
  Client client;
  if (int rc = Connect(cmd, a.c, &client)) return rc;
  v1::StatusResponse s;
  if (a.wait_s > 0) {
    if (int rc = WaitUntilFinished(cmd, client, a.wait_s, &s)) return rc;
  } else {
    grpc::ClientContext ctx;
    client.Prepare(&ctx);
    grpc::Status gs = client.stub->Status(&ctx, v1::StatusRequest(), &s);
    if (!gs.ok()) return RpcError(cmd, client, gs);
  }
  const double total = static_cast<double>(FromWire(s.numbers_total()));
  const double done = static_cast<double>(FromWire(s.numbers_finished()));
  if (a.format == "json") {
    nlohmann::json j;
    j["covered_prefix"] = Dec(s.covered_prefix());
    j["class_covered_prefix"] = Dec(s.class_covered_prefix());
    j["checked_prefix"] = Dec(s.checked_prefix());
    j["double_check"] = s.double_check();
    j["units"] = {{"pending", s.units_pending()}, {"leased", s.units_leased()}, {"finished", s.units_finished()},
                  {"quarantined", s.units_quarantined()}};
    j["audits"] = {{"pending", s.audits_pending()},
                   {"blocked", s.audits_blocked()},
                   {"passed", s.audits_passed()},
                   {"failed", s.audits_failed()}};
    j["numbers_total"] = Dec(s.numbers_total());
    j["numbers_finished"] = Dec(s.numbers_finished());
    j["numbers_per_second"] = s.numbers_per_second();
    j["eta_seconds"] = s.eta_seconds();
    j["draining"] = s.draining();
    nlohmann::json subs = nlohmann::json::array();
    for (const auto& sub : s.submissions()) {
      subs.push_back({{"id", sub.submission_id()}, {"begin", Dec(sub.begin())}, {"end", Dec(sub.end())},
                      {"priority", sub.priority()}, {"units", sub.units_total()}, {"finished", sub.units_finished()},
                      {"cancelled", sub.cancelled()}});
    }
    j["submissions"] = subs;
    j["quarantined"] = QuarantinedJson(s.quarantined());
    nlohmann::json jobs = nlohmann::json::array();
    for (const auto& sj : s.stats_jobs()) {
      jobs.push_back({{"id", sj.job_id()}, {"begin", Dec(sj.begin())}, {"end", Dec(sj.end())}, {"batch", sj.batch()},
                      {"priority", sj.priority()}, {"units", sj.units_total()}, {"finished", sj.units_finished()},
                      {"leased", sj.units_leased()}, {"quarantined", sj.units_quarantined()},
                      {"quarantined_units", QuarantinedJson(sj.quarantined())}, {"cancelled", sj.cancelled()}});
    }
    j["stats_jobs"] = jobs;
    std::printf("%s\n", j.dump(2).c_str());
    return kExitOk;
  }
  std::printf("covered prefix   [1, %s)   searched at least once\n", Dec(s.covered_prefix()).c_str());
  std::printf("checked prefix   [1, %s)   final records (double check: %s)   class records: [1, %s)\n",
              Dec(s.checked_prefix()).c_str(), s.double_check().c_str(), Dec(s.class_covered_prefix()).c_str());
  std::printf("units            %llu pending, %llu leased, %llu finished, %llu quarantined\n",
              static_cast<unsigned long long>(s.units_pending()), static_cast<unsigned long long>(s.units_leased()),
              static_cast<unsigned long long>(s.units_finished()), static_cast<unsigned long long>(s.units_quarantined()));
  std::printf("progress         %s of %s numbers (%.1f%%)\n", Dec(s.numbers_finished()).c_str(),
              Dec(s.numbers_total()).c_str(), total > 0 ? 100.0 * done / total : 0.0);
  std::printf("speed            %s numbers/s, ETA %s\n", FormatRate(s.numbers_per_second()).c_str(),
              s.eta_seconds() < 0 ? "unknown" : (std::to_string(static_cast<long long>(s.eta_seconds())) + " s").c_str());
  std::printf("audits           %llu pending, %llu passed, %llu failed%s\n",
              static_cast<unsigned long long>(s.audits_pending()), static_cast<unsigned long long>(s.audits_passed()),
              static_cast<unsigned long long>(s.audits_failed()), s.draining() ? "   (server is shutting down)" : "");
  if (s.audits_blocked() > 0) {
    std::printf("                 %llu of them wait for a worker of another host, GPU and token: none active is "
                "independent of their finisher (a fleet of one host: collatz-server --double-check none)\n",
                static_cast<unsigned long long>(s.audits_blocked()));
  }
  for (const auto& sub : s.submissions()) {
    std::printf("submission %llu   [%s, %s) priority %d: %llu/%llu units finished%s\n",
                static_cast<unsigned long long>(sub.submission_id()), Dec(sub.begin()).c_str(), Dec(sub.end()).c_str(),
                sub.priority(), static_cast<unsigned long long>(sub.units_finished()),
                static_cast<unsigned long long>(sub.units_total()), sub.cancelled() ? " (cancelled)" : "");
  }
  PrintQuarantined("unit", s.quarantined());
  for (const auto& sj : s.stats_jobs()) {
    const bool complete = sj.units_finished() == sj.units_total();
    std::printf("stats job %llu    [%s, %s) batch %u priority %d: %llu/%llu units finished, %llu leased%s%s\n",
                static_cast<unsigned long long>(sj.job_id()), Dec(sj.begin()).c_str(), Dec(sj.end()).c_str(), sj.batch(),
                sj.priority(), static_cast<unsigned long long>(sj.units_finished()),
                static_cast<unsigned long long>(sj.units_total()), static_cast<unsigned long long>(sj.units_leased()),
                sj.units_quarantined() > 0 ? (", " + std::to_string(sj.units_quarantined()) + " QUARANTINED").c_str() : "",
                sj.cancelled() ? " (cancelled)" : complete ? " (complete: collatzctl stats-fetch)" : "");
    PrintQuarantined("stats unit", sj.quarantined());
  }
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

struct ImportArgs {
  Connection c;
  ImportListArgs lists;
  std::string db;  // a local database instead of a server
};
int Import(const ImportArgs& a) {
  const std::string cmd = "import";
  if (!a.db.empty()) return LocalImport(a.lists, a.db);
  TrustedImport import;
  std::string source;
  Status st = ReadImportLists(a.lists, &import, &source);
  if (st.code() == Status::Code::kIOError) return Failure(cmd, st);
  if (!st.ok()) return UsageError(cmd, st.message());
  Client client;
  if (int rc = Connect(cmd, a.c, &client)) return rc;
  v1::ImportRequest req;
  ToWire(import.complete_below, req.mutable_complete_below());
  wire::RecordsToWire(import.delay_records, req.mutable_delay_records());
  wire::RecordsToWire(import.class_records, req.mutable_class_records());
  req.set_source(source);
  v1::ImportResponse resp;
  grpc::ClientContext ctx;
  client.Prepare(&ctx);
  grpc::Status gs = client.stub->Import(&ctx, req, &resp);
  if (!gs.ok()) return RpcError(cmd, client, gs);
  std::printf("imported %zu delay and %zu class records complete below %s; covered prefix now %s\n",
              import.delay_records.size(), import.class_records.size(), ToDecimal(import.complete_below).c_str(),
              Dec(resp.covered_prefix()).c_str());
  return kExitOk;
}

struct ExportArgs {
  Connection c;
  std::string delay_csv, class_csv;
};
int Export(const ExportArgs& a) {
  const std::string cmd = "export";
  Client client;
  if (int rc = Connect(cmd, a.c, &client)) return rc;
  v1::ExportResponse resp;
  grpc::ClientContext ctx;
  client.Prepare(&ctx);
  grpc::Status gs = client.stub->Export(&ctx, v1::ExportRequest(), &resp);
  if (!gs.ok()) return RpcError(cmd, client, gs);
  auto write = [&](const std::string& path, const std::string& text) -> bool {
    std::ofstream out(path, std::ios::trunc);
    out << text;
    return static_cast<bool>(out);
  };
  const std::string d = FormatRecordsCsv(wire::RecordsFromWire(resp.delay_records()), RecordCsvKind::kDelay);
  const std::string c = FormatRecordsCsv(wire::RecordsFromWire(resp.class_records()), RecordCsvKind::kClass);
  if (a.delay_csv.empty()) {
    std::fputs(d.c_str(), stdout);
  } else if (!write(a.delay_csv, d)) {
    return Failure(cmd, Status::IOError("cannot write " + a.delay_csv));
  }
  if (!a.class_csv.empty() && !write(a.class_csv, c)) return Failure(cmd, Status::IOError("cannot write " + a.class_csv));
  std::fprintf(stderr, "delay records complete below %s, class records complete below %s\n",
               Dec(resp.delay_complete_below()).c_str(), Dec(resp.class_complete_below()).c_str());
  return kExitOk;
}

struct BackupArgs {
  Connection c;
  std::string out;
};
int Backup(const BackupArgs& a) {
  Client client;
  if (int rc = Connect("backup", a.c, &client)) return rc;
  v1::BackupRequest req;
  req.set_destination_path(a.out);
  v1::BackupResponse resp;
  grpc::ClientContext ctx;
  client.Prepare(&ctx);
  grpc::Status gs = client.stub->Backup(&ctx, req, &resp);
  if (!gs.ok()) return RpcError("backup", client, gs);
  std::printf("backup written on the server host to %s (%llu bytes)\n", a.out.c_str(),
              static_cast<unsigned long long>(resp.bytes()));
  return kExitOk;
}

struct ServerRecordsArgs {
  Connection c;
  std::string kind, format = "table";
  bool candidates = false;
};
int ServerRecords(const ServerRecordsArgs& a) {
  const std::string cmd = "server-records";
  if (a.kind != "delay" && a.kind != "class") return UsageError(cmd, "--kind must be delay or class");
  if (a.format != "table" && a.format != "csv" && a.format != "json") return UsageError(cmd, "--format must be table, csv or json");
  Client client;
  if (int rc = Connect(cmd, a.c, &client)) return rc;
  v1::QueryRecordsRequest req;
  const bool delay = a.kind == "delay";
  req.set_kind(delay ? v1::RECORD_KIND_DELAY : v1::RECORD_KIND_CLASS);
  req.set_include_candidates(a.candidates);
  v1::QueryRecordsResponse resp;
  grpc::ClientContext ctx;
  client.Prepare(&ctx);
  grpc::Status gs = client.stub->QueryRecords(&ctx, req, &resp);
  if (!gs.ok()) return RpcError(cmd, client, gs);
  const std::vector<Record> records = wire::RecordsFromWire(resp.final_records());
  const std::vector<Record> cands = wire::RecordsFromWire(resp.candidates());
  const std::string prefix = Dec(resp.covered_prefix());
  if (a.format == "csv") {
    std::fputs(FormatRecordsCsv(records, delay ? RecordCsvKind::kDelay : RecordCsvKind::kClass).c_str(), stdout);
  } else if (a.format == "json") {
    nlohmann::json j;
    j["kind"] = a.kind;
    j["covered_prefix"] = prefix;
    for (auto [name, list] : {std::pair{"records", &records}, std::pair{"candidates", &cands}}) {
      nlohmann::json arr = nlohmann::json::array();
      for (const Record& r : *list) arr.push_back({{"n", ToDecimal(r.n)}, {"delay", r.delay}});
      j[name] = arr;
    }
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    size_t width = delay ? 1 : 5;
    for (const Record& r : records) width = std::max(width, ToDecimal(r.n).size());
    for (const Record& r : cands) width = std::max(width, ToDecimal(r.n).size());
    if (delay) std::printf("%*s  %5s\n", static_cast<int>(width), "n", "delay");
    else std::printf("%5s  %*s\n", "delay", static_cast<int>(width), "n");
    for (int pass = 0; pass < 2; ++pass) {
      for (const Record& r : pass == 0 ? records : cands) {
        const std::string n = ToDecimal(r.n);
        if (delay) std::printf("%*s  %5u%s\n", static_cast<int>(width), n.c_str(), r.delay, pass ? "  candidate" : "");
        else std::printf("%5u  %*s%s\n", r.delay, static_cast<int>(width), n.c_str(), pass ? "  candidate" : "");
      }
    }
    std::printf("# %zu final %s records below %s%s\n", records.size(), a.kind.c_str(), prefix.c_str(),
                cands.empty() ? "" : (", " + std::to_string(cands.size()) + " candidates above it").c_str());
  }
  return kExitOk;
}

struct StatsFetchArgs {
  Connection c;
  uint64_t job = 0;
  std::string out, format = "bin";
  uint64_t page_batches = 0;  // 0: the server's page size
};
// Fetches a complete stats job page by page and writes the same file (or CSV) that
// `collatzctl stats` writes for the same range and batch size.
int StatsFetch(const StatsFetchArgs& a) {
  const std::string cmd = "stats-fetch";
  if (a.format != "bin" && a.format != "csv") return UsageError(cmd, "--format: \"" + a.format + "\" is not one of: bin, csv");
  if (a.format == "bin" && (a.out.empty() || a.out == "-")) {
    return UsageError(cmd, "--out FILE is required for the binary format (or use --format csv)");
  }
  Client client;
  if (int rc = Connect(cmd, a.c, &client)) return rc;
  StatsFile file;
  uint64_t total = 0;
  for (uint64_t first = 0;;) {
    v1::FetchStatsRequest req;
    req.set_job_id(a.job);
    req.set_first_batch(first);
    req.set_max_batches(a.page_batches);
    v1::FetchStatsResponse resp;
    grpc::ClientContext ctx;
    client.Prepare(&ctx);
    grpc::Status gs = client.stub->FetchStats(&ctx, req, &resp);
    if (!gs.ok()) return RpcError(cmd, client, gs);
    StatsFile page;
    Status st = DecodeStatsFile(resp.stats_file(), "page at batch " + std::to_string(first) + " of stats job " +
                                                       std::to_string(a.job), &page);
    if (!st.ok()) return Failure(cmd, st);
    const u128 begin = FromWire(resp.begin());
    if (first == 0) {
      file.from = begin;
      file.batch = resp.batch();
      total = resp.total_batches();
      file.batches.reserve(total);
    }
    if (page.batch != file.batch || page.from != file.to() || page.batches.empty() ||
        resp.total_batches() != total || begin != file.from) {
      return Failure(cmd, Status::Corruption("the server sent a page that does not continue the job at batch " +
                                             std::to_string(first)));
    }
    file.batches.insert(file.batches.end(), page.batches.begin(), page.batches.end());
    first += page.batches.size();
    if (first >= total) break;
  }
  if (static_cast<uint64_t>(file.batches.size()) != total) {
    return Failure(cmd, Status::Corruption("received " + std::to_string(file.batches.size()) + " of " +
                                           std::to_string(total) + " batches"));
  }
  Status st = a.format == "csv" ? WriteOutput(a.out, FormatStatsCsv(file)) : WriteStatsFile(a.out, file);
  if (!st.ok()) return Failure(cmd, st);
  if (a.format == "bin") {
    std::printf("stats job %llu: [%s, %s), %zu batches of %u written to %s\n", static_cast<unsigned long long>(a.job),
                ToDecimal(file.from).c_str(), ToDecimal(file.to()).c_str(), file.batches.size(), file.batch,
                a.out.c_str());
  }
  return kExitOk;
}

}  // namespace

bool IsAdminCommand(const std::string& name) {
  for (const char* c : kCommands) {
    if (name == c) return true;
  }
  return false;
}

void RegisterAdminCommands(CLI::App& app) {
  // The argument structs live as long as the process: CLI11 writes into them while parsing.
  static SubmitArgs submit;
  CLI::App* s = app.add_subcommand(
      "submit", "Queue a search on the server (parts already covered or queued are trimmed), or a stats job (--kind stats)");
  AddConnectionFlags(s, &submit.c);
  s->add_option("--kind", submit.kind, "search (records) or stats (batch statistics, like collatzctl stats)")
      ->capture_default_str();
  s->add_option("--from", submit.from, "First number (inclusive; default 1, or 0 for stats)");
  s->add_option("--to", submit.to, "End (exclusive)")->required();
  s->add_option("--kinds", submit.kinds, "Search: delay, or delay,class")->capture_default_str();
  s->add_option("--batch", submit.batch, "Stats: numbers per batch; --from and --to are multiples of it")
      ->capture_default_str()
      ->each([](const std::string&) { submit.batch_given = true; });
  s->add_option("--unit-size", submit.unit_size, "Numbers per unit (default: the server's)");
  s->add_option("--priority", submit.priority, "Higher is leased first")->capture_default_str();
  s->callback([] { std::exit(Submit(submit)); });

  static CancelArgs cancel;
  CLI::App* c = app.add_subcommand("cancel", "Cancel a submission: its unfinished units are removed");
  AddConnectionFlags(c, &cancel.c);
  c->add_option("--id", cancel.id, "Submission id (from submit or status)");
  c->add_option("--stats-job", cancel.stats_job, "Stats job id instead (from submit --kind stats or status)");
  c->callback([] { std::exit(Cancel(cancel)); });

  static RequeueArgs requeue;
  CLI::App* rq = app.add_subcommand("requeue", "Queue quarantined units again once their cause is fixed");
  AddConnectionFlags(rq, &requeue.c);
  rq->add_option("--unit", requeue.unit, "A quarantined unit (status lists them)");
  rq->add_option("--stats-unit", requeue.stats_unit, "A quarantined stats unit instead");
  rq->add_flag("--all-quarantined", requeue.all, "Every quarantined unit, search and stats");
  rq->callback([] { std::exit(Requeue(requeue)); });

  static UnflagArgs unflag;
  CLI::App* uf = app.add_subcommand("unflag", "Clear a worker's flag once its cause is fixed (admin)");
  AddConnectionFlags(uf, &unflag.c);
  CLI::Option* one = uf->add_option("--worker", unflag.worker, "The flagged worker's id (collatzctl workers)");
  uf->add_flag("--all", unflag.all, "Every flagged worker, in the order the server asks for")->excludes(one);
  uf->callback([] { std::exit(Unflag(unflag)); });

  static StatusArgs status;
  CLI::App* st = app.add_subcommand("status", "Progress, covered prefix, units by state, speed, ETA, quarantine");
  AddConnectionFlags(st, &status.c);
  st->add_option("--format", status.format, "table or json")->capture_default_str();
  st->add_option("--wait", status.wait_s,
                 "Seconds to wait until no search unit is pending or leased (exit 1 if not by then)");
  st->callback([] { std::exit(StatusCmd(status)); });

  static WorkersArgs workers;
  CLI::App* w = app.add_subcommand("workers", "Registered workers, their speed and state");
  AddConnectionFlags(w, &workers.c);
  w->callback([] { std::exit(Workers(workers)); });

  static ImportArgs import;
  CLI::App* i = app.add_subcommand(
      "import", "Import trusted records complete below a bound into a server, or with --db a local database "
                "(each delay is rechecked; lists that are provably incomplete are refused)");
  AddConnectionFlags(i, &import.c);
  i->add_option("--db", import.db, "A local record database (collatzctl run's) instead of a server");
  i->add_flag("--published", import.lists.published,
              "The compiled-in published delay records, complete below their last n + 1 (delay searches only)");
  i->add_option("--delay-csv", import.lists.delay_csv, "Delay records, n,delay, ascending, starting with 1,0");
  i->add_option("--class-csv", import.lists.class_csv, "Class records, delay,n, ascending by delay (optional)");
  i->add_option("--complete-below", import.lists.complete_below,
                "The lists are complete below this bound (above their last row)");
  i->add_option("--source", import.lists.source, "Where the records come from (stored with them)");
  i->callback([] { std::exit(Import(import)); });

  static ExportArgs exp;
  CLI::App* e = app.add_subcommand("export", "Export the final records (CSV) for another coordinator's import");
  AddConnectionFlags(e, &exp.c);
  e->add_option("--delay-csv", exp.delay_csv, "Write delay records here (default: stdout)");
  e->add_option("--class-csv", exp.class_csv, "Write class records here");
  e->callback([] { std::exit(Export(exp)); });

  static BackupArgs backup;
  CLI::App* b = app.add_subcommand("backup", "Online backup of the server's database (a path on the server's host)");
  AddConnectionFlags(b, &backup.c);
  b->add_option("--out", backup.out, "Destination file; must not exist")->required();
  b->callback([] { std::exit(Backup(backup)); });

  static ServerRecordsArgs records;
  CLI::App* r = app.add_subcommand("server-records", "Print the final records held by the server");
  AddConnectionFlags(r, &records.c);
  r->add_option("--kind", records.kind, "delay (n,delay by n) or class (delay,n by delay)")->required();
  r->add_option("--format", records.format, "table, csv or json")->capture_default_str();
  r->add_flag("--candidates", records.candidates, "Also print candidates above the covered prefix (table, json)");
  r->callback([] { std::exit(ServerRecords(records)); });

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

  static StatsFetchArgs fetch;
  CLI::App* f = app.add_subcommand(
      "stats-fetch", "Write a finished stats job as the same stats file (or CSV) that collatzctl stats writes");
  AddConnectionFlags(f, &fetch.c);
  f->add_option("--job", fetch.job, "Stats job id (from submit --kind stats or status)")->required();
  f->add_option("--out", fetch.out, "Output file (csv: stdout when omitted)");
  f->add_option("--format", fetch.format, "bin (stats file, docs/STATS_FORMAT.md) or csv")->capture_default_str();
  f->add_option("--page-batches", fetch.page_batches, "Batches per request (0: the server's limit)")->group("");
  f->callback([] { std::exit(StatsFetch(fetch)); });
}

}  // namespace collatz::cli
