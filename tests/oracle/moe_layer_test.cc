// moe_layer (oracle/ops/moe_layer.h) against a plain double implementation of the F20 layer
// written here from the notes (router GEMM, sigmoid or softmax scores, the balancing bias for
// selection only, group-limited top-k by the sum of each group's two best, gates renormalized
// and scaled, SwiGLU experts, shared experts): the exact reference agrees with it to double
// precision on DeepSeek-V3's routing and Mixtral's. Two mutants of that implementation, stored
// in f32, are caught (the combine weighted by the biased scores; the routed scale dropped)
// while the correct one passes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "oracle/cases/case.h"
#include "oracle/check/check.h"
#include "oracle/golden/golden.h"
#include "tests/support/float_tensors.h"

namespace lmo::oracle {
namespace {

using testing::float_tensor;
using testing::floats;

struct Bugs {
  bool biased_gates = false;  // the combine weighted by s + c
  bool drop_scale = false;    // the routed scale forgotten
};

std::vector<double> doubles(const InputSet& in, const char* name) {
  const std::vector<float> f = floats(in.at(name));
  return {f.begin(), f.end()};
}

// One SwiGLU expert on a row: (silu(x W) ⊙ x V) W2, e-th slice of the stacked weights.
std::vector<double> swiglu(const std::vector<double>& x, const std::vector<double>& w,
                           const std::vector<double>& v, const std::vector<double>& w2, int64_t e,
                           int64_t d, int64_t f) {
  std::vector<double> h(static_cast<size_t>(f)), y(static_cast<size_t>(d), 0.0);
  for (int64_t j = 0; j < f; ++j) {
    double a = 0, b = 0;
    for (int64_t i = 0; i < d; ++i) {
      a += x[size_t(i)] * w[size_t(e * d * f + i * f + j)];
      b += x[size_t(i)] * v[size_t(e * d * f + i * f + j)];
    }
    h[size_t(j)] = a / (1 + std::exp(-a)) * b;
  }
  for (int64_t j = 0; j < f; ++j) {
    for (int64_t i = 0; i < d; ++i)
      y[size_t(i)] += h[size_t(j)] * w2[size_t(e * f * d + j * d + i)];
  }
  return y;
}

std::vector<double> layer(const Case& c, const InputSet& in, const Bugs& bugs) {
  const nlohmann::json& p = c.params;
  const int64_t t = p["tokens"], n = p["experts"], k = p["top_k"], d = p["d"], f = p["d_ff"];
  const int64_t groups = p.value("groups", 1), kept = p.value("topk_groups", 1);
  const int64_t shared = p.value("shared", 0);
  const bool sigmoid = p["score"] == "sigmoid", normalize = p.value("normalize", true);
  const double scale = bugs.drop_scale ? 1.0 : p.value("routed_scale", 1.0);
  const std::vector<double> x = doubles(in, "x"), wr = doubles(in, "router"), w = doubles(in, "w"),
                            v = doubles(in, "v"), w2 = doubles(in, "w2");
  const std::vector<double> bias =
      p.value("bias", false) ? doubles(in, "bias") : std::vector<double>(size_t(n), 0.0);
  std::vector<double> y(static_cast<size_t>(t * d), 0.0);
  for (int64_t r = 0; r < t; ++r) {
    const std::vector<double> xr(x.begin() + r * d, x.begin() + (r + 1) * d);
    std::vector<double> s(static_cast<size_t>(n)), sel(s.size());
    for (int64_t e = 0; e < n; ++e) {
      double z = 0;
      for (int64_t i = 0; i < d; ++i) z += xr[size_t(i)] * wr[size_t(i * n + e)];
      s[size_t(e)] = sigmoid ? 1 / (1 + std::exp(-z)) : z;
    }
    if (!sigmoid) {
      const double m = *std::max_element(s.begin(), s.end());
      double total = 0;
      for (double& e : s) total += (e = std::exp(e - m));
      for (double& e : s) e /= total;
    }
    for (int64_t e = 0; e < n; ++e) sel[size_t(e)] = s[size_t(e)] + bias[size_t(e)];
    const int64_t size = n / groups;
    std::vector<int64_t> order(static_cast<size_t>(groups));
    std::iota(order.begin(), order.end(), 0);
    std::vector<double> gs(order.size());
    for (int64_t g = 0; g < groups; ++g) {
      std::vector<double> m(sel.begin() + g * size, sel.begin() + (g + 1) * size);
      std::sort(m.rbegin(), m.rend());
      gs[size_t(g)] = groups == 1 ? 0 : m[0] + m[1];
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return gs[a] > gs[b]; });
    std::vector<int64_t> eligible;
    for (int64_t j = 0; j < kept; ++j) {
      for (int64_t e = order[size_t(j)] * size; e < (order[size_t(j)] + 1) * size; ++e)
        eligible.push_back(e);
    }
    std::stable_sort(eligible.begin(), eligible.end(), [&](int64_t a, int64_t b) {
      return sel[a] > sel[b] || (sel[a] == sel[b] && a < b);
    });
    eligible.resize(static_cast<size_t>(k));
    const std::vector<double>& weight = bugs.biased_gates ? sel : s;
    double total = 0;
    for (int64_t e : eligible) total += weight[size_t(e)];
    double* yr = y.data() + r * d;
    if (p.value("residual", false)) std::copy(xr.begin(), xr.end(), yr);
    if (shared > 0) {
      const std::vector<double> ws = doubles(in, "ws"), vs = doubles(in, "vs"),
                                w2s = doubles(in, "w2s");
      for (int64_t e = 0; e < shared; ++e) {
        const std::vector<double> o = swiglu(xr, ws, vs, w2s, e, d, f);
        for (int64_t i = 0; i < d; ++i) yr[i] += o[size_t(i)];
      }
    }
    for (int64_t e : eligible) {
      const double g = (normalize ? weight[size_t(e)] / total : weight[size_t(e)]) * scale;
      const std::vector<double> o = swiglu(xr, w, v, w2, e, d, f);
      for (int64_t i = 0; i < d; ++i) yr[i] += g * o[size_t(i)];
    }
  }
  return y;
}

TEST(MoeLayer, ExactReferenceAgreesWithAPlainDoubleLayer) {
  for (const char* id : {"moe-layer/deepseek-v3-routing", "moe-layer/mixtral-top2",
                         "moe-layer/softmax-top4-shared-residual"}) {
    const Case c = find_case(id);
    const InputSet in = reference_inputs(c, ref::Format::f32);
    const std::vector<double> want = layer(c, in, {});
    const ref::Tensor got = golden_content(c).tensors.at("out.y.f64");
    ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size())) << id;
    for (int64_t i = 0; i < got.numel(); ++i) {
      EXPECT_NEAR(got.get(i), want[size_t(i)], 1e-12 * (1 + std::fabs(want[size_t(i)])))
          << id << " " << i;
    }
  }
}

CheckReport check_f32(const Case& c, const std::vector<double>& y) {
  std::map<std::string, ref::Tensor> outs;
  const std::vector<float> f(y.begin(), y.end());
  outs.emplace("y", float_tensor(ref::Format::f32, {c.params["tokens"], c.params["d"]}, f));
  return check_outputs(c, outs);
}

TEST(MoeLayer, MutantsOfTheCombineAreCaught) {
  const Case c = find_case("moe-layer/deepseek-v3-routing");
  const InputSet in = reference_inputs(c, ref::Format::f32);
  EXPECT_TRUE(check_f32(c, layer(c, in, {})).pass);
  const CheckReport biased = check_f32(c, layer(c, in, {.biased_gates = true}));
  EXPECT_FALSE(biased.pass) << to_text(biased);
  const CheckReport unscaled = check_f32(c, layer(c, in, {.drop_scale = true}));
  EXPECT_FALSE(unscaled.pass) << to_text(unscaled);
}

}  // namespace
}  // namespace lmo::oracle
