// Checks a trusted import before it is stored: the one set of rules behind the
// coordinator's Import RPC and `collatzctl import --db`.
//
// Trusted means complete, not unchecked. Every row's delay is recomputed; the delay list
// must be the record list (ascending n, rising delays, starting at 1) and the class list
// (optional) the class-record list (ascending delay, starting at class 0 -> 1), every row
// below the bound. Completeness cannot be proven, but it can be refuted: a known number m
// below the bound with delay e (or its doubling 2^j m with delay e + j) proves that the
// largest delay at or below m is at least e, that no record after m has a delay <= e, and
// that class e has a member at or below m. Known numbers: the lists' own rows, the
// published records (recomputed) and everything in the database.
#pragma once

#include <vector>

#include "core/merge.h"
#include "core/status.h"
#include "core/unit.h"

namespace collatz {

// InvalidArgument, with a message that names the row or number at fault, for an import
// that breaks a rule. known_points: numbers with their exact delays (at any height; those
// at or above the bound are ignored).
Status CheckTrustedImport(const TrustedImport& import, const std::vector<Record>& known_points);

// The refutation half of CheckTrustedImport alone, for an import already stored: whether
// `points` (numbers with their exact delays, not rechecked here) fit its lists.
Status CheckPointsFitImport(const TrustedImport& import, const std::vector<Record>& points);

}  // namespace collatz
