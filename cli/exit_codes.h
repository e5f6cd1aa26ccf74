// Exit codes of collatzctl: scripts tell a usage mistake from a failure.
#pragma once

namespace collatz::cli {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;      // I/O error, damaged database, engine failure
constexpr int kExitUsage = 2;        // bad flags, malformed numbers, empty range
constexpr int kExitInterrupted = 130;  // SIGINT: finished units are kept, a rerun resumes

}  // namespace collatz::cli
