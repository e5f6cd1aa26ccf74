#include "worker/unit_engines.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "engines/sieve_width.h"

namespace collatz::worker {

UnitEngines::UnitEngines(std::string device, int startup_bits, SearchEngine* startup, Build build, SelfTest self_test)
    : device_(std::move(device)),
      startup_bits_(startup_bits),
      startup_(startup),
      build_(std::move(build)),
      self_test_(std::move(self_test)) {}

Status UnitEngines::EngineFor(int sieve_bits, SearchEngine** out) {
  if (sieve_bits == 0 || sieve_bits == startup_bits_) {
    *out = startup_;
    return Status::Ok();
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = built_.find(sieve_bits);
  if (it != built_.end()) {
    *out = it->second.get();
    return Status::Ok();
  }
  auto refused = refused_.find(sieve_bits);
  if (refused != refused_.end()) return Status::FailedPrecondition(refused->second);
  const std::string width = std::to_string(sieve_bits) + "-bit sieve";
  auto refuse = [&](const std::string& why) {
    const std::string reason = "this worker refuses units of a " + width + ": " + why;
    spdlog::error("{}: REFUSING units of a {} from now on: {}", device_, width, why);
    refused_[sieve_bits] = reason;
    return Status::FailedPrecondition(reason);
  };
  if (!engines::IsUnitSieveBits(sieve_bits)) {
    return refuse("it builds sieves of 1 to " + std::to_string(engines::kMaxUnitSieveBits) + " bits");
  }
  spdlog::info("{}: building the engine of a {} for the units that ask for it", device_, width);
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<SearchEngine> engine;
  std::shared_ptr<const SearchTables> tables;
  Status st = build_(sieve_bits, &engine, &tables);
  if (!st.ok()) return refuse("building its engine failed: " + st.ToString());
  if (tables == nullptr || tables->sieve->bits() != sieve_bits) return refuse("its tables have another width");
  std::string summary;
  st = self_test_(*engine, *tables, &summary);
  if (!st.ok()) return refuse("self-test FAILED (" + engine->Describe() + "): " + st.message());
  spdlog::info("{}: self-test passed on the {} engine ({}) in {:.2f} s with the build: {}", device_, width,
               engine->Describe(), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
               summary);
  *out = engine.get();
  built_[sieve_bits] = std::move(engine);
  return Status::Ok();
}

}  // namespace collatz::worker
