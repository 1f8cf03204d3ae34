// Certified attention at real shapes (attention_enclosure.h).
//
// Per query row i and head: s_j = (q·k_j)·c (c the scale), e_j = e^(s_j − m) for any m (the
// exact softmax does not depend on it: m is the largest computed logit's high word, a double, so
// x_j = s_j − m is formed without a further error), z = Σ e_j, o = (Σ_j e_j v_j) / z. The output
// ball is O / Z with O and Z balls (ball.h's division); what follows bounds the radii of O and Z.
// u = 2^-53; F = 1 + 2^-30 covers the (1 + u)^k and (1 + γ_n) factors of the roundings of the
// bounds themselves and of the magnitude sums below (k, n ≤ 2^21).
//
// Chains. A sum of n terms t_i, each one high word h_i and at most k − 1 low words (|low| ≤
// u·|t_i|), is summed as S ← 2Sum(S, h_i), whose errors q_i (|q_i| ≤ u·|S_i| ≤ u·Σ|t|) go with
// the low words into one double L. S + (exact sum of the low words and q_i) is the exact sum, so
// the only error is L's rounding, at most γ_{kn−1} times the sum of the kn magnitudes, which is at
// most u(n + k − 1)·M (M = Σ|t_i|): the block error is below 1.01·k·n·(n + k − 1)·u²·M
// (chain_coefficient). Blocks of n = 32 terms keep this near 2^-94·M; each block's S + L (2Sum,
// exact) is added to the running double-double total T by dd::add, which adds kAddErr·|T| per
// block (double_double.h).
//
// Logits. q and k are float values (checked), so each product q_c·k_jc is exact in double and the
// dot product is a chain with k = 1 over chunks of 32 components: error ≤ F·(coefficient +
// chunks·kAddErr)·P, P = Σ|q_c·k_jc| summed in double alongside. The scale is the ball of
// attention_scale<Ball>; dd::mul adds kMulErr·|s|. So |ŝ_j − s_j| ≤ δ_s, and with x̂_j =
// dd::add(ŝ_j, −m), |x̂_j − x_j| ≤ δ_j = δ_s + kAddErr·|x̂_j| (plus 2^-1000 for underflow of low
// words).
//
// Soft cap (Gemma 2's cap·tanh(s/cap), attention.h's soft_cap_logit). The logit ŝ_j ± δ_s is a
// ball and the capped logit is cap·tanh(ŝ_j/cap) in ball arithmetic (ball.h's division, tanh and
// product, each enclosing its exact result), whose radius takes the place of δ_s below.
//
// Exponentials. dd::exp: |ê − e^x̂| ≤ kExpErr·e^x̂ + kExpAbsErr, so |ê_j − e_j| ≤ ρ_j·e_j +
// kExpAbsErr with ρ_j = (e^δ − 1) + kExpErr·e^δ ≤ (δ_j + kExpErr)·(1 + 2^-19) for δ_j ≤ 2^-20
// (larger δ: the path declines). ρ is the row's largest ρ_j. Terms with ê_j < 2^-600 are left out
// of both sums: each exact e_j is then below 2^-599, added to the radius as 2^-599 (z) and
// 2^-599·max|v| (o) per term left out.
//
// Sums. Z = Σ ê_j: chains with k = 2 (ê's low word, q). O_c = Σ ê_j v_jc: ê_j·v_jc = p + pe + r
// with p + pe = ê.hi·v exactly (2Prod: an FMA, or Veltkamp's split of ê.hi into 29 + 24 bits,
// both halves' products exact with v a float) and r = ê.lo·v rounded (error ≤ u²·|t|): chains
// with k = 3. M_c = Σ|ê_j v_jc| ≤ F·Σ|p| (summed in double). The exact values differ from the
// sums of ê_j by at most ρ·Σ e_j|v_jc| ≤ ρ·F·M_c (+ n·kExpAbsErr·max|v|, below 2^-1000 for any n
// here).
#include "reference/attention_enclosure.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <optional>

#include "reference/chain_bound.h"
#include "reference/dd_exp.h"
#include "reference/double_double.h"
#include "reference/parallel.h"

namespace lmo::ref {
namespace {

constexpr double kU = 0x1p-53;
constexpr double kF = 1 + 0x1p-30;
constexpr double kAbs = 0x1p-1000;  // absolute slack for low words near underflow
constexpr double kTiny = 0x1p-600;  // ê below this is left out of the sums
constexpr int64_t kDotChunk = 32;   // q·k components per chain
constexpr int64_t kKeyBlock = 64;   // keys per block of logits (K's block stays in L2)
constexpr int64_t kSumBlock = 32;   // keys per chain of Σ e_j v_j and Σ e_j
constexpr int64_t kMaxDim = int64_t{1} << 20;
constexpr int64_t kMaxKeys = int64_t{1} << 21;

std::atomic<EnclosureIsa> g_isa{EnclosureIsa::kAuto};

bool is_float(double x) {
  return std::isfinite(x) && static_cast<double>(static_cast<float>(x)) == x;
}

// ---- Hot loops: instantiated twice, for AVX2 + FMA and for the baseline. The file is compiled
// with -ffp-contract=off: a contracted a·b + c inside a 2Sum would break its exactness.

// The dot products of one query row with kKeyBlock keys: kt is K's transposed block (d rows,
// stride ld). hi + lo: the double-double dot product; mag: Σ|q_c·k_jc|.
[[gnu::always_inline]] inline void dot_block_body(const double* q, const double* kt, int64_t ld,
                                                  int64_t d, double* hi, double* lo, double* mag) {
  double s[kKeyBlock], l[kKeyBlock], p_abs[kKeyBlock], th[kKeyBlock], tl[kKeyBlock];
  for (int64_t t = 0; t < kKeyBlock; ++t) p_abs[t] = th[t] = tl[t] = 0;
  for (int64_t c0 = 0; c0 < d; c0 += kDotChunk) {
    for (int64_t t = 0; t < kKeyBlock; ++t) s[t] = l[t] = 0;
    const int64_t c1 = std::min(d, c0 + kDotChunk);
    for (int64_t c = c0; c < c1; ++c) {
      const double qc = q[c];
      const double* kr = kt + c * ld;
      for (int64_t t = 0; t < kKeyBlock; ++t) {
        const double p = qc * kr[t];  // exact: two floats
        const double sum = s[t] + p;
        const double bb = sum - s[t];
        l[t] += (s[t] - (sum - bb)) + (p - bb);
        s[t] = sum;
        p_abs[t] += std::fabs(p);
      }
    }
    for (int64_t t = 0; t < kKeyBlock; ++t) {
      const dd::DD m = dd::add({th[t], tl[t]}, dd::two_sum(s[t], l[t]));
      th[t] = m.hi;
      tl[t] = m.lo;
    }
  }
  for (int64_t t = 0; t < kKeyBlock; ++t) {
    hi[t] = th[t];
    lo[t] = tl[t];
    mag[t] = p_abs[t];
  }
}

// Adds ê_j·v_j for n keys to the chains (s, l) and the magnitudes a of one row, dv components.
// eh, el: the exponentials; a1, a2: eh split for the portable 2Prod; v: the first key's row of
// V (stride ldv).
template <bool kFma>
[[gnu::always_inline]] inline void pv_block_body(const double* eh, const double* el,
                                                 const double* a1, const double* a2, int64_t n,
                                                 const double* v, int64_t ldv, int64_t dv,
                                                 double* s, double* l, double* a) {
  for (int64_t j = 0; j < n; ++j) {
    if (eh[j] < kTiny) continue;
    const double h = eh[j], lw = el[j];
    const double h1 = kFma ? 0 : a1[j], h2 = kFma ? 0 : a2[j];  // a1, a2: null with FMA
    const double* vr = v + j * ldv;
    for (int64_t c = 0; c < dv; ++c) {
      const double x = vr[c];
      double p, pe;
      if constexpr (kFma) {
        p = h * x;
        pe = std::fma(h, x, -p);
      } else {
        const double p1 = h1 * x, p2 = h2 * x;  // both exact
        p = p1 + p2;
        pe = p2 - (p - p1);  // Fast2Sum: |p1| ≥ |p2|
      }
      const double r = lw * x;
      const double sum = s[c] + p;
      const double bb = sum - s[c];
      const double q = (s[c] - (sum - bb)) + (p - bb);
      s[c] = sum;
      l[c] += (pe + r) + q;
      a[c] += std::fabs(p);
    }
  }
}

#if defined(__x86_64__) || defined(__i386__)
#define LMO_ENCLOSURE_X86 1
[[gnu::target("avx2,fma")]] void dot_block_avx2(const double* q, const double* kt, int64_t ld,
                                                int64_t d, double* hi, double* lo, double* mag) {
  dot_block_body(q, kt, ld, d, hi, lo, mag);
}
[[gnu::target("avx2,fma")]] void pv_block_avx2(const double* eh, const double* el, const double* a1,
                                               const double* a2, int64_t n, const double* v,
                                               int64_t ldv, int64_t dv, double* s, double* l,
                                               double* a) {
  pv_block_body<true>(eh, el, a1, a2, n, v, ldv, dv, s, l, a);
}
#endif
void dot_block_portable(const double* q, const double* kt, int64_t ld, int64_t d, double* hi,
                        double* lo, double* mag) {
  dot_block_body(q, kt, ld, d, hi, lo, mag);
}
void pv_block_portable(const double* eh, const double* el, const double* a1, const double* a2,
                       int64_t n, const double* v, int64_t ldv, int64_t dv, double* s, double* l,
                       double* a) {
  pv_block_body<false>(eh, el, a1, a2, n, v, ldv, dv, s, l, a);
}

bool use_avx2() {
#ifdef LMO_ENCLOSURE_X86
  if (g_isa.load() == EnclosureIsa::kPortable) return false;
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
#else
  return false;
#endif
}

// The two versions behind one call each (avx2: use_avx2() was true).
void dot_block(bool avx2, const double* q, const double* kt, int64_t ld, int64_t d, double* hi,
               double* lo, double* mag) {
#ifdef LMO_ENCLOSURE_X86
  if (avx2) return dot_block_avx2(q, kt, ld, d, hi, lo, mag);
#endif
  (void)avx2;
  dot_block_portable(q, kt, ld, d, hi, lo, mag);
}
void pv_block(bool avx2, const double* eh, const double* el, const double* a1, const double* a2,
              int64_t n, const double* v, int64_t ldv, int64_t dv, double* s, double* l,
              double* a) {
#ifdef LMO_ENCLOSURE_X86
  if (avx2) return pv_block_avx2(eh, el, a1, a2, n, v, ldv, dv, s, l, a);
#endif
  (void)avx2;
  pv_block_portable(eh, el, a1, a2, n, v, ldv, dv, s, l, a);
}

// Veltkamp's split: x = hi + lo, hi with at most 29 significant bits, lo with at most 24.
void split29(double x, double& hi, double& lo) {
  const double t = 0x1p24 * x + x;  // (2^24 + 1)·x, no overflow for x ≤ 1 + 2^-20
  hi = t - (t - x);
  lo = x - hi;
}

// Adds the chain (s, l) to the double-double total (th, tl) and clears it.
void merge(double& s, double& l, double& th, double& tl) {
  const dd::DD m = dd::add({th, tl}, dd::two_sum(s, l));
  th = m.hi;
  tl = m.lo;
  s = l = 0;
}

struct Shape {
  int64_t tq = 0, tk = 0, h = 0, g = 0, d = 0, dv = 0;
  int64_t group = 0;  // query heads per KV head
  int64_t ldk = 0;    // stride of the transposed K (tk padded by one key block)
};

class Evaluator {
 public:
  Evaluator(const Mat<double>& q, const Mat<double>& k, const Mat<double>& v,
            const AttentionConfig& cfg, Shape s, std::vector<int64_t> lo, std::vector<int64_t> hi)
      : q_(q), v_(v), s_(s), lo_(std::move(lo)), hi_(std::move(hi)), avx2_(use_avx2()) {
    const Ball scale = attention_scale<Ball>(cfg);
    scale_ = scale.mid();
    scale_rad_ = scale.rad();
    cap_ = attention_cap<Ball>(cfg);
    // K transposed per KV head (d rows of ldk keys, zero-padded), V's largest magnitude per head.
    kt_.assign(static_cast<size_t>(s_.g * s_.d * s_.ldk), 0.0);
    vmax_.assign(static_cast<size_t>(s_.g), 0.0);
    for (int64_t j = 0; j < s_.tk; ++j) {
      for (int64_t g = 0; g < s_.g; ++g) {
        for (int64_t c = 0; c < s_.d; ++c) {
          kt_[static_cast<size_t>((g * s_.d + c) * s_.ldk + j)] = k(j, g * s_.d + c);
        }
        for (int64_t c = 0; c < s_.dv; ++c) {
          vmax_[static_cast<size_t>(g)] =
              std::max(vmax_[static_cast<size_t>(g)], std::fabs(v(j, g * s_.dv + c)));
        }
      }
    }
  }

  // Tiles: one KV head and a block of query rows with every query head reading it, so that each
  // block of K and each row of V serves all of them while in cache.
  int64_t rows_per_tile() const { return std::max<int64_t>(1, 16 / s_.group); }
  int64_t tiles() const { return s_.g * ((s_.tq + rows_per_tile() - 1) / rows_per_tile()); }

  // Evaluates one tile into out; false when a bound exceeds what the derivation covers.
  bool tile(int64_t t, std::vector<Ball>& out) const;

 private:
  struct Row {
    int64_t i = 0, head = 0, lo = 0, hi = 0;
    double rho = 0;       // the row's largest relative error of ê_j
    int64_t skipped = 0;  // keys with ê_j below kTiny
    Ball z;
  };
  void logits(int64_t g, int64_t jlo, int64_t span, std::vector<Row>& rows, std::vector<double>& sh,
              std::vector<double>& sl, std::vector<double>& sd) const;
  bool exponentials(Row& r, double* sh, double* sl, const double* sd) const;

  const Mat<double>& q_;
  const Mat<double>& v_;
  Shape s_;
  std::vector<int64_t> lo_, hi_;
  bool avx2_ = false;
  dd::DD scale_;
  double scale_rad_ = 0;
  std::optional<Ball> cap_;  // the soft cap, if any
  std::vector<double> kt_;
  std::vector<double> vmax_;
};

void Evaluator::logits(int64_t g, int64_t jlo, int64_t span, std::vector<Row>& rows,
                       std::vector<double>& sh, std::vector<double>& sl,
                       std::vector<double>& sd) const {
  const int64_t chunks = (s_.d + kDotChunk - 1) / kDotChunk;
  const double dot_coef = kF * (chain_coefficient(std::min(s_.d, kDotChunk), 1) +
                                static_cast<double>(chunks) * dd::kAddErr);
  double hi[kKeyBlock], lo[kKeyBlock], mag[kKeyBlock];
  const double* ktg = kt_.data() + g * s_.d * s_.ldk;
  for (int64_t jb = jlo; jb < jlo + span; jb += kKeyBlock) {
    for (size_t r = 0; r < rows.size(); ++r) {
      const Row& row = rows[r];
      const int64_t a = std::max(jb, row.lo), b = std::min(jb + kKeyBlock - 1, row.hi);
      if (a > b) continue;
      const double* qr = q_.data.data() + row.i * q_.cols + row.head * s_.d;
      dot_block(avx2_, qr, ktg + jb, s_.ldk, s_.d, hi, lo, mag);
      for (int64_t j = a; j <= b; ++j) {
        const int64_t t = j - jb;
        const dd::DD dot = dd::two_sum(hi[t], lo[t]);
        const dd::DD x = dd::mul(dot, scale_);
        const double dot_err = dot_coef * mag[t];
        const double err =
            kF * (dd::kMulErr * kF * std::fabs(x.hi) + kF * std::fabs(dot.hi) * scale_rad_ +
                  kF * (std::fabs(scale_.hi) + scale_rad_) * dot_err) +
            kAbs;
        const size_t at = r * static_cast<size_t>(span) + static_cast<size_t>(j - jlo);
        if (cap_) {
          const Ball capped = *cap_ * tanh(Ball::from_parts(x.hi, x.lo, up(err)) / *cap_);
          sh[at] = capped.hi();
          sl[at] = capped.lo();
          sd[at] = capped.rad();
        } else {
          sh[at] = x.hi;
          sl[at] = x.lo;
          sd[at] = err;
        }
      }
    }
  }
}

bool Evaluator::exponentials(Row& r, double* sh, double* sl, const double* sd) const {
  double m = sh[0];
  for (int64_t j = 1; j <= r.hi - r.lo; ++j) m = std::max(m, sh[j]);
  double zs = 0, zl = 0, zh = 0, ztl = 0, zmag = 0;
  int64_t in_chain = 0, merges = 0;
  const int64_t count = r.hi - r.lo + 1;
  for (int64_t j = 0; j < count; ++j) {
    const dd::DD x = dd::add({sh[j], sl[j]}, {-m, 0});
    const double delta = kF * (sd[j] + dd::kAddErr * kF * std::fabs(x.hi)) + kAbs;
    if (!(delta <= 0x1p-20)) return false;
    r.rho = std::max(r.rho, (delta + dd::kExpErr) * (1 + 0x1p-19));
    sh[j] = x.hi;
    sl[j] = x.lo;
  }
  // Every exponential of the row at once (dd::exp_many: the bits of exp, four at a time).
  dd::exp_many(sh, sl, count, sh, sl);
  for (int64_t j = 0; j < count; ++j) {
    const dd::DD e{sh[j], sl[j]};
    if (e.hi < kTiny) {
      ++r.skipped;
      continue;
    }
    const double sum = zs + e.hi;
    const double bb = sum - zs;
    zl += e.lo + ((zs - (sum - bb)) + (e.hi - bb));
    zs = sum;
    zmag += e.hi;
    if (++in_chain == kSumBlock) {
      merge(zs, zl, zh, ztl);
      ++merges;
      in_chain = 0;
    }
  }
  merge(zs, zl, zh, ztl);
  ++merges;
  const double mag = kF * zmag;
  const double rad = kF * (chain_coefficient(kSumBlock, 2) * mag +
                           static_cast<double>(merges) * dd::kAddErr * mag + r.rho * mag) +
                     static_cast<double>(r.skipped) * 0x1p-599 + kAbs;
  r.z = Ball::from_parts(zh, ztl, up(rad));
  return true;
}

bool Evaluator::tile(int64_t t, std::vector<Ball>& out) const {
  const int64_t per = rows_per_tile(), blocks = (s_.tq + per - 1) / per;
  const int64_t g = t / blocks, i0 = (t % blocks) * per, i1 = std::min(s_.tq, i0 + per);
  std::vector<Row> rows;
  int64_t jlo = s_.tk, jhi = -1;
  for (int64_t i = i0; i < i1; ++i) {
    for (int64_t head = g * s_.group; head < (g + 1) * s_.group; ++head) {
      rows.push_back({i, head, lo_[static_cast<size_t>(i)], hi_[static_cast<size_t>(i)], 0, 0, {}});
    }
    jlo = std::min(jlo, lo_[static_cast<size_t>(i)]);
    jhi = std::max(jhi, hi_[static_cast<size_t>(i)]);
  }
  const int64_t span = jhi - jlo + 1;
  const size_t cells = rows.size() * static_cast<size_t>(span);
  std::vector<double> sh(cells), sl(cells), sd(cells);
  logits(g, jlo, span, rows, sh, sl, sd);

  // The exponentials and z per row; the split of ê.hi for the portable 2Prod.
  std::vector<double> a1(avx2_ ? 0 : cells), a2(avx2_ ? 0 : cells);
  for (size_t r = 0; r < rows.size(); ++r) {
    const size_t base = r * static_cast<size_t>(span) + static_cast<size_t>(rows[r].lo - jlo);
    if (!exponentials(rows[r], &sh[base], &sl[base], &sd[base])) return false;
    if (!avx2_) {
      for (int64_t j = 0; j <= rows[r].hi - rows[r].lo; ++j) {
        split29(sh[base + static_cast<size_t>(j)], a1[base + static_cast<size_t>(j)],
                a2[base + static_cast<size_t>(j)]);
      }
    }
  }

  // Σ ê_j v_j per row, chains of kSumBlock keys; each block of V rows serves every row.
  const int64_t dv = s_.dv;
  const size_t acc = rows.size() * static_cast<size_t>(dv);
  std::vector<double> cs(acc, 0), cl(acc, 0), ca(acc, 0), th(acc, 0), tl(acc, 0);
  std::vector<int64_t> merges(rows.size(), 0);
  const double* vg = v_.data.data() + g * dv;
  for (int64_t jb = jlo; jb <= jhi; jb += kSumBlock) {
    for (size_t r = 0; r < rows.size(); ++r) {
      const int64_t a = std::max(jb, rows[r].lo), b = std::min(jb + kSumBlock - 1, rows[r].hi);
      if (a > b) continue;
      const size_t e = r * static_cast<size_t>(span) + static_cast<size_t>(a - jlo);
      const size_t o = r * static_cast<size_t>(dv);
      const double* pa1 = avx2_ ? nullptr : &a1[e];
      const double* pa2 = avx2_ ? nullptr : &a2[e];
      pv_block(avx2_, &sh[e], &sl[e], pa1, pa2, b - a + 1, vg + a * v_.cols, v_.cols, dv, &cs[o],
               &cl[o], &ca[o]);
      for (int64_t c = 0; c < dv; ++c) {
        merge(cs[o + static_cast<size_t>(c)], cl[o + static_cast<size_t>(c)],
              th[o + static_cast<size_t>(c)], tl[o + static_cast<size_t>(c)]);
      }
      ++merges[r];
    }
  }

  const double coef = chain_coefficient(kSumBlock, 3) + kU * kU;
  const double vmax = vmax_[static_cast<size_t>(g)];
  for (size_t r = 0; r < rows.size(); ++r) {
    const Row& row = rows[r];
    const double tail = static_cast<double>(row.skipped) * 0x1p-599 * vmax + kAbs * (1 + vmax);
    for (int64_t c = 0; c < dv; ++c) {
      const size_t o = r * static_cast<size_t>(dv) + static_cast<size_t>(c);
      const double mag = kF * ca[o];
      const double rad =
          kF * (coef * mag + static_cast<double>(merges[r]) * dd::kAddErr * mag + row.rho * mag) +
          tail;
      const Ball num = Ball::from_parts(th[o], tl[o], up(rad));
      out[static_cast<size_t>(row.i * s_.h * dv + row.head * dv + c)] = num / row.z;
    }
  }
  return true;
}

}  // namespace

void set_attention_enclosure_isa(EnclosureIsa isa) { g_isa.store(isa); }

std::optional<std::vector<Ball>> attention_enclosure(const Mat<double>& q, const Mat<double>& k,
                                                     const Mat<double>& v,
                                                     const AttentionConfig& cfg) {
  validate_attention(cfg, q.rows, q.cols, k.rows, k.cols, v.rows, v.cols, "attention_enclosure");
  if (!cfg.logit_bias.empty()) return std::nullopt;
  Shape s;
  s.tq = q.rows;
  s.tk = k.rows;
  s.h = cfg.heads;
  s.g = cfg.kv_heads;
  s.d = cfg.head_dim;
  s.dv = cfg.v_dim();
  s.group = s.h / s.g;
  s.ldk = s.tk + kKeyBlock;
  if (s.d > kMaxDim || s.tk > kMaxKeys || s.tq == 0) return std::nullopt;
  for (const Mat<double>* m : {&q, &k, &v}) {
    if (!std::all_of(m->data.begin(), m->data.end(), is_float)) return std::nullopt;
  }
  // Each query row's visible keys: one contiguous range for every mask of the catalog (causal,
  // window, documents of consecutive positions); anything else declines.
  std::vector<int64_t> lo(static_cast<size_t>(s.tq)), hi(static_cast<size_t>(s.tq));
  for (int64_t i = 0; i < s.tq; ++i) {
    int64_t first = -1, last = -1, count = 0;
    for (int64_t j = 0; j < s.tk; ++j) {
      if (!attention_key_visible(cfg, s.tq, s.tk, i, j)) continue;
      if (first < 0) first = j;
      last = j;
      ++count;
    }
    if (count == 0 || count != last - first + 1) return std::nullopt;
    lo[static_cast<size_t>(i)] = first;
    hi[static_cast<size_t>(i)] = last;
  }
  const Evaluator ev(q, k, v, cfg, s, std::move(lo), std::move(hi));
  std::vector<Ball> out(static_cast<size_t>(s.tq * s.h * s.dv));
  std::atomic<bool> ok{true};
  // Tiles dealt round-robin: under a causal mask later rows cost more, and contiguous blocks
  // would leave one thread most of the work.
  const int64_t workers = std::max(1, reference_threads()), tiles = ev.tiles();
  parallel_for(std::min(workers, tiles), [&](int64_t w) {
    for (int64_t t = w; t < tiles && ok.load(std::memory_order_relaxed); t += workers) {
      if (!ev.tile(t, out)) ok.store(false);
    }
  });
  if (!ok.load()) return std::nullopt;
  return out;
}

}  // namespace lmo::ref
