#include "worker/log_setup.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>

namespace collatz::worker {
namespace {

// %* : the message, escaped for a JSON string.
class JsonMessageFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    const std::string escaped = JsonEscape(std::string(msg.payload.data(), msg.payload.size()));
    dest.append(escaped.data(), escaped.data() + escaped.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<JsonMessageFlag>(); }
};

}  // namespace

std::string JsonEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

Status SetUpLogging(const std::string& format, const std::string& level) {
  if (format != "text" && format != "json") return Status::InvalidArgument("--log-format must be text or json");
  const auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off") return Status::InvalidArgument("unknown --log-level " + level);
  auto logger = spdlog::stderr_logger_mt("collatz-worker");
  if (format == "json") {
    auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
    formatter->add_flag<JsonMessageFlag>('*').set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l","thread":%t,"msg":"%*"})");
    logger->set_formatter(std::move(formatter));
  } else {
    logger->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] %v");
  }
  spdlog::set_default_logger(logger);
  spdlog::set_level(lvl);
  spdlog::flush_on(spdlog::level::info);  // tests and log shippers read lines as they come
  return Status::Ok();
}

}  // namespace collatz::worker
