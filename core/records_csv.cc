#include "core/records_csv.h"

#include <fstream>
#include <sstream>

namespace collatz {

Status ParseRecordsCsv(const std::string& text, RecordCsvKind kind, std::vector<Record>* out) {
  const std::string header = kind == RecordCsvKind::kDelay ? "n,delay" : "delay,n";
  std::istringstream in(text);
  std::string line;
  size_t line_no = 0;
  out->clear();
  bool saw_header = false;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (!saw_header) {
      if (line != header) return Status::InvalidArgument("expected header \"" + header + "\", got \"" + line + "\"");
      saw_header = true;
      continue;
    }
    const size_t comma = line.find(',');
    if (comma == std::string::npos || line.find(',', comma + 1) != std::string::npos) {
      return Status::InvalidArgument("line " + std::to_string(line_no) + ": expected two comma-separated fields");
    }
    u128 a, b;
    Status st = ParseDecimalU128(line.substr(0, comma), &a);
    if (st.ok()) st = ParseDecimalU128(line.substr(comma + 1), &b);
    if (!st.ok()) return Status::InvalidArgument("line " + std::to_string(line_no) + ": " + st.message());
    const u128 n = kind == RecordCsvKind::kDelay ? a : b;
    const u128 d = kind == RecordCsvKind::kDelay ? b : a;
    if (d > 0xFFFFFFFFu) return Status::InvalidArgument("line " + std::to_string(line_no) + ": delay too large");
    if (n == 0) return Status::InvalidArgument("line " + std::to_string(line_no) + ": n must be >= 1");
    out->push_back({n, static_cast<uint32_t>(d)});
  }
  if (!saw_header) return Status::InvalidArgument("empty records file (no header \"" + header + "\")");
  return Status::Ok();
}

Status ReadRecordsCsv(const std::string& path, RecordCsvKind kind, std::vector<Record>* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::IOError("cannot open " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  Status st = ParseRecordsCsv(ss.str(), kind, out);
  if (!st.ok()) return Status::InvalidArgument(path + ": " + st.message());
  return st;
}

std::string FormatRecordsCsv(const std::vector<Record>& records, RecordCsvKind kind) {
  std::string s = kind == RecordCsvKind::kDelay ? "n,delay\n" : "delay,n\n";
  for (const Record& r : records) {
    if (kind == RecordCsvKind::kDelay) s += ToDecimal(r.n) + "," + std::to_string(r.delay) + "\n";
    else s += std::to_string(r.delay) + "," + ToDecimal(r.n) + "\n";
  }
  return s;
}

}  // namespace collatz
