// F15 attention on balls at real model shapes ([certified]): an interval around each exact
// output of softmax(Q Kᵀ·scale + mask) V, as attention<Ball> (attention.h on ball.h) gives, at
// a few double operations per multiply-add instead of one ball operation each (about 17 ns).
// The dot products and the P·V sums are error-free transformations (2Sum, 2Prod) summed in blocks
// with an a priori bound per block, the exponentials dd::exp with its written bound; the
// derivation is in attention_enclosure.cc. At Llama 3 8B's heads and 8192 tokens this is what
// makes a golden file a matter of minutes instead of hours (docs/certified.md).
#pragma once

#include <optional>
#include <vector>

#include "reference/attention.h"
#include "reference/ball.h"

namespace lmo::ref {

// The outputs (row-major T_q × h·d_v, the layout of attention()) as balls, each containing the
// exact value, or nullopt where this path does not apply and attention<Ball> must run: a logit
// bias, an input that float cannot hold (f64 storage: the products would not be
// exact), a query row whose visible keys are none or not one contiguous range, a non-finite
// input, or shapes beyond 2^20 (d) or 2^21 (T_k), where the block bounds below were not
// derived.
std::optional<std::vector<Ball>> attention_enclosure(const Mat<double>& q, const Mat<double>& k,
                                                     const Mat<double>& v,
                                                     const AttentionConfig& cfg);

// Which instructions the sums use: AVX2 with FMA where the CPU has them (kAuto), else the
// portable version (2Prod by Veltkamp's split). Both enclose the same values; the tests run both.
enum class EnclosureIsa { kAuto, kPortable };
void set_attention_enclosure_isa(EnclosureIsa isa);

}  // namespace lmo::ref
