// Reading and writing record lists as CSV: "n,delay" (delay records, by n) or
// "delay,n" (class records, by delay); a header line, then decimal integers.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "core/unit.h"

namespace collatz {

enum class RecordCsvKind { kDelay, kClass };

Status ReadRecordsCsv(const std::string& path, RecordCsvKind kind, std::vector<Record>* out);
Status ParseRecordsCsv(const std::string& text, RecordCsvKind kind, std::vector<Record>* out);
std::string FormatRecordsCsv(const std::vector<Record>& records, RecordCsvKind kind);

}  // namespace collatz
