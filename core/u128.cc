#include "core/u128.h"

#include <gmp.h>

#include <algorithm>
#include <cctype>
#include <memory>

namespace collatz {

std::string ToDecimal(u128 x) {
  if (x == 0) return "0";
  char buf[48];
  int pos = 0;
  while (x != 0) {
    buf[pos++] = static_cast<char>('0' + static_cast<int>(x % 10));
    x /= 10;
  }
  std::string s(buf, buf + pos);
  std::reverse(s.begin(), s.end());
  return s;
}

namespace {

// Exponents are capped so that a typo like 2^1000000000 is an error, not an out-of-memory.
constexpr unsigned long kMaxExponent = 4096;

struct Mpz {
  mpz_t v;
  Mpz() { mpz_init(v); }
  ~Mpz() { mpz_clear(v); }
  Mpz(const Mpz&) = delete;
  Mpz& operator=(const Mpz&) = delete;
};

bool MpzToU128(const mpz_t z, u128* out) {
  if (mpz_sgn(z) < 0 || mpz_sizeinbase(z, 2) > 128) return false;
  u128 r = 0;
  size_t count = 0;
  uint64_t words[2] = {0, 0};
  mpz_export(words, &count, -1, sizeof(uint64_t), 0, 0, z);
  r = MakeU128(words[1], words[0]);
  *out = r;
  return true;
}

class ExpressionParser {
 public:
  explicit ExpressionParser(const std::string& text) : s_(text) {}

  Status Parse(mpz_t result) {
    SkipSpaces();
    if (pos_ >= s_.size()) return Status::InvalidArgument("empty number");
    Mpz term;
    Status st = ParseTerm(term.v);
    if (!st.ok()) return st;
    mpz_set(result, term.v);
    while (true) {
      SkipSpaces();
      if (pos_ >= s_.size()) break;
      char op = s_[pos_];
      if (op != '+' && op != '-') {
        return Status::InvalidArgument(Where() + "unexpected character '" + std::string(1, op) +
                                       "' (expected + or -)");
      }
      ++pos_;
      SkipSpaces();
      if (pos_ >= s_.size()) return Status::InvalidArgument(Where() + "missing term after '" + std::string(1, op) + "'");
      st = ParseTerm(term.v);
      if (!st.ok()) return st;
      if (op == '+') mpz_add(result, result, term.v); else mpz_sub(result, result, term.v);
    }
    return Status::Ok();
  }

 private:
  std::string Where() const { return "in \"" + s_ + "\" at position " + std::to_string(pos_ + 1) + ": "; }

  void SkipSpaces() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }

  Status ParseLiteral(mpz_t out) {
    if (pos_ < s_.size() && s_[pos_] == '-') {
      return Status::InvalidArgument(Where() + "negative numbers are not allowed");
    }
    size_t start = pos_;
    int base = 10;
    if (pos_ + 1 < s_.size() && s_[pos_] == '0' && (s_[pos_ + 1] == 'x' || s_[pos_ + 1] == 'X')) {
      base = 16;
      pos_ += 2;
      start = pos_;
    }
    while (pos_ < s_.size() && (base == 16 ? std::isxdigit(static_cast<unsigned char>(s_[pos_]))
                                           : std::isdigit(static_cast<unsigned char>(s_[pos_])))) {
      ++pos_;
    }
    if (pos_ == start) {
      if (pos_ < s_.size()) {
        return Status::InvalidArgument(Where() + "expected a " + (base == 16 ? "hex digit" : "digit") +
                                       ", found '" + std::string(1, s_[pos_]) + "'");
      }
      return Status::InvalidArgument(Where() + "expected a " + (base == 16 ? "hex digit" : "digit"));
    }
    if (pos_ < s_.size() && std::isalnum(static_cast<unsigned char>(s_[pos_]))) {
      return Status::InvalidArgument(Where() + "invalid digit '" + std::string(1, s_[pos_]) + "' in a " +
                                     (base == 16 ? "hex" : "decimal") + " number");
    }
    std::string digits = s_.substr(start, pos_ - start);
    if (digits.size() > 200) return Status::OutOfRange("number has too many digits: \"" + s_ + "\"");
    mpz_set_str(out, digits.c_str(), base);
    return Status::Ok();
  }

  Status ParseTerm(mpz_t out) {
    Status st = ParseLiteral(out);
    if (!st.ok()) return st;
    SkipSpaces();
    if (pos_ < s_.size() && s_[pos_] == '^') {
      ++pos_;
      SkipSpaces();
      Mpz exponent;
      st = ParseLiteral(exponent.v);
      if (!st.ok()) return st;
      if (mpz_cmp_ui(exponent.v, kMaxExponent) > 0) {
        return Status::OutOfRange("exponent too large in \"" + s_ + "\" (N must be below 2^128)");
      }
      mpz_pow_ui(out, out, mpz_get_ui(exponent.v));
      SkipSpaces();
      if (pos_ < s_.size() && s_[pos_] == '^') {
        return Status::InvalidArgument(Where() + "chained exponents are not allowed; use parentheses-free a^k");
      }
    }
    return Status::Ok();
  }

  const std::string& s_;
  size_t pos_ = 0;
};

}  // namespace

Status ParseU128(const std::string& text, u128* out) {
  Mpz value;
  ExpressionParser parser(text);
  Status st = parser.Parse(value.v);
  if (!st.ok()) return st;
  if (mpz_sgn(value.v) < 0) return Status::OutOfRange("\"" + text + "\" is negative; N must be >= 0");
  if (!MpzToU128(value.v, out)) {
    return Status::OutOfRange("\"" + text + "\" is at or above 2^128; N must be below 2^128");
  }
  return Status::Ok();
}

Status ParseDecimalU128(const std::string& text, u128* out) {
  if (text.empty()) return Status::InvalidArgument("empty number");
  u128 r = 0;
  for (char ch : text) {
    if (ch < '0' || ch > '9') return Status::InvalidArgument("invalid decimal \"" + text + "\"");
    const unsigned d = static_cast<unsigned>(ch - '0');
    if (r > (kU128Max - d) / 10) return Status::OutOfRange("\"" + text + "\" is at or above 2^128");
    r = r * 10 + d;
  }
  *out = r;
  return Status::Ok();
}

}  // namespace collatz
