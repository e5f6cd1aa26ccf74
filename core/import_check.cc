#include "core/import_check.h"

#include <algorithm>

#include "core/delay.h"

namespace collatz {
namespace {

std::string Row(const Record& r) { return ToDecimal(r.n) + "," + std::to_string(r.delay); }

Status CheckRows(const std::vector<Record>& rows, u128 bound, const char* what) {
  for (const Record& r : rows) {
    if (r.n < 1 || r.n >= bound) {
      return Status::InvalidArgument(std::string(what) + ": " + ToDecimal(r.n) + " is not below the bound " +
                                     ToDecimal(bound) + " (the bound must lie above the last row)");
    }
    const uint32_t exact = SlowDelay(r.n);
    if (exact != r.delay) {
      return Status::InvalidArgument(std::string(what) + ": row " + Row(r) + " is wrong: the exact delay of " +
                                     ToDecimal(r.n) + " is " + std::to_string(exact));
    }
  }
  return Status::Ok();
}

Status CheckDelayList(const std::vector<Record>& rows) {
  if (rows.empty() || rows.front().n != 1) {
    return Status::InvalidArgument("delay records: the list must start with 1,0 (1 is the first delay record)");
  }
  for (size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].n <= rows[i - 1].n) {
      return Status::InvalidArgument("delay records: not sorted by n: " + ToDecimal(rows[i].n) + " comes after " +
                                     ToDecimal(rows[i - 1].n));
    }
  }
  return Status::Ok();
}

// After every delay is known to be exact: a delay record beats the one before it.
Status CheckRisingDelays(const std::vector<Record>& rows) {
  for (size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].delay <= rows[i - 1].delay) {
      return Status::InvalidArgument("delay records: " + Row(rows[i]) + " is no delay record: its delay does not exceed " +
                                     Row(rows[i - 1]) + "'s");
    }
  }
  return Status::Ok();
}

Status CheckClassList(const std::vector<Record>& rows) {
  if (rows.front().delay != 0 || rows.front().n != 1) {
    return Status::InvalidArgument("class records: the list must start with 0,1 (class 0 is {1})");
  }
  for (size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].delay <= rows[i - 1].delay) {
      return Status::InvalidArgument("class records: not sorted by delay: " + std::to_string(rows[i].delay) +
                                     " comes after " + std::to_string(rows[i - 1].delay));
    }
  }
  return Status::Ok();
}

// What a number m below the bound with exact delay e proves about the lists.
Status Refute(const TrustedImport& imp, const Record& m) {
  const auto by_n = [](u128 n, const Record& r) { return n < r.n; };
  // Only a refused list pays for the message.
  const auto known = [&m] { return ToDecimal(m.n) + " has delay " + std::to_string(m.delay); };
  const auto& rows = imp.delay_records;
  auto after = std::upper_bound(rows.begin(), rows.end(), m.n, by_n);  // the first row above m
  // rows.front() is 1 <= m, so the last row at or below m exists.
  if (std::prev(after)->delay < m.delay) {
    return Status::InvalidArgument("delay records: not complete below " + ToDecimal(imp.complete_below) + ": " + known() +
                                   ", more than any listed record at or below it");
  }
  if (after != rows.end() && after->delay <= m.delay) {
    return Status::InvalidArgument("delay records: row " + Row(*after) + " is no delay record: the smaller " + known());
  }
  if (imp.class_records.empty()) return Status::Ok();
  const auto& classes = imp.class_records;
  auto c = std::lower_bound(classes.begin(), classes.end(), m.delay,
                            [](const Record& r, uint32_t d) { return r.delay < d; });
  if (c == classes.end() || c->delay != m.delay) {
    return Status::InvalidArgument("class records: not complete below " + ToDecimal(imp.complete_below) + ": " + known() +
                                   ", and class " + std::to_string(m.delay) + " is missing");
  }
  if (c->n > m.n) {
    return Status::InvalidArgument("class records: row " + std::to_string(c->delay) + "," + ToDecimal(c->n) +
                                   " is no class record: the smaller " + known());
  }
  return Status::Ok();
}

}  // namespace

Status CheckTrustedImport(const TrustedImport& imp, const std::vector<Record>& known_points) {
  const u128 bound = imp.complete_below;
  if (bound < 2) return Status::InvalidArgument("the import bound must be at least 2");
  Status st = CheckDelayList(imp.delay_records);
  if (st.ok() && !imp.class_records.empty()) st = CheckClassList(imp.class_records);
  if (st.ok()) st = CheckRows(imp.delay_records, bound, "delay records");
  if (st.ok()) st = CheckRows(imp.class_records, bound, "class records");
  if (st.ok()) st = CheckRisingDelays(imp.delay_records);
  if (!st.ok()) return st;
  // The lists' own rows are known points too (a record m with no record up to 2m below
  // the bound leaves 2m out, and class d - 1 at x bounds class d by 2x).
  for (const auto* list : {&imp.delay_records, &imp.class_records, &known_points}) {
    if (!(st = CheckPointsFitImport(imp, *list)).ok()) return st;
  }
  return Status::Ok();
}

Status CheckPointsFitImport(const TrustedImport& imp, const std::vector<Record>& points) {
  const u128 bound = imp.complete_below;
  // Every point below the bound, with its doublings below it (delay(2m) = delay(m) + 1).
  for (Record m : points) {
    if (m.n < 1) continue;
    while (m.n < bound) {
      if (Status st = Refute(imp, m); !st.ok()) return st;
      if (m.n > (bound - 1) / 2) break;
      m.n *= 2;
      ++m.delay;
    }
  }
  return Status::Ok();
}

}  // namespace collatz
