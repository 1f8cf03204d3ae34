// Per-target core of fast/attention.h and fast/mla_decode.h: tiled attention with an online
// softmax over key blocks, on f32 queries and keys and values in the storage format, storing the
// output in it. A bf16 or f16 key or value block is widened (exactly) to f32 where the tile reads
// it, so that the matrix products (OpenBLAS, f32 only) take it: a decode step reads its cache
// once in its own format instead of widening the whole cache first (twice the bytes, written and
// read again).
//
// Work is cut into tiles of (KV head, a run of at most kHeadTile of its query heads, a run of
// query rows), the tile's rows being every (query row, query head) pair in it, so that query
// heads sharing a KV head (GQA, MQA, MLA) read each key block once. Per tile and key block of
// kKeyBlock keys:
//   S = Q_tile · K_blockᵀ                  (sgemm; MLA adds a second part Q2 · K2ᵀ)
//   s' = cap(scale · S), masked keys −∞    (Highway, in place)
//   m' = max(m, max_j s'),  c = e^{m − m'},  P = e^{s' − m'},  ℓ = c·ℓ + Σ_j P
//   O = c·O + P · V_block                  (sgemm)
// and at the end o = O / ℓ, rounded once to the storage format. A row that never sees a visible
// key keeps ℓ = 0 and O = 0, so its output is 0/0 = NaN, the reference's convention.
//
// The tiling depends on the shapes only and every tile's output is computed from its own
// inputs, so results are bitwise identical for any thread count (fast/threads.h).
//
// Included once per Highway target (the toggle guard below) after foreach_target.h.
#if defined(LMO_FAST_ATTENTION_CORE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LMO_FAST_ATTENTION_CORE_INL_H_
#undef LMO_FAST_ATTENTION_CORE_INL_H_
#else
#define LMO_FAST_ATTENTION_CORE_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "fast/attention.h"
#include "fast/blas.h"
#include "fast/math-inl.h"
#include "fast/storage-inl.h"
#include "fast/threads.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Tile sizes: fixed constants (never derived from the thread count or the target) so that the
// order of every sum is a function of the shapes alone. kKeyBlock is a multiple of every
// target's lane count, so a row of a key block is whole vectors.
constexpr int64_t kKeyBlock = 128;
constexpr int64_t kTileRows = 64;  // query rows × query heads per tile, at most
constexpr int64_t kHeadTile = 16;  // query heads of one KV head per tile, at most

// The operands: q and q2 in f32, k, k2 and v in the core's storage format S (Elem<S>). Row t of
// a matrix starts at ptr + t·ld; head j's slice at column j·width.
struct CoreArgs {
  int64_t q_len = 1, kv_len = 1, heads = 1, kv_heads = 1;
  int64_t dk = 1;   // width of q and k per head
  int64_t dk2 = 0;  // width of the optional second part (MLA's rotary q^R, k^R); 0: none
  int64_t dv = 1;   // width of v and o per head
  const float* q = nullptr;
  int64_t ldq = 0;
  const float* q2 = nullptr;
  int64_t ldq2 = 0;
  const void* k = nullptr;
  int64_t ldk = 0;
  const void* k2 = nullptr;
  int64_t ldk2 = 0;
  const void* v = nullptr;
  int64_t ldv = 0;
  int64_t ldo = 0;
  float scale = 1, cap = 0;  // cap 0: no soft-cap
  AttentionMask mask = AttentionMask::none;
  int64_t window = 0;
  const int64_t* doc_ids = nullptr;
};

// The visible keys of query row i lie in [lo, hi) (document masks may hide some inside).
inline void VisibleRange(const CoreArgs& a, int64_t i, int64_t& lo, int64_t& hi) {
  const int64_t p = a.kv_len - a.q_len + i;  // the query's position
  lo = 0;
  hi = a.mask == AttentionMask::none ? a.kv_len : std::clamp<int64_t>(p + 1, 0, a.kv_len);
  if (a.mask == AttentionMask::window) lo = std::max<int64_t>(0, p - a.window + 1);
  if (hi < lo) hi = lo;
}

// One row of a key block: s' = cap(scale·s) with hidden keys −∞, written back; returns max s'.
template <class D>
HWY_INLINE float CapMaskRow(D d, const CoreArgs& a, float* HWY_RESTRICT s, int64_t j0, int64_t n,
                            int64_t lo, int64_t hi, int64_t pos) {
  using V = hn::Vec<D>;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const V vscale = hn::Set(d, a.scale);
  const bool capped = a.cap > 0.0f;
  const SoftcapConsts<D> cap(d, capped ? a.cap : 1.0f);
  for (int64_t c = 0; c < n; c += N) {
    V x = hn::Mul(hn::LoadU(d, s + c), vscale);
    if (capped) x = SoftcapF(d, x, cap);
    hn::StoreU(x, d, s + c);
  }
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  // Hidden keys: outside [lo, hi) (the block's edges only), and other documents inside.
  for (int64_t c = 0; c < std::min(n, lo - j0); ++c) s[c] = kNegInf;
  for (int64_t c = std::max<int64_t>(0, hi - j0); c < n; ++c) s[c] = kNegInf;
  if (a.mask == AttentionMask::document) {
    const int64_t doc = a.doc_ids[pos];
    for (int64_t c = std::max<int64_t>(0, lo - j0); c < std::min(n, hi - j0); ++c) {
      if (a.doc_ids[j0 + c] != doc) s[c] = kNegInf;
    }
  }
  V mx = hn::Set(d, kNegInf);
  for (int64_t c = 0; c < n; c += N) {
    const auto live = hn::FirstN(d, static_cast<size_t>(n - c));
    mx = hn::Max(mx, hn::IfThenElse(live, hn::LoadU(d, s + c), hn::Set(d, kNegInf)));
  }
  return hn::GetLane(hn::MaxOfLanes(d, mx));
}

// P = e^{s' − m} in place (0 for hidden keys and for the lanes past n); returns Σ P.
template <class D>
HWY_INLINE float ExpRow(D d, float* HWY_RESTRICT s, int64_t n, float m) {
  using V = hn::Vec<D>;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const V vm = hn::Set(d, m);
  V sum0 = hn::Zero(d), sum1 = hn::Zero(d);
  int64_t c = 0;
  for (; c + 2 * N <= n; c += 2 * N) {
    const V p0 = ExpF(d, hn::Sub(hn::LoadU(d, s + c), vm));
    const V p1 = ExpF(d, hn::Sub(hn::LoadU(d, s + c + N), vm));
    hn::StoreU(p0, d, s + c);
    hn::StoreU(p1, d, s + c + N);
    sum0 = hn::Add(sum0, p0);
    sum1 = hn::Add(sum1, p1);
  }
  for (; c < n; c += N) {
    const auto live = hn::FirstN(d, static_cast<size_t>(n - c));
    const V p = hn::IfThenElseZero(live, ExpF(d, hn::Sub(hn::LoadU(d, s + c), vm)));
    hn::StoreU(p, d, s + c);
    sum0 = hn::Add(sum0, p);
  }
  return hn::GetLane(hn::SumOfLanes(d, hn::Add(sum0, sum1)));
}

template <class D>
HWY_INLINE void ScaleRow(D d, float* HWY_RESTRICT x, int64_t n, float c) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto vc = hn::Set(d, c);
  int64_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(hn::Mul(hn::LoadU(d, x + i), vc), d, x + i);
  for (; i < n; ++i) x[i] *= c;
}

// o = O / ℓ, rounded to S (ℓ = 0 gives NaN: a fully masked row).
template <Storage S, class D>
HWY_INLINE void StoreRow(D d, const float* HWY_RESTRICT acc, float l, Elem<S>* HWY_RESTRICT o,
                         int64_t n) {
  const size_t N = hn::Lanes(d);
  const auto vl = hn::Set(d, l);
  size_t i = 0;
  const size_t un = static_cast<size_t>(n);
  for (; i + N <= un; i += N) StoreF<S>(d, hn::Div(hn::LoadU(d, acc + i), vl), o + i);
  if (i < un) {
    const auto x = hn::Div(hn::LoadU(d, acc + i), vl);  // acc rows are padded to whole vectors
    StoreTailF<S>(d, x, o + i, un - i);
  }
}

// Per KV head kv and key j, the number of value rows before j that are not all finite, at
// [kv · (kv_len + 1) + j]: a key block [j0, j0 + n) holds one iff the counts at its ends differ.
// The value rows are scanned once per call here, not once per (row tile, key block) in the loop.
// 0·x is 0 for a finite x and NaN for ±inf or NaN, so one vector sum of 0·x tells.
template <Storage S, class D>
std::vector<int64_t> NonFiniteValueCounts(D d, const CoreArgs& a) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto zero = hn::Zero(d);
  std::vector<int64_t> count(static_cast<size_t>(a.kv_heads * (a.kv_len + 1)), 0);
  for (int64_t kv = 0; kv < a.kv_heads; ++kv) {
    int64_t* c_kv = &count[static_cast<size_t>(kv * (a.kv_len + 1))];
    for (int64_t j = 0; j < a.kv_len; ++j) {
      const Elem<S>* row = static_cast<const Elem<S>*>(a.v) + j * a.ldv + kv * a.dv;
      auto acc = hn::Zero(d);
      int64_t c = 0;
      for (; c + N <= a.dv; c += N) acc = hn::Add(acc, hn::Mul(LoadF<S>(d, row + c), zero));
      if (c < a.dv) {
        const size_t tail = static_cast<size_t>(a.dv - c);
        acc = hn::Add(acc, hn::Mul(LoadTailF<S>(d, row + c, tail, 0.0f), zero));
      }
      c_kv[j + 1] = c_kv[j] + (hn::AllFalse(d, hn::IsNaN(acc)) ? 0 : 1);
    }
  }
  return count;
}

// O += P · V over the visible keys only. The sgemm over the whole block also multiplies the
// hidden keys' P = 0 into their values, which is exact for finite values but makes 0·NaN = NaN
// for a NaN or ±inf value at a hidden key, leaking it into rows that never see that key
// (docs/nan-inf.md). So a block with a non-finite value is summed key by key, skipping them.
// vb holds the block's value rows of the KV head (row c at vb + c·ldvb).
inline void AddVisibleValues(const CoreArgs& a, const float* st, int64_t ld_st, int64_t rows,
                             int64_t nh, int64_t i0, int64_t j0, int64_t n, const float* vb,
                             int64_t ldvb, const std::vector<int64_t>& lo,
                             const std::vector<int64_t>& hi, float* ot, int64_t ldo_tile) {
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t qi = r / nh;
    const int64_t pos = a.kv_len - a.q_len + i0 + qi;
    float* orow = ot + r * ldo_tile;
    const int64_t c0 = std::max<int64_t>(0, lo[qi] - j0), c1 = std::min(n, hi[qi] - j0);
    for (int64_t c = c0; c < c1; ++c) {
      if (a.mask == AttentionMask::document && a.doc_ids[j0 + c] != a.doc_ids[pos]) continue;
      const float p = st[r * ld_st + c];
      const float* vrow = vb + c * ldvb;
      for (int64_t e = 0; e < a.dv; ++e) orow[e] += p * vrow[e];
    }
  }
}

// Rows [j0, j0 + n) of one head's slice (width w, from column col) of a matrix in S with row
// stride ld, as f32 rows: in place for f32 (*ld_out = ld), else widened exactly into buf
// (*ld_out = w).
template <Storage S, class D>
HWY_INLINE const float* BlockF32(D d, const void* base, int64_t ld, int64_t col, int64_t j0,
                                 int64_t n, int64_t w, std::vector<float>& buf, int64_t* ld_out) {
  const Elem<S>* p = static_cast<const Elem<S>*>(base) + j0 * ld + col;
  if constexpr (S == Storage::f32) {
    *ld_out = ld;
    return p;
  } else {
    const int64_t N = static_cast<int64_t>(hn::Lanes(d));
    buf.resize(static_cast<size_t>(n * w));
    for (int64_t r = 0; r < n; ++r) {
      const Elem<S>* src = p + r * ld;
      float* dst = buf.data() + r * w;
      int64_t c = 0;
      for (; c + N <= w; c += N) hn::StoreU(LoadF<S>(d, src + c), d, dst + c);
      if (c < w) {
        const size_t tail = static_cast<size_t>(w - c);
        StoreTailF<Storage::f32>(d, LoadTailF<S>(d, src + c, tail, 0.0f), dst + c, tail);
      }
    }
    *ld_out = w;
    return buf.data();
  }
}

// Lanes past a row's width in the O tile: rows are padded to a multiple of the widest vector.
inline int64_t PaddedWidth(int64_t n) {
  constexpr int64_t kPad = HWY_MAX_BYTES / sizeof(float);
  return (n + kPad - 1) / kPad * kPad;
}

template <Storage S>
void AttentionCore(const CoreArgs& a, Elem<S>* o) {
  const hn::ScalableTag<float> d;
  const int64_t group = a.heads / a.kv_heads;
  const int64_t head_tile = std::min(group, kHeadTile);
  const int64_t head_tiles = (group + head_tile - 1) / head_tile;
  const int64_t row_tile = std::max<int64_t>(1, kTileRows / head_tile);
  const int64_t row_tiles = (a.q_len + row_tile - 1) / row_tile;
  const int64_t ldo_tile = PaddedWidth(a.dv);
  blas_single_threaded();
  const std::vector<int64_t> nonfinite = NonFiniteValueCounts<S>(d, a);
  // MLA's keys are its values (both the latents c^KV): one widening serves both.
  const bool values_are_keys = a.v == a.k && a.ldv == a.ldk && a.dv == a.dk;
  parallel_for(a.kv_heads * head_tiles * row_tiles, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> qt, q2t, st, ot, m, l, kbuf, k2buf, vbuf;
    std::vector<int64_t> lo, hi;
    for (int64_t task = begin; task < end; ++task) {
      const int64_t kv = task / (head_tiles * row_tiles);
      const int64_t h0 = kv * group + (task / row_tiles % head_tiles) * head_tile;
      const int64_t nh = std::min(head_tile, kv * group + group - h0);
      const int64_t i0 = task % row_tiles * row_tile;
      const int64_t in = std::min(row_tile, a.q_len - i0);
      const int64_t rows = in * nh;  // row r = (query i0 + r / nh, head h0 + r % nh)
      qt.assign(static_cast<size_t>(rows * a.dk), 0.0f);
      q2t.assign(static_cast<size_t>(rows * a.dk2), 0.0f);
      st.assign(static_cast<size_t>(rows * kKeyBlock), 0.0f);
      ot.assign(static_cast<size_t>(rows * ldo_tile), 0.0f);
      m.assign(static_cast<size_t>(rows), -std::numeric_limits<float>::infinity());
      l.assign(static_cast<size_t>(rows), 0.0f);
      lo.resize(static_cast<size_t>(in));
      hi.resize(static_cast<size_t>(in));
      int64_t kmin = a.kv_len, kmax = 0;
      for (int64_t i = 0; i < in; ++i) {
        VisibleRange(a, i0 + i, lo[i], hi[i]);
        if (hi[i] > lo[i]) kmin = std::min(kmin, lo[i]), kmax = std::max(kmax, hi[i]);
      }
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t i = i0 + r / nh, head = h0 + r % nh;
        std::memcpy(&qt[r * a.dk], a.q + i * a.ldq + head * a.dk, a.dk * sizeof(float));
        if (a.dk2 > 0) {
          std::memcpy(&q2t[r * a.dk2], a.q2 + i * a.ldq2 + head * a.dk2, a.dk2 * sizeof(float));
        }
      }
      for (int64_t j0 = kmin; j0 < kmax; j0 += kKeyBlock) {
        const int64_t n = std::min(kKeyBlock, kmax - j0);
        int64_t ldkb = 0;
        const float* kb = BlockF32<S>(d, a.k, a.ldk, kv * a.dk, j0, n, a.dk, kbuf, &ldkb);
        sgemm(rows, n, a.dk, 1.0f, qt.data(), a.dk, kb, ldkb, true, 0.0f, st.data(), kKeyBlock);
        if (a.dk2 > 0) {
          int64_t ldk2b = 0;
          const float* k2b = BlockF32<S>(d, a.k2, a.ldk2, kv * a.dk2, j0, n, a.dk2, k2buf, &ldk2b);
          sgemm(rows, n, a.dk2, 1.0f, q2t.data(), a.dk2, k2b, ldk2b, true, 1.0f, st.data(),
                kKeyBlock);
        }
        for (int64_t r = 0; r < rows; ++r) {
          float* s = &st[r * kKeyBlock];
          const int64_t qi = r / nh;
          if (hi[qi] <= j0 || lo[qi] >= j0 + n) {  // nothing visible in this block
            std::fill(s, s + kKeyBlock, 0.0f);
            continue;
          }
          const int64_t pos = a.kv_len - a.q_len + i0 + qi;
          const float bmax = CapMaskRow(d, a, s, j0, n, lo[qi], hi[qi], pos);
          const float m_new = std::max(m[r], bmax);
          if (m_new == -std::numeric_limits<float>::infinity()) {  // only other documents so far
            std::fill(s, s + kKeyBlock, 0.0f);
            continue;
          }
          const float corr = std::exp(m[r] - m_new);  // e^{−∞} = 0 on the first visible block
          const float sum = ExpRow(d, s, n, m_new);
          l[r] = l[r] * corr + sum;
          m[r] = m_new;
          if (corr != 1.0f) ScaleRow(d, &ot[r * ldo_tile], a.dv, corr);
        }
        int64_t ldvb = ldkb;
        const float* vb =
            values_are_keys ? kb : BlockF32<S>(d, a.v, a.ldv, kv * a.dv, j0, n, a.dv, vbuf, &ldvb);
        const int64_t* bad = &nonfinite[static_cast<size_t>(kv * (a.kv_len + 1))];
        if (bad[j0 + n] == bad[j0]) {
          sgemm(rows, a.dv, n, 1.0f, st.data(), kKeyBlock, vb, ldvb, false, 1.0f, ot.data(),
                ldo_tile);
        } else {
          AddVisibleValues(a, st.data(), kKeyBlock, rows, nh, i0, j0, n, vb, ldvb, lo, hi,
                           ot.data(), ldo_tile);
        }
      }
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t i = i0 + r / nh, head = h0 + r % nh;
        StoreRow<S>(d, &ot[r * ldo_tile], l[r], o + i * a.ldo + head * a.dv, a.dv);
      }
    }
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#endif  // LMO_FAST_ATTENTION_CORE_INL_H_
