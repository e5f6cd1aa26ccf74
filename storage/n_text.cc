#include "storage/n_text.h"

namespace collatz {

std::string EncodeNText(u128 n) {
  std::string s(kNTextDigits, '0');
  for (size_t i = kNTextDigits; i-- > 0 && n != 0;) {
    s[i] = static_cast<char>('0' + static_cast<int>(n % 10));
    n /= 10;
  }
  return s;
}

Status DecodeNText(std::string_view text, u128* out) {
  if (text.size() != kNTextDigits) {
    return Status::Corruption("stored number \"" + std::string(text) + "\" is not 39 digits");
  }
  Status st = ParseDecimalU128(std::string(text), out);
  if (!st.ok()) return Status::Corruption("stored number \"" + std::string(text) + "\": " + st.message());
  return Status::Ok();
}

}  // namespace collatz
