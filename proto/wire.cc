#include "proto/wire.h"

namespace collatz::wire {

v1::Kinds KindsToWire(Kinds k) {
  return k == Kinds::kDelay ? v1::KINDS_DELAY : v1::KINDS_DELAY_AND_CLASS;
}

Status KindsFromWire(v1::Kinds k, Kinds* out) {
  switch (k) {
    case v1::KINDS_DELAY:
      *out = Kinds::kDelay;
      return Status::Ok();
    case v1::KINDS_DELAY_AND_CLASS:
      *out = Kinds::kDelayAndClass;
      return Status::Ok();
    default:
      return Status::InvalidArgument("kinds must be delay or delay,class");
  }
}

void RecordsToWire(const std::vector<Record>& in, google::protobuf::RepeatedPtrField<v1::Record>* out) {
  out->Reserve(static_cast<int>(in.size()));
  for (const Record& r : in) {
    v1::Record* w = out->Add();
    ToWire(r.n, w->mutable_n());
    w->set_delay(r.delay);
  }
}

std::vector<Record> RecordsFromWire(const google::protobuf::RepeatedPtrField<v1::Record>& in) {
  std::vector<Record> out;
  out.reserve(in.size());
  for (const v1::Record& w : in) out.push_back(Record{FromWire(w.n()), w.delay()});
  return out;
}

void ResultToWire(const UnitResult& in, v1::UnitResult* out) {
  RecordsToWire(in.ladder, out->mutable_ladder());
  RecordsToWire(in.class_minima, out->mutable_class_minima());
  out->set_candidates(in.candidates);
  out->set_tally_count(in.tally_count);
  out->set_tally_sum(in.tally_sum);
  out->set_work_hash(in.work_hash);
}

UnitResult ResultFromWire(const v1::UnitResult& in) {
  UnitResult r;
  r.ladder = RecordsFromWire(in.ladder());
  r.class_minima = RecordsFromWire(in.class_minima());
  r.candidates = in.candidates();
  r.tally_count = in.tally_count();
  r.tally_sum = in.tally_sum();
  r.work_hash = in.work_hash();
  return r;
}

void SpecToWire(const UnitSpec& in, v1::Unit* out) {
  ToWire(in.begin, out->mutable_begin());
  ToWire(in.end, out->mutable_end());
  out->set_kinds(KindsToWire(in.kinds));
  out->set_floor(in.floor);
  for (uint32_t h : in.open_holes) out->add_open_holes(h);
  RecordsToWire(in.known_records, out->mutable_known_records());
  ToWire(in.records_complete_below, out->mutable_records_complete_below());
}

Status SpecFromWire(const v1::Unit& in, UnitSpec* out) {
  UnitSpec s;
  s.begin = FromWire(in.begin());
  s.end = FromWire(in.end());
  Status st = KindsFromWire(in.kinds(), &s.kinds);
  if (!st.ok()) return st;
  s.floor = in.floor();
  s.open_holes.assign(in.open_holes().begin(), in.open_holes().end());
  s.known_records = RecordsFromWire(in.known_records());
  s.records_complete_below = FromWire(in.records_complete_below());
  st = ValidateUnitSpec(s);
  if (!st.ok()) return st;
  *out = std::move(s);
  return Status::Ok();
}

}  // namespace collatz::wire
