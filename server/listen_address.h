// Whether a listening address is reachable only from this machine: a server that listens
// beyond it without any token lets anyone who can reach the port submit, cancel, import
// or feed results, so collatz-server refuses that unless told --insecure.
#pragma once

#include <string>

namespace collatz::server {

// True for 127.0.0.0/8, ::1, localhost and unix sockets ("127.0.0.1:50051", "[::1]:0",
// "localhost:8080", "unix:/run/c.sock"); false for anything else, including every
// wildcard ("0.0.0.0:50051", "[::]:50051", ":50051") and names that merely resolve here.
bool IsLoopbackAddress(const std::string& address);

}  // namespace collatz::server
