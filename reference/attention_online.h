// F17 online (tiled) softmax and attention: the row is consumed tile by tile keeping a running
// max m and a running sum l = Σ e^{s − m}; when a tile raises the max from m_old to m_new, the
// sums gathered so far are rescaled by e^{m_old − m_new} (Milakov & Gimelshein's online
// normalizer; FlashAttention). In exact arithmetic the result does not depend on the tile size
// (C17); in a narrow format it does, which is what drift audits measure.
//
// Tiles cover keys only: each query row is reduced on its own, so tiling the queries as well (as
// FlashAttention does) changes nothing in any row's arithmetic, provided key tiles with no
// visible key are skipped, which is what is done here (and what kernels do for masked blocks).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/attention.h"
#include "reference/linalg.h"
#include "reference/numeric.h"
#include "reference/parallel.h"

namespace lmo::ref {

// Running state of the online normalizer. With subtract_max false (the literal e^s form), m stays
// 0 and no rescaling ever happens.
template <class T, class Acc = T>
struct OnlineSoftmaxState {
  bool started = false;
  T m = T(0);      // running max over the tiles seen so far
  Acc l = Acc(0);  // running Σ e^{s − m}, accumulated in Acc
};

// Starts a tile whose maximum is tile_max: m_new = max(m_old, tile_max), l ← l·e^{m_old − m_new}.
// Returns the factor e^{m_old − m_new} (computed in T) so the caller rescales its own partial sums
// with the same number. The first tile sets m and returns 1 (l is still 0).
template <class T, class Acc = T>
T online_softmax_rescale(OnlineSoftmaxState<T, Acc>& st, const T& tile_max, bool subtract_max) {
  using std::exp;
  if (!subtract_max) {
    st.started = true;
    return T(1);
  }
  if (!st.started) {
    st.started = true;
    st.m = tile_max;
    return T(1);
  }
  const T m_new = tile_max > st.m ? tile_max : st.m;
  const T corr = exp(T(st.m - m_new));
  st.l = st.l * convert<Acc>(corr);
  st.m = m_new;
  return corr;
}

inline void validate_tile(int64_t tile, const char* where) {
  if (tile < 1) {
    throw std::invalid_argument(std::string(where) + ": tile size must be >= 1, got " +
                                std::to_string(tile));
  }
}

// (m, l) of a row after an online pass with the given tile size (the last tile may be short).
template <class T, class Acc = T>
OnlineSoftmaxState<T, Acc> online_softmax_pass(std::span<const T> z, int64_t tile,
                                               bool subtract_max) {
  using std::exp;
  OnlineSoftmaxState<T, Acc> st;
  const size_t n = z.size(), step = static_cast<size_t>(tile);
  for (size_t begin = 0; begin < n; begin += step) {
    const size_t end = std::min(n, begin + step);
    T tile_max = z[begin];
    for (size_t j = begin + 1; j < end; ++j) {
      if (z[j] > tile_max) tile_max = z[j];
    }
    online_softmax_rescale(st, tile_max, subtract_max);
    for (size_t j = begin; j < end; ++j) st.l = st.l + convert<Acc>(T(exp(T(z[j] - st.m))));
  }
  return st;
}

// F17: log Σ e^{z_i} computed online in tiles of `tile` entries: m + log l.
template <class T, class Acc = T>
T online_logsumexp(std::span<const T> z, int64_t tile, bool subtract_max = true) {
  using std::log;
  validate_tile(tile, "online_logsumexp");
  if (z.empty()) throw std::invalid_argument("online_logsumexp: empty row");
  const OnlineSoftmaxState<T, Acc> st = online_softmax_pass<T, Acc>(z, tile, subtract_max);
  return T(st.m + T(log(convert<T>(st.l))));
}

// F17: softmax with the normalizer (m, l) computed online in tiles, then p_i = e^{z_i − m} / l.
template <class T, class Acc = T>
std::vector<T> online_softmax(std::span<const T> z, int64_t tile, bool subtract_max = true) {
  using std::exp;
  validate_tile(tile, "online_softmax");
  if (z.empty()) throw std::invalid_argument("online_softmax: empty row");
  const OnlineSoftmaxState<T, Acc> st = online_softmax_pass<T, Acc>(z, tile, subtract_max);
  const T l = convert<T>(st.l);
  std::vector<T> p(z.size());
  for (size_t i = 0; i < z.size(); ++i) p[i] = T(exp(T(z[i] - st.m))) / l;
  return p;
}

// F17: attention (F15, same config, layout and masks) computed FlashAttention-style over key
// tiles of `key_tile` keys: per query row and head, the unnormalized output Σ e^{s_j − m} v_j
// and the sum l accumulate in Acc and are rescaled by e^{m_old − m_new} whenever the running max
// grows; the row is divided by l once at the end (in Acc, then rounded to T). Fully masked rows
// give NaN, as in attention().
template <class T, class Acc = T>
Mat<T> attention_tiled(const Mat<T>& q, const Mat<T>& k, const Mat<T>& v,
                       const AttentionConfig& cfg, int64_t key_tile) {
  const bool contract = fma_contraction();  // the P̃V products fused into the sums (mul_add)
  using std::exp;
  validate_attention(cfg, q.rows, q.cols, k.rows, k.cols, v.rows, v.cols, "attention_tiled");
  validate_tile(key_tile, "attention_tiled");
  const int64_t dv = cfg.v_dim();
  Mat<T> out(q.rows, cfg.heads * dv);
  for_each_attention_row<T, Acc>(
      q, k, cfg,
      [&](int64_t i, int64_t head, int64_t kv, const std::vector<T>& s,
          const std::vector<char>& vis) {
        OnlineSoftmaxState<T, Acc> st;
        std::vector<Acc> acc(static_cast<size_t>(dv), Acc(0));
        for (int64_t begin = 0; begin < k.rows; begin += key_tile) {
          const int64_t end = std::min(k.rows, begin + key_tile);
          bool any = false;
          T tile_max(0);
          for (int64_t j = begin; j < end; ++j) {
            if (!vis[static_cast<size_t>(j)]) continue;
            if (!any || s[static_cast<size_t>(j)] > tile_max) tile_max = s[static_cast<size_t>(j)];
            any = true;
          }
          if (!any) continue;  // a fully masked tile is skipped, not folded in
          const Acc corr = convert<Acc>(online_softmax_rescale(st, tile_max, cfg.subtract_max));
          for (Acc& a : acc) a = a * corr;
          for (int64_t j = begin; j < end; ++j) {
            if (!vis[static_cast<size_t>(j)]) continue;
            const T e = exp(T(s[static_cast<size_t>(j)] - st.m));
            st.l = st.l + convert<Acc>(e);
            for (int64_t c = 0; c < dv; ++c) {
              acc[static_cast<size_t>(c)] =
                  mul_add(e, v(j, kv * dv + c), acc[static_cast<size_t>(c)], contract);
            }
          }
        }
        for (int64_t c = 0; c < dv; ++c) {
          out(i, head * dv + c) = st.started ? convert<T>(Acc(acc[static_cast<size_t>(c)] / st.l))
                                             : std::numeric_limits<T>::quiet_NaN();
        }
      });
  return out;
}

}  // namespace lmo::ref
