// A plain HTTP/1.0 GET on 127.0.0.1 for tests of /metrics endpoints.
#pragma once

#include <string>

namespace collatz::testing_support {

// The whole response (status line, headers, body); "" if the connection failed.
std::string HttpGet(int port, const std::string& path);

}  // namespace collatz::testing_support
