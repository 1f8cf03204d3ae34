// Additive and relative position encodings: F07 sinusoidal, F08 learned absolute, F09 relative
// position logits (Shaw et al.) and T5's bucketed relative position bias. RoPE (F10, F11) is in
// rope.h and rope_scaling.h.
#pragma once

#include <boost/multiprecision/cpp_int.hpp>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "reference/linalg.h"
#include "reference/numeric.h"
#include "reference/parallel.h"
#include "reference/sinusoidal_balls.h"

namespace lmo::ref {

// F07 (000 §1.5.1; Vaswani et al. 2017 §3.5) sinusoidal encoding of one position p:
//   PE(p, 2i) = sin(p / base^(2i/d)),   PE(p, 2i+1) = cos(p / base^(2i/d)),   i = 0 … d/2 − 1,
// base = 10000 in the paper. Evaluated in T as written: the exponent 2i/d is formed in T, the
// power taken, and the position divided by it. The position is a T chosen by the caller (see
// rope_position in rope.h for an exact integer-to-T conversion): a narrow T cannot represent
// large positions, and that is part of what a simulation in T shows.
//
// F07's divisors base^(2i/d), i = 0 … d/2 − 1, formed as sinusoidal_pe forms them. They do not
// depend on the position, so a table computes them once: on balls each power is an MPFR pow.
template <class T>
std::vector<T> sinusoidal_divisors(int64_t d, const T& base = T(10000)) {
  using std::pow;
  if (d <= 0 || d % 2 != 0) {
    throw std::invalid_argument("sinusoidal_pe: d must be positive and even, got " +
                                std::to_string(d));
  }
  if constexpr (std::is_same_v<T, Ball>) {
    // Exact powers: two MPFR pows and ball products instead of d/2 pows (sinusoidal_balls.h).
    if (std::vector<Ball> balls = sinusoidal_divisor_balls(d, base); !balls.empty()) return balls;
  }
  std::vector<T> div(static_cast<size_t>(d / 2));
  for (int64_t i = 0; i < d / 2; ++i) {
    div[static_cast<size_t>(i)] = T(pow(base, T(T(2 * i) / T(d))));
  }
  return div;
}

// F07 at one position from its divisors (sinusoidal_divisors): d = 2·divisors.size() values.
template <class T>
std::vector<T> sinusoidal_pe(const T& position, std::span<const T> divisors) {
  const size_t n = divisors.size();
  std::vector<T> angles(n), sines(n), cosines(n), pe(2 * n);
  for (size_t i = 0; i < n; ++i) angles[i] = position / divisors[i];
  sin_cos_each(std::span<const T>(angles), std::span<T>(sines), std::span<T>(cosines));
  for (size_t i = 0; i < n; ++i) {
    pe[2 * i] = sines[i];
    pe[2 * i + 1] = cosines[i];
  }
  return pe;
}

template <class T>
std::vector<T> sinusoidal_pe(const T& position, int64_t d, const T& base = T(10000)) {
  const std::vector<T> divisors = sinusoidal_divisors(d, base);
  return sinusoidal_pe(position, std::span<const T>(divisors));
}

// F07 for positions 0 … positions − 1: row p is sinusoidal_pe(p, d, base), the integer p
// rounded once to T.
template <class T>
Mat<T> sinusoidal_pe_table(int64_t positions, int64_t d, const T& base = T(10000)) {
  if (positions < 0) {
    throw std::invalid_argument("sinusoidal_pe_table: positions must be >= 0, got " +
                                std::to_string(positions));
  }
  if (d <= 0 || d % 2 != 0) {
    throw std::invalid_argument("sinusoidal_pe_table: d must be positive and even, got " +
                                std::to_string(d));
  }
  Mat<T> table(positions, d);
  const std::vector<T> divisors = sinusoidal_divisors(d, base);
  parallel_for(positions, [&](int64_t p) {
    const std::vector<T> row = sinusoidal_pe(from_mp<T>(mp(p)), std::span<const T>(divisors));
    for (int64_t c = 0; c < d; ++c) table(p, c) = row[static_cast<size_t>(c)];
  });
  return table;
}

// F08 (000 §1.5.2) learned absolute position embedding: row t is Embed(x_t, i_t) = v_{x_t} +
// u_{i_t}, V the token table (vocabulary × d), U the position table (max positions × d); each
// sum is rounded once to T.
template <class T>
Mat<T> learned_position_embed(const Mat<T>& token_table, const Mat<T>& position_table,
                              std::span<const int64_t> token_ids,
                              std::span<const int64_t> positions) {
  if (token_table.cols != position_table.cols) {
    throw std::invalid_argument("learned_position_embed: token table width " +
                                std::to_string(token_table.cols) + " != position table width " +
                                std::to_string(position_table.cols));
  }
  if (token_ids.size() != positions.size()) {
    throw std::invalid_argument("learned_position_embed: " + std::to_string(token_ids.size()) +
                                " token ids but " + std::to_string(positions.size()) +
                                " positions");
  }
  const int64_t n = static_cast<int64_t>(token_ids.size()), d = token_table.cols;
  for (int64_t t = 0; t < n; ++t) {
    const int64_t id = token_ids[static_cast<size_t>(t)], pos = positions[static_cast<size_t>(t)];
    if (id < 0 || id >= token_table.rows) {
      throw std::invalid_argument("learned_position_embed: token id " + std::to_string(id) +
                                  " at index " + std::to_string(t) + " outside [0, " +
                                  std::to_string(token_table.rows) + ")");
    }
    if (pos < 0 || pos >= position_table.rows) {
      throw std::invalid_argument("learned_position_embed: position " + std::to_string(pos) +
                                  " at index " + std::to_string(t) + " outside [0, " +
                                  std::to_string(position_table.rows) + ")");
    }
  }
  Mat<T> out(n, d);
  parallel_for(n, [&](int64_t t) {
    const int64_t id = token_ids[static_cast<size_t>(t)], pos = positions[static_cast<size_t>(t)];
    for (int64_t c = 0; c < d; ++c) out(t, c) = token_table(id, c) + position_table(pos, c);
  });
  return out;
}

// F09: the row of Shaw et al.'s relative-position table used for query i and key j:
// clip(j − i, −k, k) + k, in [0, 2k].
inline int64_t shaw_relative_index(int64_t i, int64_t j, int64_t max_relative_position) {
  const int64_t k = max_relative_position;
  const int64_t rel = j - i;
  return (rel < -k ? -k : rel > k ? k : rel) + k;
}

// F09 (000 §1.5.3; Shaw, Uszkoreit & Vaswani 2018, eq. 5) relative position logits from the
// projected queries q_i = x_i W_Q (n_q × d_k) and keys k_j = x_j W_K (n_k × d_k):
//   e_ij = q_i · (k_j + a^K_ij) / sqrt(d_k),   a^K_ij = w^K[clip(j − i, −k, k)],
// w^K the (2k+1) × d_k table whose row r holds the relative distance r − k. Query i and key j
// sit at positions i and j. k_j + a^K_ij is rounded to T elementwise, the dot product
// accumulates in Acc, and the quotient by sqrt(d_k) is taken in T, as written.
template <class T, class Acc = T>
Mat<T> shaw_relative_logits_qk(const Mat<T>& q, const Mat<T>& k, const Mat<T>& rel_k,
                               int64_t max_relative_position) {
  using std::sqrt;
  const int64_t dk = q.cols;
  if (k.cols != dk || rel_k.cols != dk) {
    throw std::invalid_argument("shaw_relative_logits: widths q " + std::to_string(q.cols) +
                                ", k " + std::to_string(k.cols) + ", rel_k " +
                                std::to_string(rel_k.cols) + " must agree");
  }
  if (dk <= 0) throw std::invalid_argument("shaw_relative_logits: d_k must be positive, got 0");
  if (max_relative_position < 0 || rel_k.rows != 2 * max_relative_position + 1) {
    throw std::invalid_argument("shaw_relative_logits: max_relative_position " +
                                std::to_string(max_relative_position) + " needs a table of " +
                                std::to_string(2 * max_relative_position + 1) + " rows, got " +
                                std::to_string(rel_k.rows));
  }
  const T scale = sqrt(T(dk));
  Mat<T> e(q.rows, k.rows);
  parallel_for(q.rows, [&](int64_t i) {
    std::vector<T> key(static_cast<size_t>(dk));
    for (int64_t j = 0; j < k.rows; ++j) {
      const int64_t r = shaw_relative_index(i, j, max_relative_position);
      for (int64_t c = 0; c < dk; ++c) key[static_cast<size_t>(c)] = k(j, c) + rel_k(r, c);
      e(i, j) = convert<T>(dot<T, Acc>(q.row(i), std::span<const T>(key))) / scale;
    }
  });
  return e;
}

// F09 from the inputs: q = x W_Q and k = x W_K (products accumulated in Acc), then
// shaw_relative_logits_qk. x is n × d_model, W_Q and W_K are d_model × d_k.
template <class T, class Acc = T>
Mat<T> shaw_relative_logits(const Mat<T>& x, const Mat<T>& w_q, const Mat<T>& w_k,
                            const Mat<T>& rel_k, int64_t max_relative_position) {
  return shaw_relative_logits_qk<T, Acc>(matmul<T, Acc>(x, w_q), matmul<T, Acc>(x, w_k), rel_k,
                                         max_relative_position);
}

// F09, T5 (Raffel et al. 2020 §2.1; the rule of Mesh TensorFlow's and HF transformers'
// `_relative_position_bucket`). relative_position = j − i (key minus query position).
//  - bidirectional: the buckets are halved (B = num_buckets / 2, floor); keys after the query
//    (j > i) use the upper half, and n = |j − i|;  causal: B = num_buckets, n = max(i − j, 0).
//  - max_exact = B / 2 (floor): n < max_exact is its own bucket n;
//  - otherwise bucket max_exact + ⌊ln(n / max_exact) / ln(max_distance / max_exact)
//    · (B − max_exact)⌋, clamped to B − 1 (so every n ≥ max_distance shares bucket B − 1).
// The published code computes the logarithms in float32 and truncates; that can land one bucket
// low exactly at a boundary, where the real value is an integer (e.g. causal, num_buckets 36,
// max_distance 50, n = 30: ln(30/18)/ln(50/18)·18 = 9 exactly since 50/18 = (30/18)², the
// float32 evaluation gives 8.99…, bucket 26 instead of 27), and off-boundary when float32 rounds
// across an integer. Here ⌊·⌋ is decided exactly, in integers: for E = B − max_exact,
//   m ≤ ln(n/me)/ln(md/me)·E  ⟺  md^m · me^E ≤ n^E · me^m   (me = max_exact, md = max_distance).
inline int64_t t5_relative_position_bucket(int64_t relative_position, bool bidirectional,
                                           int64_t num_buckets = 32, int64_t max_distance = 128) {
  using boost::multiprecision::cpp_int;
  const int64_t buckets = bidirectional ? num_buckets / 2 : num_buckets;
  const int64_t max_exact = buckets / 2;
  if (max_exact < 1) {
    throw std::invalid_argument(
        "t5_relative_position_bucket: num_buckets " + std::to_string(num_buckets) +
        " too small (need >= " + (bidirectional ? "4 bidirectional)" : "2 causal)"));
  }
  if (max_distance <= max_exact) {
    throw std::invalid_argument("t5_relative_position_bucket: max_distance " +
                                std::to_string(max_distance) + " must exceed max_exact " +
                                std::to_string(max_exact) +
                                " (= num_buckets/4 bidirectional, "
                                "num_buckets/2 causal)");
  }
  int64_t offset = 0;
  uint64_t n = 0;  // unsigned: |INT64_MIN| fits
  if (bidirectional) {
    if (relative_position > 0) offset = buckets;
    n = relative_position < 0 ? uint64_t{0} - static_cast<uint64_t>(relative_position)
                              : static_cast<uint64_t>(relative_position);
  } else {
    n = relative_position < 0 ? uint64_t{0} - static_cast<uint64_t>(relative_position) : 0;
  }
  if (n < static_cast<uint64_t>(max_exact)) return offset + static_cast<int64_t>(n);
  // n ≥ max_distance: the log term is ≥ E, clamped to the last bucket.
  if (n >= static_cast<uint64_t>(max_distance)) return offset + buckets - 1;
  const int64_t e = buckets - max_exact;
  const cpp_int rhs_base = boost::multiprecision::pow(cpp_int(n), static_cast<unsigned>(e));
  cpp_int lhs = boost::multiprecision::pow(cpp_int(max_exact), static_cast<unsigned>(e));
  cpp_int rhs = rhs_base;
  int64_t m = 0;
  while (m + 1 <= e - 1) {
    lhs *= max_distance;  // md^(m+1) · me^E
    rhs *= max_exact;     // n^E · me^(m+1)
    if (lhs > rhs) break;
    ++m;
  }
  return offset + max_exact + m;
}

// F09, T5 bias for every head: result[h](i, j) = table(bucket(j − (query_offset + i)), h),
// query positions query_offset … query_offset + query_len − 1 (an offset for cached decoding),
// key positions 0 … key_len − 1. table is num_buckets × heads (HF's relative_attention_bias);
// the values are looked up, not computed, so they are exact in every T.
template <class T>
std::vector<Mat<T>> t5_relative_position_bias(const Mat<T>& table, int64_t query_len,
                                              int64_t key_len, bool bidirectional,
                                              int64_t max_distance = 128,
                                              int64_t query_offset = 0) {
  if (query_len < 0 || key_len < 0) {
    throw std::invalid_argument("t5_relative_position_bias: lengths must be >= 0, got " +
                                std::to_string(query_len) + " and " + std::to_string(key_len));
  }
  t5_relative_position_bucket(0, bidirectional, table.rows, max_distance);  // validates
  // Distinct relative positions: j − i ∈ [−(offset + q − 1), k − 1 − offset]; bucket each once.
  const int64_t lo = -(query_offset + query_len - 1);
  const int64_t count = query_len == 0 || key_len == 0 ? 0 : key_len + query_len - 1;
  std::vector<int64_t> bucket(static_cast<size_t>(count));
  for (int64_t r = 0; r < count; ++r) {
    bucket[static_cast<size_t>(r)] =
        t5_relative_position_bucket(lo + r, bidirectional, table.rows, max_distance);
  }
  std::vector<Mat<T>> bias(static_cast<size_t>(table.cols), Mat<T>(query_len, key_len));
  parallel_for(table.cols, [&](int64_t h) {
    Mat<T>& b = bias[static_cast<size_t>(h)];
    for (int64_t i = 0; i < query_len; ++i) {
      for (int64_t j = 0; j < key_len; ++j) {
        b(i, j) = table(bucket[static_cast<size_t>(j - i + query_len - 1)], h);
      }
    }
  });
  return bias;
}

}  // namespace lmo::ref
