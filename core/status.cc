#include "core/status.h"

namespace collatz {

std::string Status::ToString() const {
  const char* name = "OK";
  switch (code_) {
    case Code::kOk: return "OK";
    case Code::kInvalidArgument: name = "invalid argument"; break;
    case Code::kOutOfRange: name = "out of range"; break;
    case Code::kNotFound: name = "not found"; break;
    case Code::kCorruption: name = "corruption"; break;
    case Code::kIOError: name = "I/O error"; break;
    case Code::kInternal: name = "internal error"; break;
    case Code::kUnavailable: name = "unavailable"; break;
    case Code::kFailedPrecondition: name = "failed precondition"; break;
  }
  return std::string(name) + ": " + message_;
}

}  // namespace collatz
