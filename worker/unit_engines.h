// The search engine of each sieve width a device's units ask for (Unit.sieve_bits: a
// coordinator cuts wide delay+class units with a wider sieve): the startup engine for the
// width the worker registered with, any other built on the unit that first asks for it and
// self-tested before it searches anything. A width that cannot be built, or whose engine
// fails its self-test, is refused from then on: its units are released as failed, never
// searched with another width (their result would be refused). One per device; thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/search_engine.h"
#include "core/status.h"
#include "core/unit_search.h"

namespace collatz::worker {

class UnitEngines {
 public:
  // Builds the engine of a width with its tables (the worker: tables sharing the startup
  // tables' step and tail tables, the sieve built on the GPU when wide).
  using Build = std::function<Status(int sieve_bits, std::unique_ptr<SearchEngine>* engine,
                                     std::shared_ptr<const SearchTables>* tables)>;
  // The startup self-test of a device (worker/self_test.h); *summary says what passed.
  using SelfTest = std::function<Status(SearchEngine& engine, const SearchTables& tables, std::string* summary)>;

  // `startup` (not owned; it passed its self-test already) searches units of `startup_bits`.
  UnitEngines(std::string device, int startup_bits, SearchEngine* startup, Build build, SelfTest self_test);

  // The engine for units of `sieve_bits` (0: the startup width: servers before Unit.sieve_bits).
  // FailedPrecondition, with the reason, for a width that is not 1 to kMaxUnitSieveBits,
  // could not be built or failed its self-test (now or before).
  Status EngineFor(int sieve_bits, SearchEngine** out);

  SearchEngine* startup() const { return startup_; }
  int startup_bits() const { return startup_bits_; }

 private:
  const std::string device_;
  const int startup_bits_;
  SearchEngine* startup_;
  Build build_;
  SelfTest self_test_;
  std::mutex mu_;
  std::map<int, std::unique_ptr<SearchEngine>> built_;  // by width
  std::map<int, std::string> refused_;                   // width -> why
};

}  // namespace collatz::worker
