// F18 block layouts: how one transformer block composes its attention and feed-forward sublayers
// with norms and residual additions (seeds/002 "Pre-vs-post norm", "'double' norm", "Parallel
// layers"; 000 §1.1; 001 §2-1, §2-3). Each layout is generic over its sublayers: any callable
// Mat<T> → Mat<T> (tokens × d in, tokens × d out) serves as attention, FFN/MLP or norm, so the
// same layout composes with MHA/GQA/MLA, dense/GLU/MoE FFNs and LayerNorm/RMSNorm. decoder.h
// builds the sublayers of a model preset and stacks the blocks.
//
// Residual additions are elementwise and rounded once to T: the residual stream is held in T (a
// kernel adding a bfloat16 sublayer output to a bfloat16 stream). Where three terms are summed
// (the parallel block) they are added left to right in the order the equation writes them.
#pragma once

#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/linalg.h"

namespace lmo::ref {

namespace blocks_detail {

template <class T>
void check_same_shape(const Mat<T>& x, const Mat<T>& y, const char* layout, const char* what) {
  if (x.rows != y.rows || x.cols != y.cols) {
    throw std::invalid_argument(std::string(layout) + ": " + what + " returned " +
                                std::to_string(y.rows) + "x" + std::to_string(y.cols) +
                                ", expected " + std::to_string(x.rows) + "x" +
                                std::to_string(x.cols) + " (the shape of its input)");
  }
}

// f(x), checked to keep the shape of x (every sublayer and norm of a block maps tokens × d to
// tokens × d).
template <class T, class F>
Mat<T> apply(F&& f, const Mat<T>& x, const char* layout, const char* what) {
  Mat<T> y = f(x);
  check_same_shape(x, y, layout, what);
  return y;
}

}  // namespace blocks_detail

// a + b elementwise, each sum rounded once to T (the residual addition of every layout).
template <class T>
Mat<T> residual_add(const Mat<T>& a, const Mat<T>& b) {
  blocks_detail::check_same_shape(a, b, "residual_add", "the second operand");
  Mat<T> y(a.rows, a.cols);
  for (size_t i = 0; i < a.data.size(); ++i) y.data[i] = a.data[i] + b.data[i];
  return y;
}

// F18 post-LN (the original Transformer; 002 "Post-LN Transformer", per layer l):
//   x² = x + Attn(x),  x³ = LN(x²),  x⁵ = x³ + FFN(x³),  out = LN'(x⁵).
// The norm sits on the residual stream; there is no final norm after the last block.
template <class T, class Attn, class Ffn, class Norm1, class Norm2>
Mat<T> post_ln_block(const Mat<T>& x, Attn&& attn, Ffn&& ffn, Norm1&& norm1, Norm2&& norm2) {
  using blocks_detail::apply;
  const char* where = "post_ln_block";
  const Mat<T> x2 = residual_add(x, apply(attn, x, where, "attention"));
  const Mat<T> x3 = apply(norm1, x2, where, "the first norm");
  const Mat<T> x5 = residual_add(x3, apply(ffn, x3, where, "the FFN"));
  return apply(norm2, x5, where, "the second norm");
}

// F18 pre-LN (GPT-2 and almost every model since; 002 "Pre-LN Transformer"):
//   x³ = x + Attn(LN(x)),  out = x³ + FFN(LN'(x³));
// the stack applies a final norm after the last block (decoder_stack does).
template <class T, class Attn, class Ffn, class Norm1, class Norm2>
Mat<T> pre_ln_block(const Mat<T>& x, Attn&& attn, Ffn&& ffn, Norm1&& norm1, Norm2&& norm2) {
  using blocks_detail::apply;
  const char* where = "pre_ln_block";
  const Mat<T> x3 =
      residual_add(x, apply(attn, apply(norm1, x, where, "the first norm"), where, "attention"));
  return residual_add(x3, apply(ffn, apply(norm2, x3, where, "the second norm"), where, "the FFN"));
}

// F18 "double" norm (Gemma 2, Grok; 002 "New things – 'double' norm"): a norm before and after
// each sublayer, both outside the residual stream:
//   x³ = x + PostNorm(Attn(PreNorm(x))),  out = x³ + PostNorm'(FFN(PreNorm'(x³))).
template <class T, class Attn, class Ffn, class PreAttn, class PostAttn, class PreFfn,
          class PostFfn>
Mat<T> double_norm_block(const Mat<T>& x, Attn&& attn, Ffn&& ffn, PreAttn&& pre_attn_norm,
                         PostAttn&& post_attn_norm, PreFfn&& pre_ffn_norm,
                         PostFfn&& post_ffn_norm) {
  using blocks_detail::apply;
  const char* where = "double_norm_block";
  const Mat<T> a =
      apply(attn, apply(pre_attn_norm, x, where, "the pre-attention norm"), where, "attention");
  const Mat<T> x3 = residual_add(x, apply(post_attn_norm, a, where, "the post-attention norm"));
  const Mat<T> f = apply(ffn, apply(pre_ffn_norm, x3, where, "the pre-FFN norm"), where, "the FFN");
  return residual_add(x3, apply(post_ffn_norm, f, where, "the post-FFN norm"));
}

// F18 OLMo 2 (000 §1.1: "applies post-norm only to the non-residual branch"): the norm only on
// the sublayer output,
//   x³ = x + Norm(Attn(x)),  out = x³ + Norm'(FFN(x³)).
template <class T, class Attn, class Ffn, class PostAttn, class PostFfn>
Mat<T> olmo2_block(const Mat<T>& x, Attn&& attn, Ffn&& ffn, PostAttn&& post_attn_norm,
                   PostFfn&& post_ffn_norm) {
  using blocks_detail::apply;
  const char* where = "olmo2_block";
  const Mat<T> x3 = residual_add(x, apply(post_attn_norm, apply(attn, x, where, "attention"), where,
                                          "the post-attention norm"));
  return residual_add(
      x3, apply(post_ffn_norm, apply(ffn, x3, where, "the FFN"), where, "the post-FFN norm"));
}

// F18 parallel block (GPT-J, PaLM, GPT-NeoX, Cohere; 002 "Parallel layers"):
//   y = x + MLP(LN(x)) + Attn(LN(x)),
// one norm shared by both branches (C20), the additions in the order written: (x + MLP) + Attn.
// The stack applies a final norm after the last block, as for pre-LN.
template <class T, class Attn, class Mlp, class Norm>
Mat<T> parallel_block(const Mat<T>& x, Attn&& attn, Mlp&& mlp, Norm&& norm) {
  using blocks_detail::apply;
  const char* where = "parallel_block";
  const Mat<T> n = apply(norm, x, where, "the norm");
  const Mat<T> m = apply(mlp, n, where, "the MLP");
  const Mat<T> a = apply(attn, n, where, "attention");
  return residual_add(residual_add(x, m), a);
}

// The columns of the matrices side by side: [W_1 W_2 …], every W_i with the same rows.
template <class T>
Mat<T> concat_columns(const std::vector<const Mat<T>*>& w) {
  if (w.empty()) throw std::invalid_argument("concat_columns: no matrices");
  int64_t cols = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i]->rows != w[0]->rows) {
      throw std::invalid_argument("concat_columns: matrix " + std::to_string(i) + " has " +
                                  std::to_string(w[i]->rows) + " rows, expected " +
                                  std::to_string(w[0]->rows) + " (the rows of matrix 0)");
    }
    cols += w[i]->cols;
  }
  Mat<T> c(w[0]->rows, cols);
  int64_t at = 0;
  for (const Mat<T>* m : w) {
    for (int64_t r = 0; r < m->rows; ++r) {
      for (int64_t j = 0; j < m->cols; ++j) c(r, at + j) = (*m)(r, j);
    }
    at += m->cols;
  }
  return c;
}

// y split into consecutive column blocks of the given widths (the inverse of concat_columns).
template <class T>
std::vector<Mat<T>> split_columns(const Mat<T>& y, const std::vector<int64_t>& widths) {
  int64_t total = 0;
  for (int64_t w : widths) {
    if (w < 0) throw std::invalid_argument("split_columns: negative width " + std::to_string(w));
    total += w;
  }
  if (total != y.cols) {
    throw std::invalid_argument("split_columns: widths sum to " + std::to_string(total) +
                                ", expected " + std::to_string(y.cols) + " (the columns of y)");
  }
  std::vector<Mat<T>> out;
  int64_t at = 0;
  for (int64_t w : widths) {
    Mat<T> part(y.rows, w);
    for (int64_t r = 0; r < y.rows; ++r) {
      for (int64_t j = 0; j < w; ++j) part(r, j) = y(r, at + j);
    }
    out.push_back(std::move(part));
    at += w;
  }
  return out;
}

// C20: the products x W_1, x W_2, … computed as ONE matmul x [W_1 W_2 …] and split back. Each
// output column is the same dot product (same terms, same order, same Acc) as in the separate
// matmul<T, Acc>(x, W_i), so the pieces are bitwise equal to the separate products in every type.
template <class T, class Acc = T>
std::vector<Mat<T>> fused_projections(const Mat<T>& x, const std::vector<const Mat<T>*>& w) {
  std::vector<int64_t> widths;
  for (const Mat<T>* m : w) widths.push_back(m->cols);
  return split_columns(matmul<T, Acc>(x, concat_columns(w)), widths);
}

// F18 parallel block with fused input projections (PaLM: "the MLP and Attention input matrix
// multiplies can be fused"): n = Norm(x), then
//   [P_1 … P_a | P_{a+1} … P_{a+m}] = n [W_1 … W_a | M_1 … M_m]   (one matmul, C20),
//   y = x + mlp_tail(P_{a+1} … P_{a+m}) + attn_tail(P_1 … P_a),
// attn_in the attention's input weights (W_Q, W_K, W_V), mlp_in the MLP's (W_1, or W and V of a
// GLU), and the tails the rest of each sublayer given its projected inputs. With tails that
// finish the sublayers exactly as the unfused ones do, this equals parallel_block bitwise.
template <class T, class Acc = T, class Norm, class AttnTail, class MlpTail>
Mat<T> parallel_block_fused(const Mat<T>& x, Norm&& norm, const std::vector<const Mat<T>*>& attn_in,
                            const std::vector<const Mat<T>*>& mlp_in, AttnTail&& attn_tail,
                            MlpTail&& mlp_tail) {
  using blocks_detail::apply;
  const char* where = "parallel_block_fused";
  if (attn_in.empty() || mlp_in.empty()) {
    throw std::invalid_argument(
        "parallel_block_fused: attn_in and mlp_in must each name at least one weight");
  }
  const Mat<T> n = apply(norm, x, where, "the norm");
  std::vector<const Mat<T>*> all(attn_in);
  all.insert(all.end(), mlp_in.begin(), mlp_in.end());
  std::vector<Mat<T>> parts = fused_projections<T, Acc>(n, all);
  const std::vector<Mat<T>> a_in(std::make_move_iterator(parts.begin()),
                                 std::make_move_iterator(parts.begin() + attn_in.size()));
  const std::vector<Mat<T>> m_in(std::make_move_iterator(parts.begin() + attn_in.size()),
                                 std::make_move_iterator(parts.end()));
  const Mat<T> m = mlp_tail(m_in);
  blocks_detail::check_same_shape(x, m, where, "the MLP tail");
  const Mat<T> a = attn_tail(a_in);
  blocks_detail::check_same_shape(x, a, where, "the attention tail");
  return residual_add(residual_add(x, m), a);
}

}  // namespace lmo::ref
