// gpu/attention_math.h, the per-row math that gpu/attention_f32.cuh runs on the device, checked
// on the host (plain C++, no device needed): the key ranges and document check against
// reference/attention.h's attention_key_visible over every small shape; and the kernel's row
// algorithm (chunks of keys, OnlineMaxOf's rescaling and special cases, the poison rule for −∞
// logits) run sequentially on doubles, a model free of f32 rounding, and judged against
// ref::attention in mp, with NaN, ±∞ and overflowing values placed in keys and values. (The f32
// arithmetic itself: gpu_attention_f32_math_test.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gpu/attention_math.h"
#include "reference/attention.h"

namespace lmo::gpu::attn {
namespace {

using ref::mp;

// The algorithm in double, as a model against the exact reference: the logit (q·k)·scale, then
// cap·tanh(s/cap) when cap > 0 (the reference's soft_cap_logit on the scaled logit), and
// OnlineMaxOf (the f32 kernel's online maximum) over doubles.
double attention_logit(double dot, double scale, double cap) {
  const double s = dot * scale;
  return cap > 0.0 ? cap * std::tanh(s / cap) : s;
}
struct DoubleExp {
  static double exp(double x) { return std::exp(x); }
};
using OnlineMax = OnlineMaxOf<double, DoubleExp>;

ref::MaskKind ref_mask(int m) {
  switch (m) {
    case kNone:
      return ref::MaskKind::kNone;
    case kCausal:
      return ref::MaskKind::kCausal;
    case kWindow:
      return ref::MaskKind::kSlidingWindow;
    default:
      return ref::MaskKind::kDocument;
  }
}

// The keys key_range and doc_visible show to row i, as a 0/1 string over [0, kv_len).
std::string seen_by_kernel(int mask, int64_t window, const std::vector<int64_t>& doc, int64_t q_len,
                           int64_t kv_len, int64_t i) {
  const int64_t p = kv_len - q_len + i;
  const KeyRange r = key_range(mask, window, kv_len, p);
  EXPECT_LE(0, r.lo);
  EXPECT_LE(r.lo, r.hi);
  EXPECT_LE(r.hi, kv_len);
  std::string s(static_cast<size_t>(kv_len), '0');
  for (int64_t t = r.lo; t < r.hi; ++t) {
    if (doc_visible(mask, doc.data(), t, p)) s[static_cast<size_t>(t)] = '1';
  }
  return s;
}

TEST(GpuAttentionMath, KeyRangesMatchTheReferenceMask) {
  for (int mask : {kNone, kCausal, kWindow, kDocument}) {
    for (int64_t kv_len = 0; kv_len <= 9; ++kv_len) {
      for (int64_t q_len = 0; q_len <= 11; ++q_len) {
        if (mask == kDocument && q_len > kv_len) continue;  // refused by the API and the reference
        for (int64_t window : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{7}, int64_t{20}}) {
          if (mask != kWindow && window != 1) continue;
          for (int pattern = 0; pattern < (mask == kDocument ? 3 : 1); ++pattern) {
            ref::AttentionConfig cfg;
            cfg.mask = ref_mask(mask);
            cfg.window = window;
            std::vector<int64_t> doc(static_cast<size_t>(kv_len));
            for (int64_t t = 0; t < kv_len; ++t) {
              doc[static_cast<size_t>(t)] = pattern == 0 ? t / 3 : pattern == 1 ? (t * 7) % 3 : 0;
            }
            cfg.document_ids = doc;
            for (int64_t i = 0; i < q_len; ++i) {
              std::string want(static_cast<size_t>(kv_len), '0');
              for (int64_t t = 0; t < kv_len; ++t) {
                if (ref::attention_key_visible(cfg, q_len, kv_len, i, t)) {
                  want[static_cast<size_t>(t)] = '1';
                }
              }
              EXPECT_EQ(seen_by_kernel(mask, window, doc, q_len, kv_len, i), want)
                  << "mask " << mask << " window " << window << " pattern " << pattern << " q_len "
                  << q_len << " kv_len " << kv_len << " row " << i;
            }
          }
        }
      }
    }
  }
}

TEST(GpuAttentionMath, LogitIsTheScaledSoftCappedDot) {
  for (double dot : {-300.0, -7.25, -1e-3, 0.0, 0.5, 3.0, 41.0, 1e6}) {
    for (double scale : {0.125, 0.08838834764831845, 1.0}) {
      const mp s = mp(dot) * mp(scale);
      EXPECT_EQ(attention_logit(dot, scale, 0.0), dot * scale);
      for (double cap : {2.0, 30.0, 50.0}) {
        const double want = ref::to_double(mp(cap) * tanh(s / mp(cap)));
        EXPECT_NEAR(attention_logit(dot, scale, cap), want, 4e-16 * cap) << dot << " " << cap;
      }
    }
  }
  EXPECT_EQ(attention_logit(INFINITY, 0.5, 30.0), 30.0);  // tanh(+∞) = 1
  EXPECT_EQ(attention_logit(-INFINITY, 0.5, 0.0), -INFINITY);
  EXPECT_TRUE(std::isnan(attention_logit(NAN, 0.5, 30.0)));
}

TEST(GpuAttentionMath, OnlineMaxFollowsTheReferenceSpecialCases) {
  double alpha = 0;
  OnlineMax a;  // −∞-only chunk first, then a finite one: skipped, then alpha = e^{−∞} = 0
  EXPECT_FALSE(a.update(-INFINITY, true, alpha));
  EXPECT_TRUE(a.update(2.0, true, alpha));
  EXPECT_EQ(alpha, 0.0);
  EXPECT_TRUE(a.update(1.0, true, alpha));  // smaller maximum: m kept, no rescaling
  EXPECT_EQ(alpha, 1.0);
  EXPECT_TRUE(a.update(3.0, true, alpha));
  EXPECT_EQ(alpha, std::exp(-1.0));
  EXPECT_TRUE(a.finite_row());
  OnlineMax b;  // every visible logit −∞: NaN row
  EXPECT_FALSE(b.update(-INFINITY, true, alpha));
  EXPECT_FALSE(b.finite_row());
  OnlineMax c;  // nothing visible: NaN row
  EXPECT_FALSE(c.update(-INFINITY, false, alpha));
  EXPECT_FALSE(c.finite_row());
  OnlineMax d;  // a +∞ logit, later finite chunks: NaN row
  EXPECT_TRUE(d.update(1.0, true, alpha));
  EXPECT_FALSE(d.update(INFINITY, true, alpha));
  d.update(5.0, true, alpha);
  EXPECT_FALSE(d.finite_row());
  OnlineMax e;  // a NaN logit: NaN row, even if larger maxima follow
  EXPECT_TRUE(e.update(1.0, true, alpha));
  EXPECT_FALSE(e.update(NAN, true, alpha));
  EXPECT_FALSE(e.update(9.0, true, alpha));
  EXPECT_FALSE(e.finite_row());
}

// gpu/attention.cuh's row algorithm, run sequentially: chunks of `chunk` keys of key_range;
// each chunk's visible logits, their maximum, OnlineMax, Σ e^{s−m} and Σ e^{s−m} v in key order,
// the poison rule, one quotient per component. Shapes: q [q_len, h·d], k and v [kv_len, g·d].
struct Problem {
  int64_t h = 1, g = 1, d = 1, q_len = 1, kv_len = 1;
  int mask = kCausal;
  int64_t window = 0;
  std::vector<int64_t> doc;
  double scale = 0.5, cap = 0;
  std::vector<double> q, k, v;
};

std::vector<double> kernel_model(const Problem& a, int chunk) {
  std::vector<double> o(static_cast<size_t>(a.q_len * a.h * a.d));
  for (int64_t i = 0; i < a.q_len; ++i) {
    for (int64_t hh = 0; hh < a.h; ++hh) {
      const int64_t g = hh * a.g / a.h, p = a.kv_len - a.q_len + i;
      const KeyRange r = key_range(a.mask, a.window, a.kv_len, p);
      std::vector<double> acc(static_cast<size_t>(a.d), 0.0);
      std::vector<bool> poison(static_cast<size_t>(a.d), false);
      double l = 0;
      OnlineMax om;
      for (int64_t t0 = r.lo; t0 < r.hi; t0 += chunk) {
        const int64_t n = std::min<int64_t>(chunk, r.hi - t0);
        std::vector<double> s(static_cast<size_t>(n));
        std::vector<bool> vis(static_cast<size_t>(n));
        double cmax = -INFINITY;
        bool cany = false;
        for (int64_t j = 0; j < n; ++j) {
          const int64_t t = t0 + j;
          vis[j] = doc_visible(a.mask, a.doc.data(), t, p);
          double dot = 0;
          for (int64_t c = 0; vis[j] && c < a.d; ++c) {
            dot += a.q[(i * a.h + hh) * a.d + c] * a.k[(t * a.g + g) * a.d + c];
          }
          s[j] = attention_logit(dot, a.scale, a.cap);
          if (vis[j]) {
            cmax = std::isnan(cmax) ? cmax : std::isnan(s[j]) ? s[j] : std::max(cmax, s[j]);
            cany = true;
          }
        }
        double alpha = 1;
        if (om.update(cmax, cany, alpha)) {
          double sum = 0;
          for (int64_t j = 0; j < n; ++j) {
            s[j] = vis[j] ? std::exp(s[j] - om.m) : 0.0;
            sum += s[j];
          }
          l = l * alpha + sum;
          for (int64_t c = 0; c < a.d; ++c) {
            double part = 0;
            for (int64_t j = 0; j < n; ++j) {
              if (vis[j]) part += s[j] * a.v[((t0 + j) * a.g + g) * a.d + c];
            }
            acc[c] = acc[c] * alpha + part;
          }
        } else if (cany && om.m == -INFINITY) {
          for (int64_t c = 0; c < a.d; ++c) {
            for (int64_t j = 0; j < n; ++j) {
              if (vis[j] && !std::isfinite(a.v[((t0 + j) * a.g + g) * a.d + c])) poison[c] = true;
            }
          }
        }
      }
      for (int64_t c = 0; c < a.d; ++c) {
        o[(i * a.h + hh) * a.d + c] = om.finite_row() && !poison[c] ? acc[c] / l : NAN;
      }
    }
  }
  return o;
}

std::vector<mp> exact(const Problem& a) {
  ref::AttentionConfig cfg;
  cfg.heads = a.h;
  cfg.kv_heads = a.g;
  cfg.head_dim = a.d;
  cfg.mask = ref_mask(a.mask);
  cfg.window = a.window;
  cfg.document_ids = a.doc;
  cfg.scale = mp(a.scale);
  if (a.cap > 0) cfg.soft_cap = mp(a.cap);
  auto mat = [](int64_t rows, int64_t cols, const std::vector<double>& x) {
    return ref::Mat<mp>(rows, cols, std::vector<mp>(x.begin(), x.end()));
  };
  return ref::attention<mp>(mat(a.q_len, a.h * a.d, a.q), mat(a.kv_len, a.g * a.d, a.k),
                            mat(a.kv_len, a.g * a.d, a.v), cfg)
      .data;
}

// NaN parity and, elsewhere, agreement to a few double ulps of the larger of the output and the
// largest |v| (the sum's scale), for chunks of 1, 3 and 256 keys.
void expect_model_matches(const Problem& a, const std::string& what) {
  const std::vector<mp> want = exact(a);
  double vmax = 0;
  for (double x : a.v) {
    if (std::isfinite(x)) vmax = std::max(vmax, std::abs(x));
  }
  for (int chunk : {1, 3, 256}) {
    const std::vector<double> got = kernel_model(a, chunk);
    for (size_t e = 0; e < got.size(); ++e) {
      const double w = ref::to_double(want[e]);
      if (std::isnan(w) || !std::isfinite(w)) {
        EXPECT_EQ(std::isnan(got[e]), std::isnan(w))
            << what << " chunk " << chunk << " [" << e << "] got " << got[e] << " want " << w;
        if (!std::isnan(w)) {
          EXPECT_EQ(got[e], w) << what << " [" << e << "]";
        }
        continue;
      }
      EXPECT_NEAR(got[e], w, 1e-13 * std::max(std::abs(w), vmax))
          << what << " chunk " << chunk << " [" << e << "]";
    }
  }
}

// Values from a multiplicative hash of the index, in [-2, 2): deterministic and varied.
std::vector<double> filled(int64_t n, uint32_t salt) {
  std::vector<double> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t hsh = (static_cast<uint32_t>(i) + salt) * 2654435761u;
    x[static_cast<size_t>(i)] = static_cast<double>(hsh >> 12) / 1048576.0 * 4.0 - 2.0;
  }
  return x;
}

Problem problem(int64_t h, int64_t g, int64_t d, int64_t q_len, int64_t kv_len, int mask,
                uint32_t salt) {
  Problem a;
  a.h = h, a.g = g, a.d = d, a.q_len = q_len, a.kv_len = kv_len, a.mask = mask;
  a.q = filled(q_len * h * d, salt);
  a.k = filled(kv_len * g * d, salt + 1000);
  a.v = filled(kv_len * g * d, salt + 2000);
  return a;
}

TEST(GpuAttentionMath, RowAlgorithmMatchesTheReferenceOnEveryMask) {
  expect_model_matches(problem(4, 2, 3, 9, 9, kCausal, 1), "GQA causal");
  expect_model_matches(problem(2, 1, 4, 7, 7, kNone, 2), "MQA none");
  Problem w = problem(2, 2, 2, 10, 10, kWindow, 3);
  w.window = 4;
  expect_model_matches(w, "window 4");
  Problem dm = problem(2, 1, 3, 6, 12, kDocument, 4);
  for (int64_t t = 0; t < 12; ++t) dm.doc.push_back((t * 5) % 3);
  expect_model_matches(dm, "documents, last 6 of 12");
  Problem cap = problem(2, 2, 4, 8, 8, kCausal, 5);
  cap.scale = 20.0;  // logits well past the cap
  cap.cap = 5.0;
  expect_model_matches(cap, "soft-cap 5");
  expect_model_matches(problem(1, 1, 2, 9, 4, kCausal, 6), "more queries than keys: NaN rows");
  Problem spread = problem(1, 1, 2, 6, 6, kCausal, 7);
  spread.scale = 400.0;  // e^{s−m} underflows for most keys; rescaling across chunks
  expect_model_matches(spread, "wide logits");
}

TEST(GpuAttentionMath, RowAlgorithmMatchesTheReferenceOnSpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  auto with = [](Problem a, std::vector<double> Problem::*field, int64_t at, double x) {
    (a.*field)[static_cast<size_t>(at)] = x;
    return a;
  };
  const Problem base = problem(1, 1, 2, 8, 8, kCausal, 11);
  expect_model_matches(with(base, &Problem::k, 3 * 2 + 1, NAN), "NaN key 3");
  expect_model_matches(with(base, &Problem::k, 3 * 2, inf), "+inf key 3");
  expect_model_matches(with(base, &Problem::k, 3 * 2, -inf), "-inf key 3");
  expect_model_matches(with(base, &Problem::v, 2 * 2 + 1, NAN), "NaN value 2");
  expect_model_matches(with(base, &Problem::v, 4 * 2, inf), "+inf value 4");
  expect_model_matches(with(with(base, &Problem::v, 4 * 2, inf), &Problem::v, 6 * 2, -inf),
                       "+inf and -inf values");
  // Key 0's logit −∞ (k = −∞ against q > 0) before finite ones: with chunks of 1 the first chunk
  // holds only −∞; its value ±∞ or NaN must still poison (0·∞) that component of every row.
  Problem first = base;
  for (int64_t i = 0; i < 8; ++i) first.q[static_cast<size_t>(i * 2)] = 1.0;
  first.k[0] = -inf;
  first.k[1] = 0.5;
  expect_model_matches(first, "-inf logit at key 0");
  expect_model_matches(with(first, &Problem::v, 1, inf), "-inf logit at key 0, +inf value");
  expect_model_matches(with(first, &Problem::v, 0, NAN), "-inf logit at key 0, NaN value");
  // Every logit −∞ in a row (all keys −∞): NaN rows.
  Problem all = base;
  for (int64_t i = 0; i < 8; ++i) all.q[static_cast<size_t>(i * 2)] = 1.0;
  for (int64_t t = 0; t < 8; ++t) {
    all.k[static_cast<size_t>(t * 2)] = -inf;
    all.k[static_cast<size_t>(t * 2 + 1)] = 0.0;
    all.q[static_cast<size_t>(t * 2 + 1)] = 0.0;
  }
  expect_model_matches(all, "all logits -inf");
  // A window hiding the special key: rows outside it stay finite.
  Problem w = with(base, &Problem::v, 1 * 2, NAN);
  w.mask = kWindow;
  w.window = 3;
  expect_model_matches(w, "NaN value hidden by a window");
}

}  // namespace
}  // namespace lmo::gpu::attn
