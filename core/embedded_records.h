// The published delay records and the exhaustive class records below 2^28, compiled into
// every binary: the floors of units (core/published_points.h), `collatzctl import --published`
// and the lists `collatzctl bench` imports by default.
// core/CMakeLists.txt reads data/published_delay_records.csv and
// data/class_records_below_2p28.csv at configure time and writes them into a generated
// source (core/embedded_records.cc.in), so that they work wherever the binary is (an
// installed copy, one carried to a GPU machine) without the checkout it was built from.
// Editing either CSV reconfigures and rebuilds; core/embedded_records_test.cc checks that
// the embedded texts equal the files in data/.
#pragma once

namespace collatz {

// The text of data/published_delay_records.csv ("n,delay") at build time.
const char* EmbeddedPublishedDelayRecordsCsv();
// The text of data/class_records_below_2p28.csv ("delay,n") at build time.
const char* EmbeddedClassRecordsCsv();

// How errors and the bench's output name the embedded copies.
inline constexpr const char* kEmbeddedPublishedDelayRecordsName = "built-in data/published_delay_records.csv";
inline constexpr const char* kEmbeddedClassRecordsName = "built-in data/class_records_below_2p28.csv";

}  // namespace collatz
