// The fast backend's adapters for the positional ops (backend_fast.cc maps op names to them):
// rope and rope_table (fast/rope.h), sinusoidal_pe (fast/sinusoidal_pe.h). Each reads the op's
// parameters and inputs and calls the plain-pointer API into the guarded output buffer.
#pragma once

#include <vector>

#include "fast/rope.h"
#include "fast/storage.h"
#include "oracle/core/guarded_buffer.h"
#include "oracle/core/op.h"
#include "oracle/ops/rope.h"

namespace lmo::oracle {

// The fast API's description of a rope / rope_table case: its shape and frequency rule.
fast::RopeShape fast_rope_shape(const RopeParams& p);
fast::RopeFrequencies fast_rope_frequencies(const RopeParams& p);

void run_fast_rope(const Op& op, fast::Storage s, const InputSet& in,
                   std::vector<GuardedBuffer>& out);
void run_fast_sinusoidal_pe(const Op& op, fast::Storage s, const InputSet& in,
                            std::vector<GuardedBuffer>& out);

}  // namespace lmo::oracle
