// How a 128-bit N is stored in the database: TEXT of exactly 39 decimal digits,
// zero-padded (2^128 - 1 has 39 digits), so that SQLite's text order is numeric order
// and nothing is lost to SQLite's 64-bit signed INTEGER.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "core/u128.h"

namespace collatz {

constexpr size_t kNTextDigits = 39;

// 39-digit zero-padded decimal.
std::string EncodeNText(u128 n);

// Inverse of EncodeNText; anything but exactly 39 decimal digits is Corruption.
Status DecodeNText(std::string_view text, u128* out);

}  // namespace collatz
