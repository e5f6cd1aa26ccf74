// The record lists `collatzctl import` takes, read and cut the same way for a server and
// for a local database (--db): --published (the compiled-in published delay records,
// complete below their last n + 1; delay records only, so they cover delay searches, never
// class searches) or --delay-csv [--class-csv] --complete-below. Every rule they must
// obey is checked by CheckTrustedImport (core/import_check.h), on the server for a server.
// Or --points: known points, numbers with their exact delays and no claim of completeness
// (core/known_points.h), checked by CheckKnownPoints.
#pragma once

#include <string>
#include <vector>

#include "core/merge.h"
#include "core/status.h"

namespace collatz::cli {

struct ImportListArgs {
  bool published = false;
  std::string delay_csv, class_csv, complete_below, source;
  std::string points_csv;  // --points: known points, n,delay, any order
};

// InvalidArgument for flags that do not go together or a file that does not parse (the
// message names the flag or file); IOError for a file that cannot be read. *source is what
// the import is stored as coming from.
Status ReadImportLists(const ImportListArgs& args, TrustedImport* out, std::string* source);

// collatzctl import --db PATH: checks the lists against every number the database and the
// published records know, then stores them in one transaction; bad input changes nothing
// (and creates no file).
int LocalImport(const ImportListArgs& args, const std::string& db_path);

// --points FILE alone (no list flags): its rows, at most kMaxKnownPointsPerImport, and the
// source they are stored as. Errors as ReadImportLists'.
Status ReadKnownPointsArgs(const ImportListArgs& args, std::vector<Record>* points, std::string* source);

// collatzctl import --points FILE --db PATH: checks the points (every delay, and against the
// database's trusted imports), then stores them; bad input changes nothing.
int LocalImportPoints(const ImportListArgs& args, const std::string& db_path);

}  // namespace collatz::cli
