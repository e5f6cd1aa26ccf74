#include "server/stats_verifier.h"

#include <algorithm>
#include <set>

namespace collatz::server {

std::vector<uint64_t> ChooseAuditBatches(uint64_t batches, int count, std::mt19937_64* rng) {
  std::set<uint64_t> chosen;
  if (batches == 0 || count <= 0) return {};
  chosen.insert(0);
  if (count >= 2) chosen.insert(batches - 1);
  const uint64_t want = std::min<uint64_t>(static_cast<uint64_t>(count), batches);
  while (chosen.size() < want) chosen.insert((*rng)() % batches);
  return std::vector<uint64_t>(chosen.begin(), chosen.end());
}

BatchStats RecomputeBatch(const FastDelay& delay, u128 start, uint32_t batch) {
  BatchStats s;
  for (uint32_t i = 0; i < batch; ++i) {
    const u128 n = start + i;
    if (n == 0) continue;  // N = 0 is not counted
    AddDelay(&s, delay.Delay(n));
  }
  return s;
}

Status VerifyStatsResult(const FastDelay& delay, u128 begin, u128 end, uint32_t batch, const std::string& stats_file,
                         const std::vector<uint64_t>& audit_batches, StatsFile* decoded) {
  StatsFile f;
  // Checksums, sizes, and min <= sum / count <= max for every batch (count from the range).
  Status st = DecodeStatsFile(stats_file, "stats result", &f);
  if (!st.ok()) return Status::InvalidArgument(st.message());
  if (f.batch != batch) {
    return Status::InvalidArgument("stats result has batch size " + std::to_string(f.batch) + ", the job's is " +
                                   std::to_string(batch));
  }
  if (f.from != begin) {
    return Status::InvalidArgument("stats result starts at " + ToDecimal(f.from) + ", the unit at " + ToDecimal(begin));
  }
  const u128 expected = (end - begin) / batch;
  if (static_cast<u128>(f.batches.size()) != expected) {
    return Status::InvalidArgument("stats result has " + std::to_string(f.batches.size()) + " batches, the unit " +
                                   ToDecimal(expected));
  }
  for (uint64_t b : audit_batches) {
    if (b >= f.batches.size()) return Status::Internal("audit batch out of range");
    const u128 start = begin + static_cast<u128>(b) * batch;
    const BatchStats exact = RecomputeBatch(delay, start, batch);
    const BatchStats& got = f.batches[b];
    if (!(exact == got)) {
      return Status::InvalidArgument("batch at " + ToDecimal(start) + " is wrong: reported min " + std::to_string(got.min) +
                                     " max " + std::to_string(got.max) + " sum " + std::to_string(got.sum) +
                                     ", exact min " + std::to_string(exact.min) + " max " + std::to_string(exact.max) +
                                     " sum " + std::to_string(exact.sum));
    }
  }
  if (decoded != nullptr) *decoded = std::move(f);
  return Status::Ok();
}

}  // namespace collatz::server
