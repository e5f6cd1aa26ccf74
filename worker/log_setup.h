// Logging: spdlog to stderr, as text lines or as one JSON object per line
// ({"time": ..., "level": ..., "msg": ...}) for log collectors.
#pragma once

#include <string>

#include "core/status.h"

namespace collatz::worker {

// format: "text" or "json"; level: trace, debug, info, warn, error, off.
Status SetUpLogging(const std::string& format, const std::string& level);

// JSON string escaping (quotes, backslashes, control characters), without the quotes.
std::string JsonEscape(const std::string& s);

}  // namespace collatz::worker
