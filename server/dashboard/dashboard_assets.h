// The dashboard page and its script, embedded at build time from dashboard.html and
// dashboard.js (embed_assets.cmake writes dashboard_assets.cc into the build tree).
#pragma once

#include <string_view>

namespace collatz::server {

extern const std::string_view kDashboardHtml;
extern const std::string_view kDashboardJs;

}  // namespace collatz::server
