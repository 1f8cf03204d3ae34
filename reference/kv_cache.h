// F16 KV-cache decoding: step t computes only q_t, k_t, v_t, appends k_t and v_t to the cache,
// and attends with q_t to the cached keys and values of steps 1 … t. Prefill fills the cache
// with a whole prompt (or a chunk of it) and returns its causal attention. Both are F15 with the
// queries placed at the end of the cached sequence (see attention.h), so C16 (decoding
// reproduces the last row of full causal attention) holds by construction in exact arithmetic
// and is checked by the tests in every format.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/attention.h"
#include "reference/linalg.h"

namespace lmo::ref {

// K and V of past steps, one row per step, laid out as attention() reads them:
// k is length × g·d, v is length × g·d_v.
template <class T>
struct KvCache {
  int64_t kv_heads = 1;
  int64_t head_dim = 1;
  int64_t value_dim = 1;
  Mat<T> k;
  Mat<T> v;

  KvCache(int64_t g, int64_t d, int64_t d_v)
      : kv_heads(g), head_dim(d), value_dim(d_v), k(0, g * d), v(0, g * d_v) {
    if (g <= 0 || d <= 0 || d_v <= 0) {
      throw std::invalid_argument(
          "KvCache: kv_heads, head_dim and value_dim must be positive, got " + std::to_string(g) +
          ", " + std::to_string(d) + ", " + std::to_string(d_v));
    }
  }

  int64_t length() const { return k.rows; }
  // Numbers held: length · g · (d + d_v) (F23: 2·g·t·d per sequence when d_v = d).
  int64_t numel() const { return static_cast<int64_t>(k.data.size() + v.data.size()); }

  void append(std::span<const T> k_t, std::span<const T> v_t) {
    if (static_cast<int64_t>(k_t.size()) != k.cols || static_cast<int64_t>(v_t.size()) != v.cols) {
      throw std::invalid_argument("KvCache::append: k_t must have " + std::to_string(k.cols) +
                                  " and v_t " + std::to_string(v.cols) + " values, got " +
                                  std::to_string(k_t.size()) + " and " +
                                  std::to_string(v_t.size()));
    }
    k.data.insert(k.data.end(), k_t.begin(), k_t.end());
    v.data.insert(v.data.end(), v_t.begin(), v_t.end());
    ++k.rows;
    ++v.rows;
  }
};

inline void validate_cache_config(const AttentionConfig& cfg, int64_t g, int64_t d, int64_t d_v,
                                  const char* where) {
  if (cfg.mask == MaskKind::kNone) {
    throw std::invalid_argument(std::string(where) +
                                ": mask must be causal, sliding-window or document, got none");
  }
  if (cfg.kv_heads != g || cfg.head_dim != d || cfg.v_dim() != d_v) {
    throw std::invalid_argument(std::string(where) + ": cache holds kv_heads " + std::to_string(g) +
                                ", head_dim " + std::to_string(d) + ", value_dim " +
                                std::to_string(d_v) + " but the config asks for " +
                                std::to_string(cfg.kv_heads) + ", " + std::to_string(cfg.head_dim) +
                                ", " + std::to_string(cfg.v_dim()));
  }
}

// F16: one decode step. q_t has h·d values, k_t g·d, v_t g·d_v (one row of Q, K, V). Appends
// k_t, v_t, then returns the attention output of q_t (h·d_v values) over all cached steps.
// A document mask needs cfg.document_ids for every cached step (length after the append).
template <class T, class Acc = T>
std::vector<T> decode_step(std::span<const T> q_t, std::span<const T> k_t, std::span<const T> v_t,
                           KvCache<T>& cache, const AttentionConfig& cfg) {
  validate_cache_config(cfg, cache.kv_heads, cache.head_dim, cache.value_dim, "decode_step");
  // Checked before the append so that a bad call leaves the cache as it was.
  validate_attention(cfg, 1, static_cast<int64_t>(q_t.size()), cache.length() + 1,
                     static_cast<int64_t>(k_t.size()), cache.length() + 1,
                     static_cast<int64_t>(v_t.size()), "decode_step");
  cache.append(k_t, v_t);
  const Mat<T> q(1, static_cast<int64_t>(q_t.size()), std::vector<T>(q_t.begin(), q_t.end()));
  return attention<T, Acc>(q, cache.k, cache.v, cfg).data;
}

// F16 prefill: appends the rows of k and v (a prompt, or the next chunk of one) and returns the
// causal attention of the rows of q over everything cached, queries at the last positions.
template <class T, class Acc = T>
Mat<T> prefill(const Mat<T>& q, const Mat<T>& k, const Mat<T>& v, KvCache<T>& cache,
               const AttentionConfig& cfg) {
  validate_cache_config(cfg, cache.kv_heads, cache.head_dim, cache.value_dim, "prefill");
  if (k.rows != q.rows || v.rows != q.rows) {
    throw std::invalid_argument("prefill: q, k, v must have the same number of rows, got " +
                                std::to_string(q.rows) + ", " + std::to_string(k.rows) + ", " +
                                std::to_string(v.rows));
  }
  validate_attention(cfg, q.rows, q.cols, cache.length() + k.rows, k.cols, cache.length() + v.rows,
                     v.cols, "prefill");
  for (int64_t t = 0; t < k.rows; ++t) cache.append(k.row(t), v.row(t));
  return attention<T, Acc>(q, cache.k, cache.v, cfg);
}

}  // namespace lmo::ref
