#include "oracle/ops/ffn.h"

#include <cmath>
#include <functional>

#include "oracle/ops/families.h"
#include "oracle/ops/ffn_error_scale.h"
#include "oracle/ops/limits.h"
#include "reference/ffn.h"
#include "reference/linalg.h"

namespace lmo::oracle {

std::vector<InputDecl> FfnOp::inputs() const {
  // Weights and biases of a layer with fan-in n: uniform in ±1/√n, PyTorch's nn.Linear default
  // initialization (and no transcendental per element, so large matrices are cheap to make).
  const double in_scale = 1 / std::sqrt(static_cast<double>(p_.d));
  const double hidden_scale = 1 / std::sqrt(static_cast<double>(p_.d_ff));
  std::vector<InputDecl> v = {{"x", {p_.tokens, p_.d}, Dist::kNormal, 0, 1}};
  if (p_.gated) {
    v.push_back({"w", {p_.d, p_.d_ff}, Dist::kUniform, -in_scale, in_scale});
    v.push_back({"v", {p_.d, p_.d_ff}, Dist::kUniform, -in_scale, in_scale});
    v.push_back({"w2", {p_.d_ff, p_.d}, Dist::kUniform, -hidden_scale, hidden_scale});
    return v;
  }
  v.push_back({"w1", {p_.d, p_.d_ff}, Dist::kUniform, -in_scale, in_scale});
  if (p_.bias) v.push_back({"b1", {p_.d_ff}, Dist::kUniform, -in_scale, in_scale});
  v.push_back({"w2", {p_.d_ff, p_.d}, Dist::kUniform, -hidden_scale, hidden_scale});
  if (p_.bias) v.push_back({"b2", {p_.d}, Dist::kUniform, -hidden_scale, hidden_scale});
  return v;
}

template <class T>
Outputs<T> FfnOp::compute(const InputSet& in) const {
  const ref::Mat<T> x(p_.tokens, p_.d, in.values<T>("x"));
  const ref::Mat<T> w2(p_.d_ff, p_.d, in.values<T>("w2"));
  Outputs<T> out(1);
  if (p_.gated) {
    const ref::Mat<T> w(p_.d, p_.d_ff, in.values<T>("w"));
    const ref::Mat<T> v(p_.d, p_.d_ff, in.values<T>("v"));
    out[0].values = ref::glu_ffn<T>(x, w, v, w2, p_.act).data;
  } else if (p_.bias) {
    const ref::Mat<T> w1(p_.d, p_.d_ff, in.values<T>("w1"));
    const std::vector<T> b1 = in.values<T>("b1"), b2 = in.values<T>("b2");
    out[0].values = ref::ffn_with_bias<T>(x, w1, b1, w2, b2, p_.act).data;
  } else {
    const ref::Mat<T> w1(p_.d, p_.d_ff, in.values<T>("w1"));
    out[0].values = ref::ffn<T>(x, w1, w2, p_.act).data;
  }
  return out;
}

void FfnOp::annotate_exact(const InputSet& in, Outputs<ref::mp>& out) const {
  out[0].error_scale = ffn_error_scale(p_, in);
}

std::vector<RoundingPoint> FfnOp::rounding_points() const {
  std::vector<RoundingPoint> v = {
      {"hidden", {}, "f32",
       p_.gated ? "the first GEMMs' outputs x·W and x·V" : "the first GEMM's output x·W1 (+ b1)"},
      {"act", {}, "f32", p_.gated ? "act(x·W)" : "act(x·W1 (+ b1))"}};
  if (p_.gated) v.push_back({"gated", {}, "f32", "act(x·W) ⊙ x·V, entering W2"});
  return v;
}

template <class T>
Outputs<T> FfnOp::compute(const InputSet& in, const BoundRecipe& recipe) const {
  // The reference's matrix products and activation (reference/ffn.h's order of operations),
  // with the recipe's roundings between them: a framework's MLP as separate kernels.
  const auto hidden = point_rounding<T>(recipe, "hidden");
  const auto act = point_rounding<T>(recipe, "act");
  const auto gated =
      p_.gated ? point_rounding<T>(recipe, "gated") : std::function<T(const T&)>{};
  const auto at = [](const std::function<T(const T&)>& r, const T& x) { return r ? r(x) : x; };
  const ref::Mat<T> x(p_.tokens, p_.d, in.values<T>("x"));
  const ref::Mat<T> w2(p_.d_ff, p_.d, in.values<T>("w2"));
  ref::Mat<T> h;
  if (p_.gated) {
    const ref::Mat<T> a = ref::matmul<T>(x, ref::Mat<T>(p_.d, p_.d_ff, in.values<T>("w")));
    const ref::Mat<T> b = ref::matmul<T>(x, ref::Mat<T>(p_.d, p_.d_ff, in.values<T>("v")));
    h = ref::Mat<T>(a.rows, a.cols);
    for (size_t i = 0; i < h.data.size(); ++i) {
      h.data[i] = at(gated, T(at(act, ref::activate(p_.act, at(hidden, a.data[i]))) *
                              at(hidden, b.data[i])));
    }
  } else {
    h = ref::matmul<T>(x, ref::Mat<T>(p_.d, p_.d_ff, in.values<T>("w1")));
    const std::vector<T> b1 = p_.bias ? in.values<T>("b1") : std::vector<T>{};
    for (int64_t i = 0; i < h.rows; ++i) {
      for (int64_t j = 0; j < h.cols; ++j) {
        T v = h(i, j);
        if (p_.bias) v = T(v + b1[static_cast<size_t>(j)]);
        h(i, j) = at(act, ref::activate(p_.act, at(hidden, v)));
      }
    }
  }
  ref::Mat<T> y = ref::matmul<T>(h, w2);
  if (p_.bias) {
    const std::vector<T> b2 = in.values<T>("b2");
    for (int64_t i = 0; i < y.rows; ++i) {
      for (int64_t j = 0; j < y.cols; ++j) y(i, j) = y(i, j) + b2[static_cast<size_t>(j)];
    }
  }
  Outputs<T> out(1);
  out[0].values = std::move(y.data);
  return out;
}

ref::Activation read_activation(ParamReader& r) {
  // No default: F04's and F05's choice is the point of a case (ReLU for F03 is written out too).
  const std::string a = r.choice("activation", {"relu", "gelu", "gelu_tanh", "silu"});
  if (a == "gelu") return ref::Activation::kGELU;
  if (a == "gelu_tanh") return ref::Activation::kGELUTanh;
  if (a == "silu") return ref::Activation::kSiLU;
  return ref::Activation::kReLU;
}

namespace {

std::unique_ptr<Op> make_ffn(ParamReader& r, bool gated) {
  FfnParams p;
  p.gated = gated;
  p.tokens = r.integer("tokens", 1, kMaxRows);
  p.d = r.integer("d", 1, kMaxWidth);
  p.d_ff = r.integer("d_ff", 1, kMaxWidth);
  p.act = read_activation(r);
  if (!gated) p.bias = r.flag("bias", false);
  if (static_cast<double>(p.d) * static_cast<double>(p.d_ff) >
      static_cast<double>(int64_t{1} << 28)) {
    r.fail("d_ff", "expected d × d_ff ≤ 2^28 weights per matrix");
  }
  return std::make_unique<FfnOp>(p);
}

}  // namespace

void add_ffn_ops(std::vector<OpInfo>& ops) {
  ops.push_back({"ffn",
                 "F03, F04",
                 "act(x W1 (+ b1)) W2 (+ b2), act relu | gelu | gelu_tanh | silu",
                 [](ParamReader& r) { return make_ffn(r, false); },
                 KernelEntry::kFfn,
                 {reduction_output(naive_policy(2, 0.5, 2, kErrorScaleMultiple),
                                   "two matrix products around an activation: a composition "
                                   "(with its error scale)")},
                 {"torch-mlp"}});
  ops.push_back({"glu_ffn",
                 "F05",
                 "(act(x W) ⊙ x V) W2: ReGLU, GeGLU, GeGLU-tanh, SwiGLU",
                 [](ParamReader& r) { return make_ffn(r, true); },
                 KernelEntry::kFfn,
                 {reduction_output(naive_policy(2, 0.5, 2, kErrorScaleMultiple),
                                   "gate and up products, a GLU gate, a down product (with its "
                                   "error scale)")},
                 {"torch-mlp"}});
}

}  // namespace lmo::oracle
