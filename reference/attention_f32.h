// The naive f32 attention kernel (attention<Sim<f32>> without rounding points: the strict naive
// kernel `check` runs next to the exact values) on the hardware's float arithmetic, vectorized
// over keys for the logits and over output components for P·V. Bit-identical to the generic
// template on Sim<f32>, because each value is formed by the same operations in the same order:
//  - every logit is still its own left-to-right chain q_0·k_0 + q_1·k_1 + …, one chain per
//    vector lane (keys side by side), each product rounded before its sum as Sim does without
//    FMA contraction (this file is compiled with -ffp-contract=off);
//  - every output component is its own left-to-right chain over the visible keys;
//  - the softmax (max, e^{s−m} through Sim's correctly rounded exp, the sum, the divisions) is
//    the generic code's loop on floats;
//  - one IEEE float operation is the exact result rounded once to nearest-even, which is what
//    Sim<f32> computes (sim_float.h), provided the thread's float mode is IEEE: round to
//    nearest, no flush-to-zero, no denormals-are-zero. It is checked on every row; a row of a
//    thread in another mode takes the generic code;
//  - NaN outputs get Sim's canonical NaN (a NaN's payload is the only thing the hardware
//    and Sim may disagree on, and a NaN only ever produces NaN).
// tests/reference/attention_f32_test.cc compares both paths bit for bit.
#pragma once

#include "reference/linalg.h"
#include "reference/sim_float.h"

namespace lmo::ref {

struct AttentionConfig;

// Fills `out` (T_q × h·d_v, sized by the caller) with attention<Sim<f32>>(q, k, v, cfg)'s values
// and returns true; returns false, writing nothing, where this kernel does not apply: FMA
// contraction, a compiler or machine without IEEE single-precision evaluation (FLT_EVAL_METHOD ≠
// 0, not x86-64), or when switched off for tests. A logit soft cap and a logit bias are applied
// to each logit in Sim's own operations, as the generic code does. cfg must already be validated
// against the shapes.
bool attention_f32_native(const Mat<Sim<Format::f32>>& q, const Mat<Sim<Format::f32>>& k,
                          const Mat<Sim<Format::f32>>& v, const AttentionConfig& cfg, bool contract,
                          Mat<Sim<Format::f32>>& out);

// Tests: false makes attention<Sim<f32>> take the generic code (the default is true).
void set_native_f32_attention_for_testing(bool on);

}  // namespace lmo::ref
