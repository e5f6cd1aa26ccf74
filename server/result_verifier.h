// Forwarding header: the result verifier lives in core/result_verifier.h (one verifier for
// the coordinator and collatzctl). Kept so coordinator.cc builds unchanged.
#pragma once

#include "core/result_verifier.h"
