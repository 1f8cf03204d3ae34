// Entry points of fast/ffn.h: two tiled phases over f32 operands. Phase one forms the hidden
// layer h [tokens, d_ff] in f32, per tile of (rows, hidden columns): the tile's product(s) by
// sgemm, then one Highway pass for the bias and activation (ffn) or the gate (glu_ffn). Phase two
// forms y per tile of (rows, output columns): h W2 by sgemm, then the bias and the one rounding
// to the storage format. Highway skeleton: compiled once per target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fast/ffn.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "fast/ffn.h"

#include <algorithm>
#include <vector>

#include "fast/activation_dispatch-inl.h"
#include "fast/blas.h"
#include "fast/f32_operand.h"
#include "fast/storage-inl.h"
#include "fast/threads.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Tile sizes: constants (never derived from the thread count or the target), so that every
// product's tiling, and with it OpenBLAS's summation order, is a function of the shapes alone.
constexpr int64_t kRowTile = 32;   // token rows per tile
constexpr int64_t kColTile = 256;  // hidden or output columns per tile

// The f32 operands of one call: x [tokens, d]; up (w1 of ffn, w of glu_ffn) and gate_up (v of
// glu_ffn, else null) [d, d_ff]; down = w2 [d_ff, d]; biases b1 [d_ff], b2 [d] or null.
struct FfnOperands {
  const float* x = nullptr;
  const float* up = nullptr;
  const float* v = nullptr;
  const float* b1 = nullptr;
  const float* down = nullptr;
  const float* b2 = nullptr;
  int64_t tokens = 0, d = 0, d_ff = 0;
};

// Calls fn(r0, rows, c0, cols) for every tile of a [rows_total, cols_total] output, in parallel.
template <class Fn>
void ForTiles(int64_t rows_total, int64_t cols_total, const Fn& fn) {
  const int64_t row_tiles = (rows_total + kRowTile - 1) / kRowTile;
  const int64_t col_tiles = (cols_total + kColTile - 1) / kColTile;
  parallel_for(row_tiles * col_tiles, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t r0 = t / col_tiles * kRowTile, c0 = t % col_tiles * kColTile;
      fn(r0, std::min(kRowTile, rows_total - r0), c0, std::min(kColTile, cols_total - c0));
    }
  });
}

// Phase one: h = act(x W1 + b1), or act(x W) ⊙ x V when o.v is set.
void Hidden(Activation act, const FfnOperands& o, float* h) {
  const hn::ScalableTag<float> d;
  WithActivation(act, [&](auto f) {
    ForTiles(o.tokens, o.d_ff, [&](int64_t r0, int64_t rows, int64_t c0, int64_t cols) HWY_FLATTEN {
      std::vector<float> a(static_cast<size_t>(rows * cols)), b;
      sgemm(rows, cols, o.d, 1.0f, o.x + r0 * o.d, o.d, o.up + c0, o.d_ff, false, 0.0f, a.data(),
            cols);
      if (o.v) {
        b.resize(a.size());
        sgemm(rows, cols, o.d, 1.0f, o.x + r0 * o.d, o.d, o.v + c0, o.d_ff, false, 0.0f, b.data(),
              cols);
      }
      const size_t n = static_cast<size_t>(cols);
      for (int64_t r = 0; r < rows; ++r) {
        const float* ar = a.data() + r * cols;
        float* hr = h + (r0 + r) * o.d_ff + c0;
        if (o.v) {
          MapBinary<Storage::f32>(d, ar, b.data() + r * cols, hr, n,
                                  [&](auto dd, auto g, auto u) { return hn::Mul(f(dd, g), u); });
        } else if (o.b1) {
          MapBinary<Storage::f32>(d, ar, o.b1 + c0, hr, n, [&](auto dd, auto s, auto bias) {
            return f(dd, hn::Add(s, bias));
          });
        } else {
          MapUnary<Storage::f32>(d, ar, hr, n, f);
        }
      }
    });
  });
}

// y row = acc (+ bias), rounded once to S.
template <Storage S, class D>
HWY_INLINE void StoreOutputRow(D d, const float* HWY_RESTRICT acc, const float* HWY_RESTRICT bias,
                               Elem<S>* HWY_RESTRICT y, size_t n) {
  const auto at = [&](const hn::Vec<D> v, size_t j) {
    return bias ? hn::Add(v, hn::LoadU(d, bias + j)) : v;
  };
  const size_t i =
      StoreVectors<S>(d, y, n, false, [&](size_t j) { return at(hn::LoadU(d, acc + j), j); });
  if (i < n) {
    auto v = LoadTailF<Storage::f32>(d, acc + i, n - i, 0.0f);
    if (bias) v = hn::Add(v, LoadTailF<Storage::f32>(d, bias + i, n - i, 0.0f));
    StoreTailF<S>(d, v, y + i, n - i);
  }
}

// Phase two: y = h W2 (+ b2), stored in S.
template <Storage S>
void Output(const FfnOperands& o, const float* h, Elem<S>* y) {
  const hn::ScalableTag<float> d;
  ForTiles(o.tokens, o.d, [&](int64_t r0, int64_t rows, int64_t c0, int64_t cols) {
    std::vector<float> acc(static_cast<size_t>(rows * cols));
    sgemm(rows, cols, o.d_ff, 1.0f, h + r0 * o.d_ff, o.d_ff, o.down + c0, o.d, false, 0.0f,
          acc.data(), cols);
    for (int64_t r = 0; r < rows; ++r) {
      StoreOutputRow<S>(d, acc.data() + r * cols, o.b2 ? o.b2 + c0 : nullptr,
                        y + (r0 + r) * o.d + c0, static_cast<size_t>(cols));
    }
  });
}

// Both FFN forms: up_w and v (null for ffn) [d, d_ff], b1 and b2 null for glu_ffn.
void FfnImpl(Activation act, Storage s, const void* x, const void* up_w, const void* v,
             const void* b1, const void* w2, const void* b2, void* y, int64_t tokens, int64_t d,
             int64_t d_ff) {
  if (tokens == 0) return;
  const detail::F32Operand xf(s, x, tokens * d), upf(s, up_w, d * d_ff), vf(s, v, v ? d * d_ff : 0),
      b1f(s, b1, b1 ? d_ff : 0), w2f(s, w2, d_ff * d), b2f(s, b2, b2 ? d : 0);
  FfnOperands o;
  o.x = xf.get();
  o.up = upf.get();
  o.v = vf.get();
  o.b1 = b1f.get();
  o.down = w2f.get();
  o.b2 = b2f.get();
  o.tokens = tokens;
  o.d = d;
  o.d_ff = d_ff;
  blas_single_threaded();
  std::vector<float> h(static_cast<size_t>(tokens * d_ff));
  Hidden(act, o, h.data());
  WithStorage(s, [&](auto tag) {
    constexpr Storage S = decltype(tag)::value;
    Output<S>(o, h.data(), static_cast<Elem<S>*>(y));
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "fast/kernel_api.h"

namespace lmo::fast {
HWY_EXPORT(FfnImpl);

namespace {

// The checks both entry points share; `up` names the first weight (w1 or w).
void check_ffn_args(const char* fn, Activation act, Storage s, const void* x, const char* up,
                    const void* up_w, const void* w2, const void* y, int64_t tokens, int64_t d,
                    int64_t d_ff) {
  detail::check_activation(fn, act);
  detail::check_storage(fn, s);
  detail::check_ffn_shape(fn, x, up, up_w, w2, y, tokens, d, d_ff);
}

}  // namespace

void ffn(Activation act, Storage s, const void* x, const void* w1, const void* b1, const void* w2,
         const void* b2, void* y, int64_t tokens, int64_t d, int64_t d_ff) {
  check_ffn_args("ffn", act, s, x, "w1", w1, w2, y, tokens, d, d_ff);
  HWY_DYNAMIC_DISPATCH(FfnImpl)(act, s, x, w1, nullptr, b1, w2, b2, y, tokens, d, d_ff);
}

void glu_ffn(Activation act, Storage s, const void* x, const void* w, const void* v, const void* w2,
             void* y, int64_t tokens, int64_t d, int64_t d_ff) {
  const char* fn = "glu_ffn";
  check_ffn_args(fn, act, s, x, "w", w, w2, y, tokens, d, d_ff);
  detail::check_ptr(fn, "v", v, tokens > 0);
  HWY_DYNAMIC_DISPATCH(FfnImpl)(act, s, x, w, v, nullptr, w2, nullptr, y, tokens, d, d_ff);
}

}  // namespace lmo::fast
#endif  // HWY_ONCE
