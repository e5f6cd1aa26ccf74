#include "server/listen_address.h"

#include <arpa/inet.h>

namespace collatz::server {

bool IsLoopbackAddress(const std::string& address) {
  if (address.rfind("unix:", 0) == 0 || address.rfind("unix-abstract:", 0) == 0) return true;
  std::string host;
  if (!address.empty() && address[0] == '[') {
    const size_t close = address.find(']');
    if (close == std::string::npos) return false;
    host = address.substr(1, close - 1);
  } else {
    const size_t colon = address.rfind(':');
    host = colon == std::string::npos ? address : address.substr(0, colon);
  }
  if (host == "localhost") return true;
  in_addr v4;
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6;
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

}  // namespace collatz::server
