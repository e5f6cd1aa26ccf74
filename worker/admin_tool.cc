// worker-admin-tool: a few Admin calls for test scripts and the GPU run in docs/WORKER.md
// (submit a range, import trusted records, wait until every unit is finished, print the
// final records as CSV in shared/data's formats). Not a product tool: collatzctl is.
//   worker-admin-tool ADDR submit BEGIN END UNIT_SIZE [delay|delay,class]
//   worker-admin-tool ADDR import-delay CSV COMPLETE_BELOW
//   worker-admin-tool ADDR wait SECONDS
//   worker-admin-tool ADDR records delay|class
// To be removed: collatzctl does all of it (tests/collatzctl_script_flow_test.cc), and
// only worker/gpu_run.sh still calls this tool. The replacements:
//   ADDR submit B E U [delay]    collatzctl submit --server ADDR --from B --to E --unit-size U [--kinds delay]
//   ADDR import-delay CSV BELOW  collatzctl import --server ADDR --delay-csv CSV --complete-below BELOW
//   ADDR wait S                  collatzctl status --server ADDR --wait S
//   ADDR records delay|class     collatzctl server-records --server ADDR --kind delay|class --format csv
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "core/records_csv.h"
#include "core/u128.h"
#include "proto/collatz.grpc.pb.h"
#include "proto/wire.h"

namespace {

using namespace collatz;

int Fail(const std::string& what) {
  std::fprintf(stderr, "worker-admin-tool: %s\n", what.c_str());
  return 1;
}

bool Parse(const char* text, u128* out) { return ParseU128(text, out).ok(); }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return Fail("usage: ADDR submit|import-delay|wait|records ...");
  auto stub = v1::Admin::NewStub(grpc::CreateChannel(argv[1], grpc::InsecureChannelCredentials()));
  const std::string cmd = argv[2];
  if (cmd == "submit" && argc >= 6) {
    u128 begin, end, unit;
    if (!Parse(argv[3], &begin) || !Parse(argv[4], &end) || !Parse(argv[5], &unit)) return Fail("bad number");
    v1::SubmitRequest req;
    wire::ToWire(begin, req.mutable_begin());
    wire::ToWire(end, req.mutable_end());
    wire::ToWire(unit, req.mutable_unit_size());
    req.set_kinds(argc >= 7 && std::string(argv[6]) == "delay" ? v1::KINDS_DELAY : v1::KINDS_DELAY_AND_CLASS);
    v1::SubmitResponse resp;
    grpc::ClientContext ctx;
    grpc::Status st = stub->Submit(&ctx, req, &resp);
    if (!st.ok()) return Fail("submit: " + st.error_message());
    std::printf("submission %llu: %llu units\n", static_cast<unsigned long long>(resp.submission_id()),
                static_cast<unsigned long long>(resp.units()));
    return 0;
  }
  if (cmd == "import-delay" && argc >= 5) {
    std::vector<Record> records;
    Status rs = ReadRecordsCsv(argv[3], RecordCsvKind::kDelay, &records);
    if (!rs.ok()) return Fail(rs.ToString());
    u128 below;
    if (!Parse(argv[4], &below)) return Fail("bad number");
    v1::ImportRequest req;
    wire::ToWire(below, req.mutable_complete_below());
    std::vector<Record> kept;
    for (const Record& r : records) {
      if (r.n < below) kept.push_back(r);
    }
    wire::RecordsToWire(kept, req.mutable_delay_records());
    req.set_source(argv[3]);
    v1::ImportResponse resp;
    grpc::ClientContext ctx;
    grpc::Status st = stub->Import(&ctx, req, &resp);
    if (!st.ok()) return Fail("import: " + st.error_message());
    std::printf("imported %zu delay records below %s; covered prefix %s\n", kept.size(), ToDecimal(below).c_str(),
                ToDecimal(wire::FromWire(resp.covered_prefix())).c_str());
    return 0;
  }
  if (cmd == "wait" && argc >= 4) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(std::atoi(argv[3]));
    while (std::chrono::steady_clock::now() < until) {
      v1::StatusRequest req;
      v1::StatusResponse resp;
      grpc::ClientContext ctx;
      if (stub->Status(&ctx, req, &resp).ok() && resp.units_pending() == 0 && resp.units_leased() == 0 &&
          resp.units_finished() > 0) {
        std::printf("all %llu units finished; covered prefix %s\n",
                    static_cast<unsigned long long>(resp.units_finished()),
                    ToDecimal(wire::FromWire(resp.covered_prefix())).c_str());
        return 0;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return Fail("timed out waiting for the units");
  }
  if (cmd == "records" && argc >= 4) {
    const bool klass = std::string(argv[3]) == "class";
    v1::QueryRecordsRequest req;
    req.set_kind(klass ? v1::RECORD_KIND_CLASS : v1::RECORD_KIND_DELAY);
    v1::QueryRecordsResponse resp;
    grpc::ClientContext ctx;
    grpc::Status st = stub->QueryRecords(&ctx, req, &resp);
    if (!st.ok()) return Fail("records: " + st.error_message());
    std::vector<Record> records = wire::RecordsFromWire(resp.final_records());
    std::fputs(FormatRecordsCsv(records, klass ? RecordCsvKind::kClass : RecordCsvKind::kDelay).c_str(), stdout);
    return 0;
  }
  return Fail("unknown command or missing arguments: " + cmd);
}
