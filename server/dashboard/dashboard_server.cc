#include "server/dashboard/dashboard_server.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <set>

#include "server/auth.h"
#include "server/dashboard/dashboard_assets.h"

namespace collatz::server {

namespace {

using httplib::Request;
using httplib::Response;
using HandlerResponse = httplib::Server::HandlerResponse;

constexpr const char* kCookie = "collatz_dashboard";

void Error(Response& res, int status, const std::string& message) {
  res.status = status;
  // The message may quote the request: bytes that are not UTF-8 become U+FFFD.
  const nlohmann::json j = {{"error", message}};
  res.set_content(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", "application/json");
}

std::string Hex(const std::string& s) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

// The value of cookie `name` in a Cookie header ("a=1; b=2"), or "".
std::string CookieValue(const std::string& header, const std::string& name) {
  size_t pos = 0;
  while (pos < header.size()) {
    size_t end = header.find(';', pos);
    if (end == std::string::npos) end = header.size();
    std::string item = header.substr(pos, end - pos);
    item.erase(0, item.find_first_not_of(' '));
    if (item.size() > name.size() && item.compare(0, name.size(), name) == 0 && item[name.size()] == '=') {
      return item.substr(name.size() + 1);
    }
    pos = end + 1;
  }
  return "";
}

// 400 unless every query parameter is one of `allowed` and given once.
bool ParamsOk(const Request& req, Response& res, const std::set<std::string>& allowed) {
  for (const auto& [key, value] : req.params) {
    if (!allowed.count(key)) {
      std::string list;
      for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
      Error(res, 400,
            "unknown query parameter '" + key.substr(0, 64) + "'" +
                (list.empty() ? " (this path takes none)" : " (allowed: " + list + ")"));
      return false;
    }
    if (req.get_param_value_count(key) > 1) {
      Error(res, 400, "query parameter '" + key + "' given more than once");
      return false;
    }
  }
  return true;
}

// The value of parameter `key`, `fallback` when absent; 400 unless it is one of `values`.
bool Choice(const Request& req, Response& res, const std::string& key, const std::vector<std::string>& values,
            const std::string& fallback, std::string* out) {
  if (!req.has_param(key)) {
    if (fallback.empty()) {
      Error(res, 400, "query parameter '" + key + "' is required");
      return false;
    }
    *out = fallback;
    return true;
  }
  *out = req.get_param_value(key);
  for (const std::string& v : values) {
    if (*out == v) return true;
  }
  std::string list;
  for (const std::string& v : values) list += (list.empty() ? "" : ", ") + v;
  Error(res, 400, "bad value for '" + key + "': '" + out->substr(0, 64) + "' (one of: " + list + ")");
  return false;
}

void Serve(Response& res, const Status& st, const std::string& body, const std::string& type) {
  if (!st.ok()) {
    spdlog::error("dashboard: {}", st.message());
    Error(res, 500, st.message());
    return;
  }
  res.set_content(body, type);
}

// The cookie holds the token in hex (a cookie value cannot hold every byte).
std::string Unhex(const std::string& s) {
  auto digit = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
  if (s.size() % 2 != 0) return "";
  std::string out;
  for (size_t i = 0; i < s.size(); i += 2) {
    const int hi = digit(s[i]), lo = digit(s[i + 1]);
    if (hi < 0 || lo < 0) return "";
    out += static_cast<char>(hi << 4 | lo);
  }
  return out;
}

}  // namespace

DashboardServer::DashboardServer(DashboardData* data, std::string token)
    : DashboardServer(data, static_cast<const TokenAuth*>(nullptr)) {
  owned_auth_ = std::make_unique<TokenAuth>(std::move(token));
  auth_ = owned_auth_.get();
}

DashboardServer::DashboardServer(DashboardData* data, const TokenAuth* auth)
    : data_(data), auth_(auth), http_(std::make_unique<httplib::Server>()) {
  http_->new_task_queue = [] { return new httplib::ThreadPool(kThreads); };
  // A browser polls every few seconds: a connection idle for a second goes back to the
  // pool, so a few browsers cannot keep every thread waiting.
  http_->set_keep_alive_timeout(1);
  http_->set_read_timeout(5);
  http_->set_write_timeout(5);
  http_->set_payload_max_length(4096);
  http_->set_default_headers({
      {"Cache-Control", "no-store"},
      {"X-Content-Type-Options", "nosniff"},
      {"Referrer-Policy", "no-referrer"},
      // Everything the page needs comes from this server (no CDN, no inline script).
      {"Content-Security-Policy",
       "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'"},
  });
  Route();
}

DashboardServer::~DashboardServer() { Stop(); }

void DashboardServer::Route() {
  http_->set_pre_routing_handler([this](const Request& req, Response& res) {
    if (req.method != "GET" && req.method != "HEAD") {
      Error(res, 405, "the dashboard is read-only: only GET and HEAD");
      res.set_header("Allow", "GET, HEAD");
      res.set_header("Connection", "close");  // the body, if any, was not read
      return HandlerResponse::Handled;
    }
    if (auth_ == nullptr || !auth_->enabled()) return HandlerResponse::Unhandled;
    // OK for an admin token or the shared token; 403 for a worker token.
    auto admits = [this, &res](const std::string& presented) {
      Caller caller;
      if (!auth_->Authenticate(&presented, &caller).ok()) return false;
      if (caller.role == TokenRole::kAdmin) return true;
      Error(res, 403, TokenAuth::WorkerTokenDenied(caller).error_message());
      return false;
    };
    // GET /?token=T: keep the token in a cookie and drop it from the address bar.
    if (req.path == "/" && req.has_param("token")) {
      const std::string token = req.get_param_value("token");
      if (!admits(token)) {
        if (res.status != 403) Error(res, 401, "wrong token");
        return HandlerResponse::Handled;
      }
      res.set_header("Set-Cookie", std::string(kCookie) + "=" + Hex(token) + "; Path=/; HttpOnly; SameSite=Strict");
      res.set_redirect("/", 303);
      return HandlerResponse::Handled;
    }
    const std::string auth = req.get_header_value("Authorization");
    const std::string cookie = Unhex(CookieValue(req.get_header_value("Cookie"), kCookie));
    if (auth.rfind("Bearer ", 0) == 0 && admits(auth.substr(7))) return HandlerResponse::Unhandled;
    if (res.status == 403) return HandlerResponse::Handled;
    if (!cookie.empty() && admits(cookie)) return HandlerResponse::Unhandled;
    if (res.status == 403) return HandlerResponse::Handled;
    res.set_header("WWW-Authenticate", "Bearer realm=\"collatz-server\"");
    if (req.path == "/") {
      res.status = 401;
      res.set_content(
          "<!doctype html><title>collatz-server</title><p>This server wants its token: open "
          "<code>/?token=TOKEN</code> once (the browser keeps it in a cookie), or send "
          "<code>Authorization: Bearer TOKEN</code>.</p>\n",
          "text/html; charset=utf-8");
    } else {
      Error(res, 401, auth.empty() && req.get_header_value("Cookie").empty() ? "token required" : "wrong token");
    }
    return HandlerResponse::Handled;
  });
  http_->set_exception_handler([](const Request& req, Response& res, std::exception_ptr e) {
    std::string what = "unknown exception";
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      what = x.what();
    } catch (...) {
    }
    spdlog::error("dashboard: {} {}: {}", req.method, req.path, what);
    Error(res, 500, "internal error (logged by the server)");
  });
  http_->set_error_handler([](const Request& req, Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 404)
      Error(res, 404, "no such path: " + req.path.substr(0, 200) + " (see docs/HTTP.md)");
    else if (res.status == 414)
      Error(res, 414, "request line too long (at most 8192 bytes)");
    else
      Error(res, res.status, "bad request (see docs/HTTP.md)");
  });

  http_->Get("/", [](const Request& req, Response& res) {
    if (!ParamsOk(req, res, {"token"})) return;
    res.set_content(kDashboardHtml.data(), kDashboardHtml.size(), "text/html; charset=utf-8");
  });
  http_->Get("/dashboard.js", [](const Request& req, Response& res) {
    if (!ParamsOk(req, res, {})) return;
    res.set_content(kDashboardJs.data(), kDashboardJs.size(), "text/javascript; charset=utf-8");
  });
  http_->Get("/api/status", [this](const Request& req, Response& res) {
    if (!ParamsOk(req, res, {})) return;
    std::string body;
    Status st = data_->StatusJson(&body);
    Serve(res, st, body, "application/json");
  });
  http_->Get("/api/workers", [this](const Request& req, Response& res) {
    if (!ParamsOk(req, res, {})) return;
    std::string body;
    Status st = data_->WorkersJson(&body);
    Serve(res, st, body, "application/json");
  });
  http_->Get("/api/records", [this](const Request& req, Response& res) {
    std::string kind, format, list;
    if (!ParamsOk(req, res, {"kind", "format", "list"}) || !Choice(req, res, "kind", {"delay", "class"}, "", &kind) ||
        !Choice(req, res, "format", {"json", "csv"}, "json", &format) ||
        !Choice(req, res, "list", {"final", "candidates"}, "final", &list)) {
      return;
    }
    const RecordKind k = kind == "delay" ? RecordKind::kDelay : RecordKind::kClass;
    std::string body;
    if (format == "json") {
      if (req.has_param("list")) {
        Error(res, 400, "'list' goes with format=csv (the JSON holds both lists)");
        return;
      }
      Status st = data_->RecordsJson(k, &body);
      Serve(res, st, body, "application/json");
      return;
    }
    Status st = data_->RecordsCsv(k, list == "candidates", &body);
    Serve(res, st, body, "text/csv; charset=utf-8");
    res.set_header("Content-Disposition",
                   "attachment; filename=\"" + kind + "_" + (list == "final" ? "records" : "candidates") + ".csv\"");
  });
  http_->Get("/api/throughput", [this](const Request& req, Response& res) {
    std::string range;
    if (!ParamsOk(req, res, {"range"}) || !Choice(req, res, "range", {"hour", "day", "week"}, "hour", &range)) return;
    const ThroughputRange r = range == "hour"  ? ThroughputRange::kHour
                              : range == "day" ? ThroughputRange::kDay
                                               : ThroughputRange::kWeek;
    std::string body;
    Status st = data_->ThroughputJson(r, &body);
    Serve(res, st, body, "application/json");
  });
}

Status DashboardServer::Listen(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size() ||
      address.find_first_not_of("0123456789", colon + 1) != std::string::npos || address.size() - colon > 6) {
    return Status::InvalidArgument("--http-listen wants host:port, not '" + address + "'");
  }
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const int port = std::stoi(address.substr(colon + 1));
  if (port > 65535) return Status::InvalidArgument("--http-listen: port " + std::to_string(port) + " is over 65535");
  port_ = port == 0 ? http_->bind_to_any_port(host) : (http_->bind_to_port(host, port) ? port : -1);
  if (port_ <= 0) {
    port_ = 0;
    return Status::Unavailable("cannot listen for HTTP on " + address);
  }
  thread_ = std::thread([this] { http_->listen_after_bind(); });
  // stop() only reaches a server that runs: wait for it.
  for (int i = 0; i < 5000 && !http_->is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return Status::Ok();
}

void DashboardServer::Stop() {
  if (!thread_.joinable()) return;
  http_->stop();
  thread_.join();
}

}  // namespace collatz::server
