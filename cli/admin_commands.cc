#include "cli/admin_commands.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/admin_rpc.h"
#include "cli/cli_util.h"
#include "cli/exit_codes.h"
#include "cli/fleet_commands.h"
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

struct ImportArgs {
  Connection c;
  ImportListArgs lists;
  std::string db;  // a local database instead of a server
};
int ImportPoints(const ImportArgs& a) {
  const std::string cmd = "import";
  if (!a.db.empty()) return LocalImportPoints(a.lists, a.db);
  std::vector<Record> points;
  std::string source;
  Status st = ReadKnownPointsArgs(a.lists, &points, &source);
  if (st.code() == Status::Code::kIOError) return Failure(cmd, st);
  if (!st.ok()) return UsageError(cmd, st.message());
  Client client;
  if (int rc = Connect(cmd, a.c, &client)) return rc;
  v1::AddKnownPointsRequest req;
  wire::RecordsToWire(points, req.mutable_points());
  req.set_source(source);
  v1::AddKnownPointsResponse resp;
  grpc::ClientContext ctx;
  client.Prepare(&ctx);
  grpc::Status gs = client.stub->AddKnownPoints(&ctx, req, &resp);
  if (!gs.ok()) return RpcError(cmd, client, gs);
  std::printf("imported %zu known points: %llu new, %llu already known; the server holds %llu\n", points.size(),
              static_cast<unsigned long long>(resp.added()), static_cast<unsigned long long>(resp.already_known()),
              static_cast<unsigned long long>(resp.stored()));
  return kExitOk;
}

int Import(const ImportArgs& a) {
  const std::string cmd = "import";
  if (!a.lists.points_csv.empty()) return ImportPoints(a);
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
  std::string points_csv;  // the known points, for another server's import --points
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
  if (!a.points_csv.empty() &&
      !write(a.points_csv, FormatRecordsCsv(wire::RecordsFromWire(resp.known_points()), RecordCsvKind::kDelay))) {
    return Failure(cmd, Status::IOError("cannot write " + a.points_csv));
  }
  std::fprintf(stderr, "delay records complete below %s, class records complete below %s; %d known points\n",
               Dec(resp.delay_complete_below()).c_str(), Dec(resp.class_complete_below()).c_str(),
               resp.known_points_size());
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
  s->add_option("--unit-size", submit.unit_size,
                "Numbers per unit (default: the server's --unit-size; delay+class: at most its --class-unit-size)");
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

  // The fleet's commands (fleet_commands.cc) go in between, where --help has always listed them.
  AddUnflagCommand(app);

  static StatusArgs status;
  CLI::App* st = app.add_subcommand("status", "Progress, covered prefix, units by state, speed, ETA, quarantine");
  AddConnectionFlags(st, &status.c);
  st->add_option("--format", status.format, "table or json")->capture_default_str();
  st->add_option("--wait", status.wait_s,
                 "Seconds to wait until no search unit is pending or leased (exit 1 if not by then)");
  st->callback([] { std::exit(StatusCmd(status)); });

  AddWorkersCommand(app);

  static ImportArgs import;
  CLI::App* i = app.add_subcommand(
      "import", "Import trusted records complete below a bound, or known points (--points), into a server, or "
                "with --db a local database (each delay is rechecked; lists that are provably incomplete are refused)");
  AddConnectionFlags(i, &import.c);
  i->add_option("--db", import.db, "A local record database (collatzctl run's) instead of a server");
  i->add_flag("--published", import.lists.published,
              "The compiled-in published delay records, complete below their last n + 1 (delay searches only)");
  i->add_option("--delay-csv", import.lists.delay_csv, "Delay records, n,delay, ascending, starting with 1,0");
  i->add_option("--class-csv", import.lists.class_csv, "Class records, delay,n, ascending by delay (optional)");
  i->add_option("--complete-below", import.lists.complete_below,
                "The lists are complete below this bound (above their last row)");
  i->add_option("--points", import.lists.points_csv,
                "Known points instead: numbers with their exact delays (n,delay, any order, at most 100000), "
                "no completeness claimed; they close classes and raise floors above them");
  i->add_option("--source", import.lists.source, "Where the records come from (stored with them)");
  i->callback([] { std::exit(Import(import)); });

  static ExportArgs exp;
  CLI::App* e = app.add_subcommand("export", "Export the final records (CSV) for another coordinator's import");
  AddConnectionFlags(e, &exp.c);
  e->add_option("--delay-csv", exp.delay_csv, "Write delay records here (default: stdout)");
  e->add_option("--class-csv", exp.class_csv, "Write class records here");
  e->add_option("--points-csv", exp.points_csv, "Write the known points here (n,delay: for import --points)");
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

  AddTokensCommand(app);

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
