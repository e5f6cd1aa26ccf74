// A sieve width per unit (collatz-server --class-sieve-bits): the fixture's base sieve is
// 12 bits, class units of at least 2^13 numbers get 14 here (one test has 19 and 25 bits; the
// server binary's defaults for 2^46 are in end_to_end_test.cc). The width is fixed when a unit is cut, leased with it,
// verified, audited and re-run with it, kept across restarts with other options; a result
// searched with another width is refused, and workers that do not honour Unit.sieve_bits
// are refused while units have several widths.
#include <gtest/gtest.h>

#include <map>

#include "server/coordinator_test_fixture.h"

namespace collatz::server {
namespace {

using grpc::StatusCode;

constexpr int kBase = 12, kClass = 14;
constexpr u128 kClassMin = u128{1} << 13;

class UnitWidthTest : public CoordinatorFixture {
 protected:
  UnitWidthTest() : CoordinatorFixture("unit_width_test_") {}

  void SetUp() override {
    CoordinatorFixture::SetUp();
    options_.class_sieve_bits = kClass;
    options_.class_sieve_min_numbers = kClassMin;
    Reopen();
  }

  LeaseGrant LeaseOne(int64_t worker) {
    LeaseGrant g;
    grpc::Status st = c_->Lease(worker, &g);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return g;
  }

  // Every pending unit leased by `worker`: begin -> the width its lease names.
  std::map<u128, int> LeaseAll(int64_t worker) {
    std::map<u128, int> widths;
    for (LeaseGrant g = LeaseOne(worker); g.has_unit; g = LeaseOne(worker)) widths[g.spec.begin] = g.sieve_bits;
    return widths;
  }

  // A new worker leases the first pending unit, whose width must be the one `want` (begin ->
  // width) gives it, searches it honestly with that width (accepted), then leases the rest:
  // every pending unit's lease names the width `want` gives it.
  void ExpectWidthsSearchingTheFirst(const std::map<u128, int>& want) {
    const int64_t w = NewWorker();
    LeaseGrant g = LeaseOne(w);
    ASSERT_TRUE(g.has_unit);
    ASSERT_EQ(want.count(g.spec.begin), 1u);
    const int bits = g.sieve_bits;
    EXPECT_EQ(bits, want.at(g.spec.begin));
    Disposition disp;
    grpc::Status st = c_->Complete(w, g.unit_id, g.token, Search(g.spec, bits), 1, "cpu", &disp);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(disp, Disposition::kAccepted);
    std::map<u128, int> rest = LeaseAll(w);
    rest[g.spec.begin] = bits;
    EXPECT_EQ(rest, want);
  }

  // Closes the coordinator and removes its database (the next Reopen starts empty).
  void RemoveDatabase() {
    c_.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db_ + suffix);
  }

  // Every finished unit audited; one delay+class unit of the class width queued.
  void SubmitOneAuditedClassUnit() {
    options_.audit_fraction = 1.0;
    Reopen();
    SubmitOutcome out;
    ASSERT_TRUE(c_->Submit(Pow2(16), Pow2(16) + kClassMin, Kinds::kDelayAndClass, kClassMin, 0, &out).ok());
  }

  bool Flagged(int64_t worker) {
    for (const WorkerReport& w : c_->ListWorkers()) {
      if (w.w.id == worker) return w.w.flagged;
    }
    return false;
  }

  // `worker` leases the next unit, whose lease names `bits`, searches it with that width and
  // is accepted.
  void SearchTheNextUnitHonestly(int64_t worker, int bits) {
    LeaseGrant g = LeaseOne(worker);
    ASSERT_TRUE(g.has_unit);
    ASSERT_EQ(g.sieve_bits, bits);
    Disposition d;
    grpc::Status st = c_->Complete(worker, g.unit_id, g.token, Search(g.spec, bits), 1, "cpu", &d);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(d, Disposition::kAccepted);
  }

  // The next unit, of `bits`, searched honestly; its audit reports a tally one off, which
  // only the server's re-run with the unit's width settles (a re-run with another sieve
  // would agree with neither result): the auditor is flagged, the stored result stands.
  void ExpectTheReRunFlagsTheLyingAuditor(int bits) {
    const int64_t honest = NewWorker(), liar = NewWorker();
    ASSERT_NO_FATAL_FAILURE(SearchTheNextUnitHonestly(honest, bits));
    Disposition d;
    LeaseGrant audit = LeaseOne(liar);
    ASSERT_EQ(audit.purpose, LeasePurpose::kAudit);
    ASSERT_EQ(audit.sieve_bits, bits);
    UnitResult lie = Search(audit.spec, bits);
    lie.tally_sum += 1;
    const grpc::Status st = c_->Complete(liar, audit.unit_id, audit.token, lie, 1, "cpu", &d);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(d, Disposition::kAuditMismatch);
    EXPECT_TRUE(Flagged(liar));
    EXPECT_FALSE(Flagged(honest));
    EXPECT_EQ(c_->GetStatus().finished, 1u);
  }
};

TEST_F(UnitWidthTest, ClassUnitsOfTheThresholdGetTheClassWidthOthersTheBase) {
  EXPECT_EQ(c_->sieve_bits(), kBase);
  EXPECT_EQ(c_->class_sieve_bits(), kClass);
  SubmitOutcome out;
  const u128 a = Pow2(16), b = Pow2(20), d = Pow2(24), unit = kClassMin;
  ASSERT_TRUE(c_->Submit(a, a + 2 * unit, Kinds::kDelayAndClass, unit, 0, &out).ok());
  ASSERT_TRUE(c_->Submit(b, b + unit + 100, Kinds::kDelayAndClass, unit, 0, &out).ok());  // a short last unit
  ASSERT_TRUE(c_->Submit(d, d + 2 * unit, Kinds::kDelay, unit, 0, &out).ok());
  const std::map<u128, int> want = {{a, kClass},     {a + unit, kClass}, {b, kClass}, {b + unit, kBase},
                                    {d, kBase},      {d + unit, kBase}};
  EXPECT_EQ(LeaseAll(NewWorker()), want);
}

// Delay-only units of at least delay_sieve_min_numbers get delay_sieve_bits where the server's
// unit size reaches that (its tables are built at Open), and are searched and accepted with it;
// a server of smaller units keeps the base width for them (no tables built at every start).
TEST_F(UnitWidthTest, WideDelayUnitsGetTheDelayWidthOnAServerOfSuchUnits) {
  constexpr int kDelayWide = 13;
  const u128 unit = Pow2(14), d = Pow2(24);
  options_.delay_sieve_bits = kDelayWide;
  options_.delay_sieve_min_numbers = unit;
  options_.default_unit_size = unit / 2;  // a server of smaller units
  Reopen();
  EXPECT_EQ(c_->delay_sieve_bits(), kBase);
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(d, d + unit, Kinds::kDelay, unit, 0, &out).ok());
  EXPECT_EQ(LeaseAll(NewWorker()), (std::map<u128, int>{{d, kBase}}));

  RemoveDatabase();
  options_.default_unit_size = unit;  // a campaign server
  Reopen();
  EXPECT_EQ(c_->delay_sieve_bits(), kDelayWide);
  const u128 a = Pow2(16);
  ASSERT_TRUE(c_->Submit(d, d + 2 * unit + 100, Kinds::kDelay, unit, 0, &out).ok());  // a short last unit
  ASSERT_TRUE(c_->Submit(a, a + 2 * kClassMin, Kinds::kDelayAndClass, kClassMin, 0, &out).ok());
  ASSERT_NO_FATAL_FAILURE(ExpectWidthsSearchingTheFirst({{a, kClass},
                                                         {a + kClassMin, kClass},
                                                         {d, kDelayWide},
                                                         {d + unit, kDelayWide},
                                                         {d + 2 * unit, kBase}}));
  // Restarted as a server of smaller units, the stored width keeps its tables.
  options_.default_unit_size = unit / 2;
  Reopen();
  EXPECT_EQ(c_->delay_sieve_bits(), kDelayWide);
}

// Delay+class units of at least delay_sieve_min_numbers take the wide width where it is wider
// than the class width (a 2^48-number class unit: 30 bits, not 25), and are accepted with it;
// smaller class units keep the class width, and on a server of smaller units (no wide tables
// built) wide class units keep it too.
TEST_F(UnitWidthTest, WideClassUnitsTakeTheWideWidthWhereItIsWider) {
  constexpr int kWide = 15;
  const u128 unit = Pow2(14), a = Pow2(20);
  options_.delay_sieve_bits = kWide;
  options_.delay_sieve_min_numbers = unit;
  options_.default_unit_size = unit;  // a campaign server: the wide tables are built
  Reopen();
  ASSERT_EQ(c_->delay_sieve_bits(), kWide);
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(a, a + 2 * unit, Kinds::kDelayAndClass, unit, 0, &out).ok());
  ASSERT_TRUE(c_->Submit(a + 2 * unit, a + 2 * unit + kClassMin, Kinds::kDelayAndClass, kClassMin, 0, &out).ok());
  ASSERT_NO_FATAL_FAILURE(ExpectWidthsSearchingTheFirst({{a, kWide}, {a + unit, kWide}, {a + 2 * unit, kClass}}));

  RemoveDatabase();
  options_.default_unit_size = unit / 2;  // a server of smaller units: no wide tables
  Reopen();
  ASSERT_EQ(c_->delay_sieve_bits(), kBase);
  ASSERT_TRUE(c_->Submit(a, a + unit, Kinds::kDelayAndClass, unit, 0, &out).ok());
  EXPECT_EQ(LeaseAll(NewWorker()), (std::map<u128, int>{{a, kClass}}));
}

// An honest worker searches each unit with the width its lease names; the audit lease names
// the same width, and the auditor's equal result matches.
TEST_F(UnitWidthTest, AClassUnitIsSearchedVerifiedAndAuditedWithItsWidth) {
  ASSERT_NO_FATAL_FAILURE(SubmitOneAuditedClassUnit());
  const int64_t a = NewWorker(), b = NewWorker();
  ASSERT_NO_FATAL_FAILURE(SearchTheNextUnitHonestly(a, kClass));
  Reopen();  // the width comes back from the database
  LeaseGrant audit = LeaseOne(b);
  ASSERT_EQ(audit.purpose, LeasePurpose::kAudit);
  EXPECT_EQ(audit.sieve_bits, kClass);
  Disposition d;
  const grpc::Status st = c_->Complete(b, audit.unit_id, audit.token, Search(audit.spec, kClass), 1, "cpu", &d);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(d, Disposition::kAuditMatched);
  EXPECT_FALSE(Flagged(a));
  EXPECT_FALSE(Flagged(b));
}

// A misconfigured (or lying) worker searches a 14-bit unit with its 12-bit sieve: the ladder
// and class minima are the same (the sieve is exact), but the candidates are not the
// unit's, and the result is refused before anything is stored.
TEST_F(UnitWidthTest, AResultSearchedWithAnotherWidthIsRefused) {
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(Pow2(16), Pow2(16) + kClassMin, Kinds::kDelayAndClass, kClassMin, 0, &out).ok());
  ASSERT_TRUE(c_->Submit(Pow2(20), Pow2(20) + kClassMin, Kinds::kDelay, kClassMin, 0, &out).ok());
  const int64_t wrong = NewWorker(), honest = NewWorker(), other = NewWorker();
  LeaseGrant g = LeaseOne(wrong);
  ASSERT_EQ(g.sieve_bits, kClass);
  const UnitResult narrow = Search(g.spec, kBase), right = Search(g.spec, kClass);
  ASSERT_EQ(narrow.ladder, right.ladder);
  ASSERT_EQ(narrow.class_minima, right.class_minima);
  ASSERT_NE(narrow.candidates, right.candidates);
  Disposition d;
  grpc::Status st = c_->Complete(wrong, g.unit_id, g.token, narrow, 1, "cpu", &d);
  EXPECT_EQ(st.error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_NE(st.error_message().find("another sieve width"), std::string::npos) << st.error_message();
  EXPECT_TRUE(Flagged(wrong));
  EXPECT_EQ(c_->GetStatus().finished, 0u);

  // The unit goes again, with its width, and the right result is accepted.
  LeaseGrant again = LeaseOne(honest);
  ASSERT_EQ(again.unit_id, g.unit_id);
  ASSERT_EQ(again.sieve_bits, kClass);
  ASSERT_TRUE(c_->Complete(honest, again.unit_id, again.token, Search(again.spec, kClass), 1, "cpu", &d).ok());
  EXPECT_EQ(d, Disposition::kAccepted);

  // The other way round: a base-width unit searched with the class width.
  LeaseGrant delay = LeaseOne(other);
  ASSERT_EQ(delay.sieve_bits, kBase);
  st = c_->Complete(other, delay.unit_id, delay.token, Search(delay.spec, kClass), 1, "cpu", &d);
  EXPECT_EQ(st.error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_FALSE(Flagged(honest));
}

// The same with the server's default widths: a class unit cut with 25 bits (base 19), searched
// by a worker with its 19-bit engine, is refused; its 25-bit result is accepted. (A unit of
// 2^22 numbers stands in for the 2^46 of the default threshold.)
TEST_F(UnitWidthTest, A25BitUnitSearchedWith19BitsIsRefused) {
  RemoveDatabase();
  options_.class_sieve_bits = 25;
  options_.class_sieve_min_numbers = Pow2(22);
  std::unique_ptr<CoordinatorStore> store;
  ASSERT_TRUE(CoordinatorStore::Open(db_, &store).ok());
  ASSERT_TRUE(Coordinator::Open(std::move(store), TablesOfWidth(19), &clock_, options_, &c_).ok());
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(Pow2(40), Pow2(40) + Pow2(22), Kinds::kDelayAndClass, Pow2(22), 0, &out).ok());
  WorkerDescription d;
  d.sieve_bits = 19;
  d.work_hash_version = kWorkHashVersion;
  d.unit_sieve_bits = true;
  int64_t wrong = 0, honest = 0;
  d.host = "wrong";
  ASSERT_TRUE(c_->Register(d, &wrong).ok());
  d.host = "honest";
  ASSERT_TRUE(c_->Register(d, &honest).ok());
  LeaseGrant g = LeaseOne(wrong);
  ASSERT_EQ(g.sieve_bits, 25);
  Disposition disposition;
  grpc::Status st = c_->Complete(wrong, g.unit_id, g.token, Search(g.spec, 19), 1, "cpu", &disposition);
  EXPECT_EQ(st.error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_NE(st.error_message().find("25-bit sieve"), std::string::npos) << st.error_message();
  EXPECT_TRUE(Flagged(wrong));
  g = LeaseOne(honest);
  ASSERT_EQ(g.sieve_bits, 25);
  st = c_->Complete(honest, g.unit_id, g.token, Search(g.spec, 25), 1, "cpu", &disposition);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(disposition, Disposition::kAccepted);
}

// An audit mismatch on a small unit is settled by the server's re-run with the unit's own
// width (a re-run with the base sieve would agree with neither result).
TEST_F(UnitWidthTest, TheServersReRunUsesTheUnitsWidth) {
  ASSERT_NO_FATAL_FAILURE(SubmitOneAuditedClassUnit());
  ExpectTheReRunFlagsTheLyingAuditor(kClass);
}

// collatz-server builds its other widths without the CPU engine's mod-9 offset table (1.7 GB
// at 30 bits): results are counted and checked with the sieve alone, and the re-run that
// settles an audit mismatch adds the table for its search.
TEST_F(UnitWidthTest, AWidthWithoutCpuOffsetsVerifiesAndItsReRunAddsThem) {
  constexpr int kDelayWide = 13;
  const u128 unit = Pow2(14), d = Pow2(24);
  options_.build_tables = [](int bits, std::shared_ptr<const SearchTables>* out) {
    std::shared_ptr<const Sieve> sieve;
    const Status st = Sieve::Generate(bits, &sieve);
    return st.ok() ? SearchTables::FromSieve(sieve, tables_->delay, out, /*cpu_offsets=*/false) : st;
  };
  options_.delay_sieve_bits = kDelayWide;
  options_.delay_sieve_min_numbers = unit;
  options_.default_unit_size = unit;
  options_.audit_fraction = 1.0;
  Reopen();
  ASSERT_EQ(c_->delay_sieve_bits(), kDelayWide);
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(d, d + unit, Kinds::kDelay, unit, 0, &out).ok());
  ExpectTheReRunFlagsTheLyingAuditor(kDelayWide);
}

// --class-sieve-bits 0 (or the base width): one width, and older workers are welcome.
TEST_F(UnitWidthTest, ClassWidthZeroOrTheBaseGivesOneWidth) {
  for (int class_bits : {0, kBase}) {
    RemoveDatabase();
    options_.class_sieve_bits = class_bits;
    Reopen();
    EXPECT_EQ(c_->class_sieve_bits(), kBase);
    SubmitOutcome out;
    ASSERT_TRUE(c_->Submit(Pow2(16), Pow2(16) + 2 * kClassMin, Kinds::kDelayAndClass, kClassMin, 0, &out).ok());
    const int64_t old = NewWorker("", {}, "", /*unit_sieve_bits=*/false);
    ASSERT_NE(old, 0);
    const std::map<u128, int> want = {{Pow2(16), kBase}, {Pow2(16) + kClassMin, kBase}};
    EXPECT_EQ(LeaseAll(old), want) << class_bits;
  }
}

// Each unit keeps the width it was cut with: a restart with another class width (or none)
// leases, verifies and builds the tables of the stored widths; new units get the new
// option. A stored width that cannot be built stops the start with a clear error.
TEST_F(UnitWidthTest, ARestartKeepsTheStoredWidths) {
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(Pow2(16), Pow2(16) + 2 * kClassMin, Kinds::kDelayAndClass, kClassMin, 0, &out).ok());
  options_.class_sieve_bits = 0;
  Reopen();
  EXPECT_EQ(c_->class_sieve_bits(), kBase);
  ASSERT_TRUE(c_->Submit(Pow2(20), Pow2(20) + kClassMin, Kinds::kDelayAndClass, kClassMin, 0, &out).ok());
  const int64_t w = NewWorker();
  LeaseGrant g = LeaseOne(w);
  ASSERT_EQ(g.sieve_bits, kClass);
  Disposition d;
  grpc::Status st = c_->Complete(w, g.unit_id, g.token, Search(g.spec, kClass), 1, "cpu", &d);
  ASSERT_TRUE(st.ok()) << st.error_message();
  // Still units of two widths: a worker of one width is refused.
  WorkerDescription old;
  old.host = "old";
  old.sieve_bits = kBase;
  old.work_hash_version = kWorkHashVersion;
  int64_t id = 0;
  EXPECT_EQ(c_->Register(old, &id).error_code(), StatusCode::FAILED_PRECONDITION);

  options_.class_sieve_bits = 16;
  Reopen();
  EXPECT_EQ(c_->class_sieve_bits(), 16);
  ASSERT_TRUE(c_->Submit(Pow2(24), Pow2(24) + kClassMin, Kinds::kDelayAndClass, kClassMin, 0, &out).ok());
  const std::map<u128, int> want = {{Pow2(16) + kClassMin, kClass}, {Pow2(20), kBase}, {Pow2(24), 16}};
  EXPECT_EQ(LeaseAll(w), want);

  // Without a way to build the 14- and 16-bit tables the server does not start.
  options_.class_sieve_bits = 0;
  options_.build_tables = nullptr;
  c_.reset();
  std::unique_ptr<CoordinatorStore> store;
  ASSERT_TRUE(CoordinatorStore::Open(db_, &store).ok());
  st = Coordinator::Open(std::move(store), tables_, &clock_, options_, &c_);
  EXPECT_EQ(st.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(st.error_message().find("14-bit sieve (unit "), std::string::npos) << st.error_message();
  // ... nor with a width no unit may have.
  options_.build_tables = [](int bits, std::shared_ptr<const SearchTables>* out) {
    *out = TablesOfWidth(bits);
    return Status::Ok();
  };
  options_.class_sieve_bits = 31;
  ASSERT_TRUE(CoordinatorStore::Open(db_, &store).ok());
  st = Coordinator::Open(std::move(store), tables_, &clock_, options_, &c_);
  EXPECT_EQ(st.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(st.error_message().find("not a unit width"), std::string::npos) << st.error_message();
  options_.class_sieve_bits = kClass;
  Reopen();
}

// A worker that does not say it honours Unit.sieve_bits would search every unit with its
// own sieve: refused at registration while units have several widths, and a worker of that
// kind registered earlier is refused at its next lease.
TEST_F(UnitWidthTest, WorkersOfOneWidthAreRefusedWhileUnitsHaveSeveral) {
  WorkerDescription old;
  old.host = "old";
  old.sieve_bits = kBase;
  old.work_hash_version = kWorkHashVersion;
  int64_t id = 0;
  grpc::Status st = c_->Register(old, &id);
  EXPECT_EQ(st.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(st.error_message().find("upgrade the worker"), std::string::npos) << st.error_message();
  EXPECT_NE(st.error_message().find("12 and 14 bits"), std::string::npos) << st.error_message();
  old.unit_sieve_bits = true;
  ASSERT_TRUE(c_->Register(old, &id).ok());
  // The registration width must still be the base width.
  old.sieve_bits = kClass;
  EXPECT_EQ(c_->Register(old, &id).error_code(), StatusCode::FAILED_PRECONDITION);

  // Registered while the server had one width, then the server restarts with two.
  RemoveDatabase();
  options_.class_sieve_bits = 0;
  Reopen();
  const int64_t before = NewWorker("", {}, "", /*unit_sieve_bits=*/false), modern = NewWorker();
  options_.class_sieve_bits = kClass;
  Reopen();
  SubmitOutcome out;
  ASSERT_TRUE(c_->Submit(Pow2(16), Pow2(16) + kClassMin, Kinds::kDelayAndClass, kClassMin, 0, &out).ok());
  LeaseGrant g;
  st = c_->Lease(before, &g);
  EXPECT_EQ(st.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(st.error_message().find("upgrade the worker"), std::string::npos) << st.error_message();
  EXPECT_FALSE(g.has_unit);
  EXPECT_EQ(LeaseOne(modern).sieve_bits, kClass);
}

}  // namespace
}  // namespace collatz::server
