#include "core/unit.h"

#include <algorithm>
#include <sstream>

namespace collatz {

Status ValidateUnitSpec(const UnitSpec& spec) {
  if (spec.begin < 1) return Status::InvalidArgument("unit begins at 0; N starts at 1");
  if (spec.end <= spec.begin) {
    return Status::InvalidArgument("empty or reversed unit [" + ToDecimal(spec.begin) + ", " + ToDecimal(spec.end) + ")");
  }
  for (size_t i = 0; i < spec.open_holes.size(); ++i) {
    if (spec.open_holes[i] > spec.floor) return Status::InvalidArgument("open hole above the floor");
    if (i > 0 && spec.open_holes[i] <= spec.open_holes[i - 1]) return Status::InvalidArgument("open holes not ascending");
  }
  for (size_t i = 0; i < spec.known_records.size(); ++i) {
    if (i > 0 && (spec.known_records[i].n <= spec.known_records[i - 1].n ||
                  spec.known_records[i].delay <= spec.known_records[i - 1].delay)) {
      return Status::InvalidArgument("known records not strictly ascending");
    }
  }
  if (spec.records_complete_below > 1 && (spec.known_records.empty() || spec.known_records.front().n != 1)) {
    return Status::InvalidArgument("known records must start with n = 1");
  }
  return Status::Ok();
}

void UnitResultCombiner::Add(const UnitResult& part) {
  for (const Record& e : part.ladder) {
    if (e.delay > running_max_) {
      out_.ladder.push_back(e);
      running_max_ = e.delay;
    }
  }
  for (const Record& e : part.class_minima) {
    if (e.delay >= has_min_.size()) {
      has_min_.resize(e.delay + 1, false);
      min_by_delay_.resize(e.delay + 1, 0);
    }
    if (!has_min_[e.delay] || e.n < min_by_delay_[e.delay]) {
      has_min_[e.delay] = true;
      min_by_delay_[e.delay] = e.n;
    }
  }
  out_.candidates += part.candidates;
  out_.tally_count += part.tally_count;
  out_.tally_sum += part.tally_sum;
  out_.work_hash += part.work_hash;
}

UnitResult UnitResultCombiner::Finish() {
  out_.class_minima.clear();
  for (size_t d = 0; d < has_min_.size(); ++d) {
    if (has_min_[d]) out_.class_minima.push_back({min_by_delay_[d], static_cast<uint32_t>(d)});
  }
  return std::move(out_);
}

std::string DescribeUnitResult(const UnitResult& r) {
  std::ostringstream os;
  os << "candidates=" << r.candidates << " tally_count=" << r.tally_count << " tally_sum=" << r.tally_sum
     << " work_hash=" << r.work_hash << " ladder=[";
  for (const Record& e : r.ladder) os << " " << ToDecimal(e.n) << ":" << e.delay;
  os << " ] class_minima=[";
  for (const Record& e : r.class_minima) os << " " << e.delay << ":" << ToDecimal(e.n);
  os << " ]";
  return os.str();
}

}  // namespace collatz
