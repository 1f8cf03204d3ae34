// F03/F04 and F05 feed-forward sublayers on plain pointers, mirroring reference/ffn.h and the
// oracle's ffn and glu_ffn ops (oracle/ops/ffn.h). Row vectors: x [tokens, d], y [tokens, d];
//   ffn      y = act(x W1 (+ b1)) W2 (+ b2), W1 [d, d_ff], b1 [d_ff], W2 [d_ff, d], b2 [d];
//   glu_ffn  y = (act(x W) ⊙ x V) W2, W and V [d, d_ff], W2 [d_ff, d] (ReGLU, GeGLU, GeGLU-tanh,
//            SwiGLU by act);
// every array in storage s, act one of fast/activations.h's (the same f32 vector forms).
//
// Computation: the inputs widened exactly to f32, the matrix products OpenBLAS sgemm calls (one
// thread inside OpenBLAS), the bias and activation (or the GLU gate) one Highway pass over each
// f32 tile of the hidden layer, the output rounded to nearest-even once at the store. The hidden
// layer stays in f32 whatever s is. Work runs in tiles of (rows, columns) fixed by the shapes
// alone, in parallel over fast/threads.h, so the result is bitwise identical for any thread
// count.
#pragma once

#include <cstdint>

#include "fast/activations.h"
#include "fast/storage.h"

namespace lmo::fast {

// b1 and b2 may be null (no bias; F04 has none, F03 both). Throws std::invalid_argument naming
// the parameter for tokens < 0, d or d_ff < 1 or ≥ 2^31, an unknown activation or storage, or a
// null x, w1, w2 or y.
void ffn(Activation act, Storage s, const void* x, const void* w1, const void* b1, const void* w2,
         const void* b2, void* y, int64_t tokens, int64_t d, int64_t d_ff);

// Throws as ffn does (w, v, w2 in place of w1, w2).
void glu_ffn(Activation act, Storage s, const void* x, const void* w, const void* v, const void* w2,
             void* y, int64_t tokens, int64_t d, int64_t d_ff);

}  // namespace lmo::fast
