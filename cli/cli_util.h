// Small helpers shared by the collatzctl commands: argument parsing into 128-bit
// numbers and kinds, and the two ways a command ends badly.
#pragma once

#include <string>

#include "core/sieve.h"
#include "core/status.h"
#include "core/u128.h"

namespace collatz::cli {

// Prints "collatzctl <command>: error: <message>" and a hint to stderr; returns kExitUsage.
int UsageError(const std::string& command, const std::string& message);

// Prints "collatzctl <command>: <status>" to stderr; returns kExitFailure.
int Failure(const std::string& command, const Status& status);

// Parses a number argument (ParseU128 forms); the message names the flag on error.
Status ParseNumberFlag(const std::string& flag, const std::string& text, u128* out);

// "delay" or "delay,class" (also "class,delay").
Status ParseKindsFlag(const std::string& text, Kinds* out);
const char* KindsName(Kinds kinds);

// A readable form of a range end: "2^28", "2^60+5", or the decimal.
std::string FormatNumberShort(u128 x);
// "1.23e+09"-style rate.
std::string FormatRate(double per_second);

}  // namespace collatz::cli
