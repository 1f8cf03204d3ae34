// The RoPE kernels of fast/rope.h. Highway skeleton: compiled once per target (see
// fast/targets.cc).
//
// Per token, the cos/sin row (r/2 values each) is made once in f32 scratch, from the angles or
// from the table, in the form the layout rotates with:
//   half-split: c[k], s[k]; the rotation loads the halves x[0, r/2) and x[r/2, r) as vectors;
//   interleaved: cc = (c0, c0, c1, c1, …), ss = (−s0, s0, −s1, s1, …), so that
//     y = x·cc + swap(x)·ss, swap exchanging the two lanes of each pair (Reverse2):
//     y_2k = x_2k·c_k − x_2k+1·s_k and y_2k+1 = x_2k+1·c_k + x_2k·s_k, the formula without any
//     deinterleaving (HWY_SCALAR, one lane, loads the two lanes of a pair apart);
// then every head of the token is rotated with that row. bf16 rotates whole blocks through the
// shuffle-free pairs of fast/storage-inl.h (even and odd positions as two f32 vectors): in the
// interleaved layout those are the pairs' two lanes, so c_k and s_k load as they are; the
// half-split layout uses c and s reordered the same way (c_pairs, s_pairs).
// clang-format off: the skeleton's first lines must stay in this order.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fast/rope.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

#include <algorithm>
#include <cstring>
#include <vector>

#include "fast/angles-inl.h"
#include "fast/rope.h"
#include "fast/rope_job.h"
#include "fast/storage-inl.h"
#include "fast/threads.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {

using detail::RopeJob;

// Tokens per parallel chunk: about 8192 elements (a chunk's scratch row is reused across its
// tokens). The split depends on the shape only; results do not depend on it at all.
int64_t TokenGrain(const RopeJob& j) {
  return std::max<int64_t>(1, 8192 / std::max<int64_t>(1, j.heads * j.head_dim));
}

// The rotation row of one token (see the top) from its f32 c and s (half values each, padded).
struct RotationRow {
  explicit RotationRow(size_t half, size_t pad)
      : n(2 * half),
        c(Padded(n, pad)),
        s(Padded(n, pad)),
        c_half(Padded(half, pad)),
        s_half(Padded(half, pad)),
        c_pairs(Padded(half, pad)),
        s_pairs(Padded(half, pad)) {}
  static size_t Padded(size_t n, size_t pad) { return (n + pad - 1) / pad * pad; }

  // Writes cc/ss from c_half/s_half for the interleaved layout (the half-split layout rotates
  // with c_half/s_half directly).
  void Interleave(size_t half) {
    for (size_t k = 0; k < half; ++k) {
      c[2 * k] = c[2 * k + 1] = c_half[k];
      s[2 * k] = -s_half[k];
      s[2 * k + 1] = s_half[k];
    }
  }

  // Writes c_pairs/s_pairs from c_half/s_half for bf16 pairs in the half-split layout (see
  // RotateHalfSplit): each whole block of 2·lanes values holds its even-indexed values, then its
  // odd-indexed ones, the order in which LoadBf16Pair splits a block of x.
  void SplitPairs(size_t half, size_t lanes) {
    for (size_t k0 = 0; k0 + 2 * lanes <= half; k0 += 2 * lanes) {
      for (size_t m = 0; m < lanes; ++m) {
        c_pairs[k0 + m] = c_half[k0 + 2 * m];
        c_pairs[k0 + lanes + m] = c_half[k0 + 2 * m + 1];
        s_pairs[k0 + m] = s_half[k0 + 2 * m];
        s_pairs[k0 + lanes + m] = s_half[k0 + 2 * m + 1];
      }
    }
  }

  size_t n;
  std::vector<float> c, s;              // interleaved form, r values
  std::vector<float> c_half, s_half;    // c_k, s_k, r/2 values
  std::vector<float> c_pairs, s_pairs;  // c_half, s_half split for bf16 pairs (SplitPairs)
};

// c_half/s_half of position p: f64 lanes through CosSinOfTurns, times the factor, rounded once
// to f32.
void AnglesRow(const RopeJob& j, int64_t position, RotationRow& row) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const size_t N = hn::Lanes(dd);
  const auto p = hn::Set(dd, static_cast<double>(position));
  const auto m = hn::Set(dd, j.factor);
  for (size_t k = 0; k < j.half; k += N) {
    hn::Vec<decltype(dd)> c, s;
    CosSinOfTurns(dd, p, hn::LoadU(dd, j.turns_hi + k), hn::LoadU(dd, j.turns_lo + k), c, s);
    hn::StoreU(hn::DemoteTo(df, hn::Mul(c, m)), df, row.c_half.data() + k);
    hn::StoreU(hn::DemoteTo(df, hn::Mul(s, m)), df, row.s_half.data() + k);
  }
}

// c_half/s_half from row t of a cos_sin table in storage T.
template <Storage T>
void TableRow(const RopeJob& j, const Elem<T>* table_row, RotationRow& row) {
  const hn::ScalableTag<float> df;
  const size_t N = hn::Lanes(df);
  for (size_t k = 0; k < j.half; k += N) {
    const size_t n = std::min(N, j.half - k);
    const auto c = n == N ? LoadF<T>(df, table_row + k) : LoadTailF<T>(df, table_row + k, n, 0.0f);
    const auto s = n == N ? LoadF<T>(df, table_row + j.half + k)
                          : LoadTailF<T>(df, table_row + j.half + k, n, 0.0f);
    hn::StoreU(c, df, row.c_half.data() + k);
    hn::StoreU(s, df, row.s_half.data() + k);
  }
}

// One head: y_a = x_a·c − x_b·s, y_b = x_a·s + x_b·c over the half-split pairs (k, k + half).
// bf16 takes whole blocks of 2·Lanes(d) values of x_a and x_b as shuffle-free pairs of vectors
// (fast/storage-inl.h), with c and s from c_pairs/s_pairs, split the same way: every element gets
// the same products as in the per-vector loop, which takes the rest.
template <Storage S, class D>
HWY_INLINE void RotateHalfSplit(D d, const Elem<S>* x, Elem<S>* y, const float* c, const float* s,
                                const float* c_pairs, const float* s_pairs, size_t half) {
  const size_t N = hn::Lanes(d);
  const auto turn = [](auto xa, auto xb, auto vc, auto vs, auto& ya, auto& yb) {
    ya = hn::MulSub(xa, vc, hn::Mul(xb, vs));
    yb = hn::MulAdd(xa, vs, hn::Mul(xb, vc));
  };
  const auto rotate = [&](auto xa, auto xb, size_t k, auto& ya, auto& yb) {
    turn(xa, xb, hn::LoadU(d, c + k), hn::LoadU(d, s + k), ya, yb);
  };
  size_t k = 0;
#if LMO_FAST_BF16_PAIRS
  if constexpr (S == Storage::bf16) {
    const Bf16PairTag<D> d16;
    for (; k + 2 * N <= half; k += 2 * N) {
      hn::Vec<D> ae, ao, be, bo, yae, yao, ybe, ybo;
      LoadBf16Pair(d, x + k, ae, ao);
      LoadBf16Pair(d, x + half + k, be, bo);
      turn(ae, be, hn::LoadU(d, c_pairs + k), hn::LoadU(d, s_pairs + k), yae, ybe);
      turn(ao, bo, hn::LoadU(d, c_pairs + k + N), hn::LoadU(d, s_pairs + k + N), yao, ybo);
      hn::StoreU(Bf16Pair(d, yae, yao), d16, y + k);
      hn::StoreU(Bf16Pair(d, ybe, ybo), d16, y + half + k);
    }
  }
#else
  (void)c_pairs;
  (void)s_pairs;
#endif
  for (; k + N <= half; k += N) {
    hn::Vec<D> ya, yb;
    rotate(LoadF<S>(d, x + k), LoadF<S>(d, x + half + k), k, ya, yb);
    StoreF<S>(d, ya, y + k);
    StoreF<S>(d, yb, y + half + k);
  }
  if (k < half) {
    const size_t n = half - k;
    hn::Vec<D> ya, yb;
    rotate(LoadTailF<S>(d, x + k, n, 0.0f), LoadTailF<S>(d, x + half + k, n, 0.0f), k, ya, yb);
    StoreTailF<S>(d, ya, y + k, n);
    StoreTailF<S>(d, yb, y + half + k, n);
  }
}

// One head: y = x·cc + swap(x)·ss over the interleaved pairs (2k, 2k+1), r = n values.
// bf16 takes whole blocks of 2·Lanes(d) values as shuffle-free pairs of vectors: the even and odd
// vectors are the pairs' two lanes, so the swap is free and c_half/s_half load as they are; each
// element gets the same products as in the per-vector loop, which takes the rest.
template <Storage S, class D>
HWY_INLINE void RotateInterleaved(D d, const Elem<S>* x, Elem<S>* y, const float* cc,
                                  const float* ss, const float* c_half, const float* s_half,
                                  size_t n) {
#if HWY_TARGET == HWY_SCALAR
  (void)c_half;
  (void)s_half;
  // One lane: no pair fits in a vector, so the two lanes of each pair are loaded apart and the
  // same products formed (y_2k = x_2k·c + x_2k+1·(−s), y_2k+1 = x_2k+1·c + x_2k·s).
  for (size_t i = 0; i < n; i += 2) {
    const auto x0 = LoadF<S>(d, x + i), x1 = LoadF<S>(d, x + i + 1);
    const auto c = hn::LoadU(d, cc + i), s = hn::LoadU(d, ss + i + 1);
    const auto y0 = hn::MulAdd(x0, c, hn::Mul(x1, hn::Neg(s)));
    const auto y1 = hn::MulAdd(x1, c, hn::Mul(x0, s));
    StoreF<S>(d, y0, y + i);
    StoreF<S>(d, y1, y + i + 1);
  }
#else
  const size_t N = hn::Lanes(d);
  const auto rotate = [&](auto v, size_t i) {
    return hn::MulAdd(v, hn::LoadU(d, cc + i), hn::Mul(hn::Reverse2(d, v), hn::LoadU(d, ss + i)));
  };
  size_t i = 0;
  if constexpr (S == Storage::bf16) {
    const Bf16PairTag<D> d16;
    for (; i + 2 * N <= n; i += 2 * N) {
      hn::Vec<D> e, o;
      LoadBf16Pair(d, x + i, e, o);
      const auto c = hn::LoadU(d, c_half + i / 2), s = hn::LoadU(d, s_half + i / 2);
      const auto ye = hn::MulAdd(e, c, hn::Mul(o, hn::Neg(s)));
      const auto yo = hn::MulAdd(o, c, hn::Mul(e, s));
      hn::StoreU(Bf16Pair(d, ye, yo), d16, y + i);
    }
  }
  for (; i + N <= n; i += N) StoreF<S>(d, rotate(LoadF<S>(d, x + i), i), y + i);
  // n and i are even, so the tail holds whole pairs.
  if (i < n) StoreTailF<S>(d, rotate(LoadTailF<S>(d, x + i, n - i, 0.0f), i), y + i, n - i);
#endif
}

// Every head of one token with its rotation row; dimensions r … head_dim − 1 copied.
template <Storage S>
void RotateToken(const RopeJob& j, const Elem<S>* x, Elem<S>* y, const RotationRow& row) {
  const hn::ScalableTag<float> df;
  const size_t hd = static_cast<size_t>(j.head_dim), r = 2 * j.half;
  for (int64_t h = 0; h < j.heads; ++h) {
    const Elem<S>* xh = x + static_cast<size_t>(h) * hd;
    Elem<S>* yh = y + static_cast<size_t>(h) * hd;
    if (j.interleaved) {
      RotateInterleaved<S>(df, xh, yh, row.c.data(), row.s.data(), row.c_half.data(),
                           row.s_half.data(), r);
    } else {
      RotateHalfSplit<S>(df, xh, yh, row.c_half.data(), row.s_half.data(), row.c_pairs.data(),
                         row.s_pairs.data(), j.half);
    }
    if (r < hd && xh != yh) std::memcpy(yh + r, xh + r, (hd - r) * sizeof(Elem<S>));
  }
}

// The token loop: make_row(t, row) fills row.c_half/s_half for token t.
template <Storage S, class MakeRow>
void RopeTokens(const RopeJob& j, const Elem<S>* x, Elem<S>* y, const MakeRow& make_row) {
  const size_t width = static_cast<size_t>(j.heads * j.head_dim);
  const size_t pad = hn::Lanes(hn::ScalableTag<float>());
  parallel_for(j.tokens, TokenGrain(j), [&](int64_t begin, int64_t end) {
    RotationRow row(j.half, pad);
    for (int64_t t = begin; t < end; ++t) {
      make_row(t, row);
      if (j.interleaved) {
        row.Interleave(j.half);
      } else if (S == Storage::bf16) {
        row.SplitPairs(j.half, pad);
      }
      RotateToken<S>(j, x + static_cast<size_t>(t) * width, y + static_cast<size_t>(t) * width,
                     row);
    }
  });
}

void RopeAngles(Storage s, const void* x, const int64_t* positions, void* y, const RopeJob& j) {
  WithStorage(s, [&](auto tag) {
    constexpr Storage S = decltype(tag)::value;
    RopeTokens<S>(j, static_cast<const Elem<S>*>(x), static_cast<Elem<S>*>(y),
                  [&](int64_t t, RotationRow& row) { AnglesRow(j, positions[t], row); });
  });
}

void RopeTable(Storage s, const void* x, Storage table, const void* cos_sin, void* y,
               const RopeJob& j) {
  WithStorage(s, [&](auto tag) {
    constexpr Storage S = decltype(tag)::value;
    WithStorage(table, [&](auto table_tag) {
      constexpr Storage T = decltype(table_tag)::value;
      const auto* cs = static_cast<const Elem<T>*>(cos_sin);
      RopeTokens<S>(j, static_cast<const Elem<S>*>(x), static_cast<Elem<S>*>(y),
                    [&](int64_t t, RotationRow& row) {
                      TableRow<T>(j, cs + static_cast<size_t>(t) * 2 * j.half, row);
                    });
    });
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <cmath>
#include <string>

#include "fast/kernel_api.h"

namespace lmo::fast {
HWY_EXPORT(RopeAngles);
HWY_EXPORT(RopeTable);

namespace {

// The job of a checked shape; the angles' frequencies are the caller's to add.
detail::RopeJob job_of(const RopeShape& sh) {
  detail::RopeJob j;
  j.tokens = sh.tokens;
  j.heads = sh.heads;
  j.head_dim = sh.head_dim;
  j.half = static_cast<size_t>(sh.rotary_dims / 2);
  j.interleaved = sh.layout == RopeLayout::interleaved;
  return j;
}

}  // namespace

void rope(Storage s, const void* x, const int64_t* positions, void* y, const RopeShape& shape,
          const RopeFrequencies& freq) {
  detail::check_rope("rope", s, x, positions, y, shape);
  detail::RopeJob j = job_of(shape);
  const Turns turns = turns_of(rope_inv_freq(shape.rotary_dims, freq));
  j.turns_hi = turns.hi.data();
  j.turns_lo = turns.lo.data();
  j.factor = static_cast<double>(rope_cos_sin_factor(freq));
  if (j.tokens == 0) return;
  HWY_DYNAMIC_DISPATCH(RopeAngles)(s, x, positions, y, j);
}

void rope_table(Storage s, const void* x, Storage table, const void* cos_sin, void* y,
                const RopeShape& shape) {
  detail::check_rope_table("rope_table", s, x, table, cos_sin, y, shape);
  const detail::RopeJob j = job_of(shape);
  if (j.tokens == 0) return;
  HWY_DYNAMIC_DISPATCH(RopeTable)(s, x, table, cos_sin, y, j);
}

}  // namespace lmo::fast
#endif  // HWY_ONCE
