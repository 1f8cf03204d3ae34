// C18: the F23 FLOP and memory formulas equal the operation counts of an instrumented reference
// run, exactly, for the terms the notes keep.
//
// The run is a self-contained attention layer (projections with linalg.h's matmul, scores as
// dot products, softmax.h's softmax, P·V as left-to-right sums) on Counted<T>. It is split into
// phases, each counted on its own:
//   qkv     Q = X W_Q, K = X W_K, V = X W_V            kept: 2·mul = 2bT·D·hd + 2·2bT·D·gd
//   scores  S = Q Kᵀ per head                          kept: 2·mul = 2bhT²d
//   softmax S/√d, then softmax per row                 EXCLUDED (lower order, "n × bhT²")
//   values  O = P V per head                           kept: 2·mul = 2bhT²d
//   out     Y = O W_O                                  kept: 2·mul = 2bT·hd·D
// In every kept phase each multiply is paired with one add (a dot product of length k is k
// multiplies and k adds from a zero start), so FLOPs = mul + add = 2·mul, which the test also
// checks. The excluded phase is counted too, and its exact count is asserted: per score one
// division by √d, one comparison (row max), one subtraction, one exp, one addition (the
// denominator) and one division; plus one sqrt per (batch, head).
//
// Memory: the run reports what it stores through count_stored: the input X (bTD), Q (bhTd),
// K and V (2bgTd), the attention weights P (bhT²) — the notes' activations — and the output
// (bTD, which the notes leave to the next layer). Decoding reports the K, V cache entries; the
// MLA cache fill reports c^KV and k^R.
#include <gtest/gtest.h>

#include <vector>

#include "reference/counted.h"
#include "reference/counts.h"
#include "reference/linalg.h"
#include "reference/parallel.h"
#include "reference/softmax.h"

namespace lmo::ref {
namespace {

struct Shape {
  int64_t b, t, D, h, g, d;
  bool notes_form() const { return g == h && D == h * d; }  // the notes' MHA with D = hd
};

template <class T>
struct Weights {
  Mat<T> wq, wk, wv, wo;
};

// Small deterministic values k/8, k ∈ −5 … 5 (no <random>).
template <class T>
Mat<T> fill(int64_t rows, int64_t cols, int64_t seed) {
  Mat<T> m(rows, cols);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      m(i, j) = T(static_cast<double>((i * 7 + j * 3 + seed * 5) % 11 - 5) / 8.0);
    }
  }
  return m;
}

template <class T>
Weights<T> weights(const Shape& s) {
  return {fill<T>(s.D, s.h * s.d, 1), fill<T>(s.D, s.g * s.d, 2), fill<T>(s.D, s.g * s.d, 3),
          fill<T>(s.h * s.d, s.D, 4)};
}

template <class T>
std::vector<Mat<T>> inputs(const Shape& s, int64_t tokens) {
  std::vector<Mat<T>> x;
  for (int64_t bi = 0; bi < s.b; ++bi) x.push_back(fill<T>(tokens, s.D, 10 + bi));
  return x;
}

struct Phases {
  OpCounts qkv, scores, softmax, values, out;
  OpCounts kept() const { return qkv + scores + values + out; }
};

// Attention core for query rows q (n × hd) against keys/values k, v (m × gd), heads in
// parallel (each (batch, head) writes its own slots). Returns O (n × hd) per batch element.
template <class T>
std::vector<Mat<T>> attention_core(const std::vector<Mat<T>>& q, const std::vector<Mat<T>>& k,
                                   const std::vector<Mat<T>>& v, const Shape& s, Phases& ph) {
  using std::sqrt;
  const int64_t n = q[0].rows, m = k[0].rows;
  auto slice = [&](const Mat<T>& a, int64_t row, int64_t head) {
    return a.row(row).subspan(static_cast<size_t>(head * s.d), static_cast<size_t>(s.d));
  };
  std::vector<Mat<T>> scores(static_cast<size_t>(s.b * s.h), Mat<T>(n, m));
  {
    OpCountScope c;
    parallel_for(s.b * s.h, [&](int64_t bh) {
      const int64_t bi = bh / s.h, j = bh % s.h, kv = j * s.g / s.h;  // GQA: ⌊j·g/h⌋
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t r = 0; r < m; ++r) {
          scores[static_cast<size_t>(bh)](i, r) = dot<T>(slice(q[bi], i, j), slice(k[bi], r, kv));
        }
      }
    });
    ph.scores = ph.scores + c.counts();
  }
  {
    OpCountScope c;
    parallel_for(s.b * s.h, [&](int64_t bh) {
      Mat<T>& sc = scores[static_cast<size_t>(bh)];
      const T scale = sqrt(T(s.d));
      for (int64_t i = 0; i < n; ++i) {
        for (T& x : sc.row(i)) x = x / scale;
        const std::vector<T> p = softmax<T>(std::span<const T>(sc.row(i)));
        std::copy(p.begin(), p.end(), sc.row(i).begin());
      }
    });
    count_stored(s.b * s.h * n * m);  // the attention weights P
    ph.softmax = ph.softmax + c.counts();
  }
  std::vector<Mat<T>> o(static_cast<size_t>(s.b), Mat<T>(n, s.h * s.d));
  {
    OpCountScope c;
    parallel_for(s.b * s.h, [&](int64_t bh) {
      const int64_t bi = bh / s.h, j = bh % s.h, kv = j * s.g / s.h;
      const Mat<T>& p = scores[static_cast<size_t>(bh)];
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t col = 0; col < s.d; ++col) {
          T acc(0);
          for (int64_t r = 0; r < m; ++r) acc = acc + p(i, r) * v[bi](r, kv * s.d + col);
          o[bi](i, j * s.d + col) = acc;
        }
      }
    });
    ph.values = ph.values + c.counts();
  }
  return o;
}

template <class T>
std::vector<Mat<T>> output_projection(const std::vector<Mat<T>>& o, const Weights<T>& w,
                                      const Shape& s, Phases& ph) {
  OpCountScope c;
  std::vector<Mat<T>> y;
  for (const Mat<T>& oi : o) y.push_back(matmul<T>(oi, w.wo));
  count_stored(s.b * o[0].rows * s.D);  // the output
  ph.out = ph.out + c.counts();
  return y;
}

// Full attention over the tokens of x.
template <class T>
std::vector<Mat<T>> attention_forward(const std::vector<Mat<T>>& x, const Weights<T>& w,
                                      const Shape& s, Phases& ph) {
  std::vector<Mat<T>> q, k, v;
  {
    OpCountScope c;
    count_stored(s.b * x[0].rows * s.D);  // the input
    for (const Mat<T>& xi : x) {
      q.push_back(matmul<T>(xi, w.wq));
      k.push_back(matmul<T>(xi, w.wk));
      v.push_back(matmul<T>(xi, w.wv));
    }
    count_stored(s.b * x[0].rows * (s.h + 2 * s.g) * s.d);  // Q, K, V
    ph.qkv = ph.qkv + c.counts();
  }
  return output_projection(attention_core(q, k, v, s, ph), w, s, ph);
}

const std::vector<Shape> kShapes = {
    {1, 1, 4, 1, 1, 4},   // one token, one head
    {2, 5, 8, 2, 2, 4},   // MHA, D = hd
    {1, 7, 12, 3, 1, 4},  // MQA
    {2, 6, 16, 4, 2, 4},  // GQA
    {1, 4, 10, 2, 2, 4},  // width D = 10 ≠ h·d = 8
    {3, 9, 24, 6, 3, 4},
};

void expect_paired(const OpCounts& c, const char* what) {
  EXPECT_EQ(c.mul, c.add) << what;
  EXPECT_EQ(c.div, 0) << what;
  EXPECT_EQ(c.fma, 0) << what;
  EXPECT_EQ(c.func, 0) << what;
}

// The excluded phase: per score ÷√d, compare, subtract, exp, add, ÷; one sqrt per (b, head).
void expect_softmax_phase(const OpCounts& c, const Shape& s, int64_t scores) {
  EXPECT_EQ(c.mul, 0);
  EXPECT_EQ(c.div, 2 * scores);
  EXPECT_EQ(c.add, 2 * scores);
  EXPECT_EQ(c.cmp, scores);
  EXPECT_EQ(c.func, scores + s.b * s.h);
}

TEST(CountsInstrumented, FullAttentionFlopsEqualTheClosedForm) {
  for (const Shape& s : kShapes) {
    SCOPED_TRACE("b=" + std::to_string(s.b) + " T=" + std::to_string(s.t) + " D=" +
                 std::to_string(s.D) + " h=" + std::to_string(s.h) + " g=" + std::to_string(s.g));
    Phases ph;
    attention_forward(inputs<Counted<double>>(s, s.t), weights<Counted<double>>(s), s, ph);
    const AttentionFlops f = attention_flops(s.b, s.t, s.D, s.h, s.g, s.d);
    for (const auto* c : {&ph.qkv, &ph.scores, &ph.values, &ph.out}) expect_paired(*c, "kept");
    EXPECT_EQ(2 * ph.qkv.mul, f.q + f.k + f.v);
    EXPECT_EQ(2 * ph.scores.mul, f.scores);
    EXPECT_EQ(2 * ph.values.mul, f.values);
    EXPECT_EQ(2 * ph.out.mul, f.o);
    EXPECT_EQ(ph.kept().mul + ph.kept().add, f.total());
    if (s.notes_form()) {  // 8bTD² + 4bhT²d, the notes' total
      EXPECT_EQ(ph.kept().mul + ph.kept().add, attention_flops_mha(s.b, s.t, s.h, s.d));
    }
    expect_softmax_phase(ph.softmax, s, s.b * s.h * s.t * s.t);
  }
}

TEST(CountsInstrumented, ActivationMemoryEqualsTheClosedForm) {
  for (const Shape& s : kShapes) {
    Phases ph;
    attention_forward(inputs<Counted<double>>(s, s.t), weights<Counted<double>>(s), s, ph);
    const AttentionActivations a = attention_activations(s.b, s.t, s.D, s.h, s.g, s.d);
    EXPECT_EQ(ph.qkv.stored, a.input + a.q + a.kv);
    EXPECT_EQ(ph.softmax.stored, a.weights);
    EXPECT_EQ(ph.qkv.stored + ph.softmax.stored, a.total());
    EXPECT_EQ(ph.out.stored, a.output);  // reported, not part of the notes' total
    if (s.notes_form()) {
      EXPECT_EQ(mha_params(s.h, s.d) + ph.qkv.stored + ph.softmax.stored,
                attention_memory_mha(s.b, s.t, s.h, s.d));
    } else if (s.D == s.h * s.d) {
      EXPECT_EQ(gqa_params(s.h, s.g, s.d) + ph.qkv.stored + ph.softmax.stored,
                attention_memory_gqa(s.b, s.t, s.h, s.g, s.d));
    }
  }
}

TEST(CountsInstrumented, CountsDoNotDependOnThreadsAndValuesOnCounting) {
  const Shape s{2, 6, 16, 4, 2, 4};
  set_reference_threads(1);
  Phases one;
  const auto y1 =
      attention_forward(inputs<Counted<double>>(s, s.t), weights<Counted<double>>(s), s, one);
  set_reference_threads(4);
  Phases four;
  attention_forward(inputs<Counted<double>>(s, s.t), weights<Counted<double>>(s), s, four);
  set_reference_threads(0);
  EXPECT_EQ(one.kept(), four.kept());
  EXPECT_EQ(one.softmax, four.softmax);
  // Counting does not change a single bit of the result.
  Phases plain;
  const auto y = attention_forward(inputs<double>(s, s.t), weights<double>(s), s, plain);
  for (size_t bi = 0; bi < y.size(); ++bi) {
    for (size_t i = 0; i < y[bi].data.size(); ++i) EXPECT_EQ(y1[bi].data[i].value(), y[bi].data[i]);
  }
}

TEST(CountsInstrumented, CountedMpRunsTheSameTemplates) {
  const Shape s{1, 3, 8, 2, 1, 4};
  Phases pc, pd, pm;
  const auto yc = attention_forward(inputs<Counted<mp>>(s, s.t), weights<Counted<mp>>(s), s, pc);
  attention_forward(inputs<Counted<double>>(s, s.t), weights<Counted<double>>(s), s, pd);
  const auto ym = attention_forward(inputs<mp>(s, s.t), weights<mp>(s), s, pm);
  EXPECT_EQ(pc.kept(), pd.kept());
  EXPECT_EQ(pc.softmax, pd.softmax);
  for (size_t i = 0; i < ym[0].data.size(); ++i) EXPECT_EQ(yc[0].data[i].value(), ym[0].data[i]);
  EXPECT_EQ(to_mp(yc[0].data[0]), ym[0].data[0]);
  EXPECT_EQ(2 * (pc.kept().mul), attention_flops(1, 3, 8, 2, 1, 4).total());
}

// One decoding step with a KV cache at length t (t − 1 cached positions plus the new token),
// against 8bD² + 4bhtd; the same step without a cache recomputes the whole prefix and costs
// 8btD² + 4bht²d; the cache holds 2·b·g·t·d elements.
TEST(CountsInstrumented, DecodeStepWithAndWithoutCache) {
  for (const Shape& s : kShapes) {
    SCOPED_TRACE("T=" + std::to_string(s.t) + " h=" + std::to_string(s.h) +
                 " g=" + std::to_string(s.g));
    using C = Counted<double>;
    const Weights<C> w = weights<C>(s);
    const std::vector<Mat<C>> x = inputs<C>(s, s.t);
    std::vector<Mat<C>> kc(static_cast<size_t>(s.b), Mat<C>(s.t, s.g * s.d));
    std::vector<Mat<C>> vc = kc;
    int64_t cache_stored = 0;
    for (int64_t pos = 0; pos + 1 < s.t; ++pos) {  // prefill: the cache of the first t − 1
      OpCountScope c;
      for (int64_t bi = 0; bi < s.b; ++bi) {
        const auto k = vecmat<C>(x[bi].row(pos), w.wk), v = vecmat<C>(x[bi].row(pos), w.wv);
        std::copy(k.begin(), k.end(), kc[bi].row(pos).begin());
        std::copy(v.begin(), v.end(), vc[bi].row(pos).begin());
        count_stored(2 * s.g * s.d);
      }
      cache_stored += c.counts().stored;
    }
    Phases ph;
    std::vector<Mat<C>> q;
    {
      OpCountScope c;
      const int64_t last = s.t - 1;
      for (int64_t bi = 0; bi < s.b; ++bi) {
        q.emplace_back(1, s.h * s.d, vecmat<C>(x[bi].row(last), w.wq));
        const auto k = vecmat<C>(x[bi].row(last), w.wk), v = vecmat<C>(x[bi].row(last), w.wv);
        std::copy(k.begin(), k.end(), kc[bi].row(last).begin());
        std::copy(v.begin(), v.end(), vc[bi].row(last).begin());
        count_stored(2 * s.g * s.d);
      }
      ph.qkv = c.counts();
      cache_stored += ph.qkv.stored;
    }
    const auto y_step = output_projection(attention_core(q, kc, vc, s, ph), w, s, ph);
    const AttentionFlops f = decode_step_flops(s.b, s.t, s.D, s.h, s.g, s.d);
    for (const auto* c : {&ph.qkv, &ph.scores, &ph.values, &ph.out}) expect_paired(*c, "kept");
    EXPECT_EQ(2 * ph.qkv.mul, f.q + f.k + f.v);
    EXPECT_EQ(2 * ph.scores.mul, f.scores);
    EXPECT_EQ(2 * ph.values.mul, f.values);
    EXPECT_EQ(2 * ph.out.mul, f.o);
    if (s.notes_form()) {
      EXPECT_EQ(2 * ph.kept().mul, decode_step_flops_mha(s.b, s.t, s.h, s.d));
    }
    expect_softmax_phase(ph.softmax, s, s.b * s.h * s.t);
    EXPECT_EQ(cache_stored, kv_cache_elements(s.b, s.t, s.g, s.d));

    // Without a cache: the full forward over the t tokens.
    Phases full;
    const auto y_full = attention_forward(x, w, s, full);
    EXPECT_EQ(2 * full.kept().mul, attention_flops(s.b, s.t, s.D, s.h, s.g, s.d).total());
    if (s.notes_form()) {
      EXPECT_EQ(2 * full.kept().mul, decode_step_flops_uncached_mha(s.b, s.t, s.h, s.d));
    }
    // The cached step computes the last row of the full forward, bit for bit (C16).
    for (int64_t bi = 0; bi < s.b; ++bi) {
      for (int64_t col = 0; col < s.D; ++col) {
        EXPECT_EQ(y_step[bi](0, col).value(), y_full[bi](s.t - 1, col).value());
      }
    }
  }
}

// MLA (F19) caches c^KV = h W^DKV and the shared k^R = RoPE(h W^KR) per token: b·t·(d_c + d_h^R)
// elements, against 2·b·h·t·d_h for the equivalent MHA cache (C23). (RoPE rotates k^R in place
// and stores nothing more, so it is left out here.)
TEST(CountsInstrumented, MlaCacheElements) {
  using C = Counted<double>;
  const int64_t b = 2, t = 5, D = 16, d_c = 6, d_rope = 2, h = 4, d_h = 4;
  const Mat<C> w_dkv = fill<C>(D, d_c, 7), w_kr = fill<C>(D, d_rope, 8);
  OpCountScope c;
  for (int64_t bi = 0; bi < b; ++bi) {
    const Mat<C> x = fill<C>(t, D, 20 + bi);
    Mat<C> latent(t, d_c), rope_key(t, d_rope);
    for (int64_t pos = 0; pos < t; ++pos) {
      const auto cv = vecmat<C>(x.row(pos), w_dkv), kr = vecmat<C>(x.row(pos), w_kr);
      std::copy(cv.begin(), cv.end(), latent.row(pos).begin());
      std::copy(kr.begin(), kr.end(), rope_key.row(pos).begin());
      count_stored(d_c + d_rope);
    }
  }
  EXPECT_EQ(c.counts().stored, mla_cache_elements(b, t, d_c, d_rope));
  EXPECT_LT(c.counts().stored, kv_cache_elements(b, t, h, d_h));
}

TEST(CountsInstrumented, CountedTypeCountsEachOperationOnce) {
  using C = Counted<double>;
  OpCountScope c;
  C x(1.5), y(2.0);
  C z = x * y + x / y - x;  // 1 mul, 1 div, 2 adds
  z += C(1);                // 1 add
  const bool less = x < y;  // 1 cmp
  C e = exp(x) + sqrt(y);   // 2 func, 1 add
  C f = fma(x, y, z);       // 1 fma
  C n = -x;                 // free
  const OpCounts k = c.counts();
  EXPECT_EQ(k, (OpCounts{.add = 4, .mul = 1, .div = 1, .fma = 1, .cmp = 1, .func = 2}));
  EXPECT_TRUE(less);
  EXPECT_EQ(z.value(), 1.5 * 2.0 + 1.5 / 2.0 - 1.5 + 1);
  EXPECT_EQ(e.value(), std::exp(1.5) + std::sqrt(2.0));
  EXPECT_EQ(f.value(), std::fma(1.5, 2.0, z.value()));
  EXPECT_EQ(n.value(), -1.5);
  EXPECT_TRUE(isinf(std::numeric_limits<C>::infinity()));
  EXPECT_EQ(to_mp(C(0.25)), mp("0.25"));
  EXPECT_EQ((convert<C>(mp("0.1"))).value(), 0.1);
}

// Counted wraps every project number type: the same softmax on Counted<bfloat16> and
// Counted<float128> gives the same bits as on the bare type, with the counts of the formula.
TEST(CountsInstrumented, CountedWrapsSimulatedAndQuadTypes) {
  const std::vector<double> z = {0.5, -1.25, 2.0, 0.75};
  auto run = [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> bare;
    std::vector<Counted<T>> counted;
    for (double v : z) {
      bare.push_back(T(v));
      counted.push_back(Counted<T>(T(v)));
    }
    OpCountScope c;
    const auto pc = softmax<Counted<T>>(counted);
    const OpCounts k = c.counts();
    EXPECT_EQ(k, (OpCounts{.add = 8, .div = 4, .cmp = 4, .func = 4}));
    const auto pb = softmax<T>(bare);
    for (size_t i = 0; i < z.size(); ++i) EXPECT_EQ(to_mp(pc[i]), to_mp(pb[i]));
  };
  run(bfloat16());
  run(fp8_e5m2());
  run(float128());
  run(float());
}

}  // namespace
}  // namespace lmo::ref
