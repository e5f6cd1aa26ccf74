#include "server/dashboard/dashboard_data.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "core/records_csv.h"

namespace collatz::server {

using nlohmann::json;

struct DashboardData::Snapshot {
  int64_t taken_ms = 0;
  CoordinatorStatus status;
  std::vector<WorkerReport> workers;
  MergedRecords records;
  std::vector<DashboardEvent> events;
  Status events_status;
  // Documents rendered from it so far (by name), guarded by mu_: each is rendered once per
  // snapshot however many browsers ask.
  mutable std::map<std::string, std::string> rendered;
};

namespace {

std::string Dec(u128 x) { return ToDecimal(x); }

// Host names and error texts come from workers: bytes that are not UTF-8 become U+FFFD
// instead of an exception.
std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// log2 of x as a double (the page shows the prefix as 2^k).
double Log2(u128 x) {
  if (x == 0) return 0;
  return std::log2(static_cast<double>(x));
}

json RecordList(const std::vector<Record>& records) {
  json a = json::array();
  for (const Record& r : records) a.push_back({{"n", Dec(r.n)}, {"delay", r.delay}});
  return a;
}

const char* WorkerState(const WorkerReport& r, int64_t now_ms, int64_t lease_ms) {
  if (r.w.flagged) return "flagged";
  if (r.active_leases > 0) return "busy";
  if (r.last_seen_ms == 0 || now_ms - r.last_seen_ms > lease_ms) return "silent";
  return "idle";
}

struct RangeShape {
  const char* name;
  int64_t span_ms, bucket_ms;
};
RangeShape ShapeOf(ThroughputRange r) {
  switch (r) {
    case ThroughputRange::kHour:
      return {"hour", 3'600'000, 60'000};
    case ThroughputRange::kDay:
      return {"day", 86'400'000, 900'000};
    case ThroughputRange::kWeek:
      return {"week", 7 * 86'400'000LL, 3'600'000};
  }
  return {"hour", 3'600'000, 60'000};
}

}  // namespace

DashboardData::DashboardData(Coordinator* coordinator, std::unique_ptr<DashboardReader> reader, const Clock* clock,
                             DashboardOptions options)
    : coordinator_(coordinator), clock_(clock), options_(options), reader_(std::move(reader)) {}

DashboardData::~DashboardData() = default;

std::shared_ptr<const DashboardData::Snapshot> DashboardData::Current() {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t now = clock_->NowMs();
  if (snapshot_ && now - snapshot_->taken_ms < options_.max_age_ms) return snapshot_;
  auto s = std::make_shared<Snapshot>();
  s->taken_ms = now;
  s->status = coordinator_->GetStatus();
  s->workers = coordinator_->ListWorkers();
  s->records = coordinator_->Records();
  s->events_status = reader_->RecentEvents(options_.events, &s->events);
  snapshot_ = s;
  return snapshot_;
}

Status DashboardData::Rendered(const std::string& name, std::string* out,
                               const std::function<Status(const Snapshot&, std::string*)>& render) {
  std::shared_ptr<const Snapshot> snap = Current();
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = snap->rendered.find(name); it != snap->rendered.end()) {
    *out = it->second;
    return Status::Ok();
  }
  Status st = render(*snap, out);
  if (st.ok()) snap->rendered[name] = *out;
  return st;
}

Status DashboardData::StatusJson(std::string* out) {
  return Rendered("status", out, [](const Snapshot& snap, std::string* out) { return RenderStatus(snap, out); });
}

Status DashboardData::RenderStatus(const Snapshot& snap, std::string* out) {
  if (!snap.events_status.ok()) return snap.events_status;
  const CoordinatorStatus& s = snap.status;
  // The covered prefix heads for the end of the furthest submission still wanted.
  u128 target = 0;
  json subs = json::array();
  for (const CoordinatorStatus::Submission& sub : s.submissions) {
    if (!sub.s.cancelled) target = std::max(target, sub.s.end);
    subs.push_back({{"id", sub.s.id},
                    {"begin", Dec(sub.s.begin)},
                    {"end", Dec(sub.s.end)},
                    {"kinds", sub.s.kinds == Kinds::kDelay ? "delay" : "delay,class"},
                    {"priority", sub.s.priority},
                    {"cancelled", sub.s.cancelled},
                    {"units_total", sub.units_total},
                    {"units_finished", sub.units_finished}});
  }
  json quarantined = json::array();
  for (const StoredUnit& u : s.quarantined_units) {
    quarantined.push_back({{"id", u.id},
                           {"begin", Dec(u.begin)},
                           {"end", Dec(u.end)},
                           {"failures", u.failures},
                           {"last_error", u.last_error}});
  }
  json events = json::array();
  for (const DashboardEvent& e : snap.events)
    events.push_back({{"at_ms", e.at_ms}, {"kind", e.kind}, {"detail", e.detail}});
  // The part of [1, target) that [1, covered prefix) is.
  const double progress =
      target <= 1 ? 0.0 : std::min(1.0, static_cast<double>(s.covered_prefix - 1) / static_cast<double>(target - 1));
  json j = {
      {"time_ms", snap.taken_ms},
      {"covered_prefix", Dec(s.covered_prefix)},
      {"covered_prefix_log2", Log2(s.covered_prefix)},
      {"class_covered_prefix", Dec(s.class_covered_prefix)},
      {"checked_prefix", Dec(s.checked_prefix)},
      {"checked_prefix_log2", Log2(s.checked_prefix)},
      {"double_check", s.double_check},
      {"target", Dec(target)},
      {"progress", progress},
      {"units",
       {{"pending", s.pending}, {"leased", s.leased}, {"finished", s.finished}, {"quarantined", s.quarantined}}},
      {"numbers_total", Dec(s.numbers_total)},
      {"numbers_finished", Dec(s.numbers_finished)},
      {"numbers_per_second", s.numbers_per_second},
      {"eta_seconds", s.eta_seconds < 0 ? json(nullptr) : json(s.eta_seconds)},
      {"audits",
       {{"pending", s.audits_pending}, {"blocked", s.audits_blocked}, {"passed", s.audits_passed}, {"failed", s.audits_failed}}},
      {"records",
       {{"delay", snap.records.delay_final.size()},
        {"delay_candidates", snap.records.delay_candidates.size()},
        {"class", snap.records.class_final.size()},
        {"class_candidates", snap.records.class_candidates.size()}}},
      {"draining", s.draining},
      {"submissions", subs},
      {"quarantined_units", quarantined},
      {"events", events},
  };
  *out = Dump(j);
  return Status::Ok();
}

Status DashboardData::WorkersJson(std::string* out) {
  const int64_t lease_ms = coordinator_->lease_duration_ms();
  return Rendered("workers", out, [lease_ms](const Snapshot& snap, std::string* out) {
    json a = json::array();
    for (const WorkerReport& r : snap.workers) {
      json gpus = json::array();
      for (const auto& [model, uuid] : r.w.gpus) gpus.push_back(model);
      a.push_back({{"id", r.w.id},
                   {"host", r.w.host},
                   {"gpus", gpus},
                   {"backend", r.w.backend},
                   {"binary_version", r.w.binary_version},
                   {"token_name", r.w.token_name},
                   {"state", WorkerState(r, snap.taken_ms, lease_ms)},
                   {"flag_reason", r.w.flag_reason},
                   {"active_leases", r.active_leases},
                   {"max_unit_numbers", r.max_unit_numbers ? json(Dec(*r.max_unit_numbers)) : json(nullptr)},
                   {"units_finished", r.w.units_finished},
                   {"numbers_finished", Dec(r.w.numbers_finished)},
                   {"numbers_per_second", r.numbers_per_second},
                   {"last_seen_ms", r.last_seen_ms == 0 ? json(nullptr) : json(r.last_seen_ms)}});
    }
    *out = Dump(json{{"time_ms", snap.taken_ms}, {"workers", a}});
    return Status::Ok();
  });
}

Status DashboardData::RecordsJson(RecordKind kind, std::string* out) {
  const std::string name = kind == RecordKind::kDelay ? "records:delay" : "records:class";
  return Rendered(name, out, [kind](const Snapshot& snap, std::string* out) {
    const MergedRecords& m = snap.records;
    const bool delay = kind == RecordKind::kDelay;
    json j = {{"kind", delay ? "delay" : "class"},
              {"covered_prefix", Dec(delay ? m.covered_prefix : m.class_covered_prefix)},
              {"records", RecordList(delay ? m.delay_final : m.class_final)},
              {"candidates", RecordList(delay ? m.delay_candidates : m.class_candidates)}};
    *out = Dump(j);
    return Status::Ok();
  });
}

Status DashboardData::RecordsCsv(RecordKind kind, bool candidates, std::string* out) {
  const std::string name =
      std::string("csv:") + (kind == RecordKind::kDelay ? "delay" : "class") + (candidates ? ":candidates" : "");
  return Rendered(name, out, [kind, candidates](const Snapshot& snap, std::string* out) {
    const MergedRecords& m = snap.records;
    const bool delay = kind == RecordKind::kDelay;
    const std::vector<Record>& list =
        delay ? (candidates ? m.delay_candidates : m.delay_final) : (candidates ? m.class_candidates : m.class_final);
    *out = FormatRecordsCsv(list, delay ? RecordCsvKind::kDelay : RecordCsvKind::kClass);
    return Status::Ok();
  });
}

Status DashboardData::ThroughputJson(ThroughputRange range, std::string* out) {
  return Rendered(
      std::string("throughput:") + ShapeOf(range).name, out,
      [this, range](const Snapshot& snap, std::string* out) {  // reader_: under mu_
        const RangeShape shape = ShapeOf(range);
        // Whole buckets, the last one holding now.
        const int64_t to = (snap.taken_ms / shape.bucket_ms + 1) * shape.bucket_ms;
        const int64_t from = to - shape.span_ms;
        std::vector<ThroughputBucket> buckets;
        Status st = reader_->Throughput(from, to, shape.bucket_ms, &buckets);
        if (!st.ok()) return st;
        json a = json::array();
        for (const ThroughputBucket& b : buckets) {
          a.push_back({{"start_ms", b.start_ms},
                       {"units", b.units},
                       {"numbers", Dec(b.numbers)},
                       {"numbers_per_second", static_cast<double>(b.numbers) / (shape.bucket_ms / 1000.0)},
                       {"stats_units", b.stats_units},
                       {"stats_numbers", Dec(b.stats_numbers)},
                       {"stats_numbers_per_second", static_cast<double>(b.stats_numbers) / (shape.bucket_ms / 1000.0)}});
        }
        const json j = {{"range", shape.name},
                        {"time_ms", snap.taken_ms},
                        {"bucket_seconds", shape.bucket_ms / 1000},
                        {"buckets", a}};
        *out = Dump(j);
        return Status::Ok();
      });
}

}  // namespace collatz::server
