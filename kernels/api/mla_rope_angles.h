// The RoPE angles of absorbed MLA decode's query (F19 with F10), formed on the host by both kernel
// libraries from the same arguments.
#pragma once

#include <vector>

#include "kernels/api/attention_args.h"  // MlaDecodeArgs

namespace lmo::kernels {

// The angles (t − 1)·θ_k, k < d_r/2, of the query's RoPE, in double: θ_k = base^(−2k/d_r) for
// a.rope.scaling none (any finite base > 0), else rope_inv_freq(d_r, a.rope) (rope_frequencies.h)
// (long double, the product rounded once to double). Shared by fast::mla_decode and
// gpu::mla_decode, which take the same arguments. Throws std::invalid_argument, prefixed with fn,
// for a base or scaling parameter out of its domain or a.rope.attention_factor set (the temperature
// belongs in a.scale).
std::vector<double> mla_rope_angles(const char* fn, const MlaDecodeArgs& a);

}  // namespace lmo::kernels
