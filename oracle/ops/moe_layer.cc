#include "oracle/ops/moe_layer.h"

#include <cmath>
#include <string>

#include "oracle/ops/families.h"
#include "oracle/ops/ffn.h"
#include "oracle/ops/limits.h"
#include "reference/ffn.h"
#include "reference/linalg.h"
#include "reference/moe.h"

namespace lmo::oracle {

std::vector<InputDecl> MoeLayerOp::inputs() const {
  // Weights of a layer with fan-in n uniform in ±1/√n (nn.Linear's default), as the FFN ops.
  const double in_scale = 1 / std::sqrt(static_cast<double>(p_.d));
  const double hidden_scale = 1 / std::sqrt(static_cast<double>(p_.d_ff));
  const int64_t n = p_.router.experts, s = p_.shared;
  std::vector<InputDecl> v = {{"x", {p_.router.tokens, p_.d}, Dist::kNormal, 0, 1},
                              {"router", {p_.d, n}, Dist::kUniform, -in_scale, in_scale}};
  if (p_.router.bias) v.push_back({"bias", {n}, Dist::kNormal, 0, p_.router.bias_std});
  v.push_back({"w", {n, p_.d, p_.d_ff}, Dist::kUniform, -in_scale, in_scale});
  v.push_back({"v", {n, p_.d, p_.d_ff}, Dist::kUniform, -in_scale, in_scale});
  v.push_back({"w2", {n, p_.d_ff, p_.d}, Dist::kUniform, -hidden_scale, hidden_scale});
  if (s > 0) {
    v.push_back({"ws", {s, p_.d, p_.d_ff}, Dist::kUniform, -in_scale, in_scale});
    v.push_back({"vs", {s, p_.d, p_.d_ff}, Dist::kUniform, -in_scale, in_scale});
    v.push_back({"w2s", {s, p_.d_ff, p_.d}, Dist::kUniform, -hidden_scale, hidden_scale});
  }
  return v;
}

double MoeLayerOp::cost() const {
  const double t = static_cast<double>(p_.router.tokens), d = static_cast<double>(p_.d);
  const double experts = static_cast<double>(p_.router.top_k + p_.shared);
  return t * d *
         (static_cast<double>(p_.router.experts) + 6.0 * experts * static_cast<double>(p_.d_ff));
}

namespace {

// The GLU experts of a stacked weight input ([E, d, d_ff], [E, d, d_ff], [E, d_ff, d]) as
// reference/moe.h's expert callables on one row.
template <class T>
struct GluExperts {
  std::vector<ref::Mat<T>> w, v, w2;
  std::vector<ref::ExpertFn<T>> fns;

  GluExperts(const InputSet& in, const char* wn, const char* vn, const char* w2n, int64_t count,
             int64_t d, int64_t d_ff, ref::Activation act) {
    if (count == 0) return;  // no shared experts: no such inputs
    const std::vector<T> wa = in.values<T>(wn), va = in.values<T>(vn), w2a = in.values<T>(w2n);
    const auto slice = [](const std::vector<T>& a, int64_t e, int64_t rows, int64_t cols) {
      const auto first = a.begin() + static_cast<std::ptrdiff_t>(e * rows * cols);
      return ref::Mat<T>(rows, cols, std::vector<T>(first, first + rows * cols));
    };
    for (int64_t e = 0; e < count; ++e) {
      w.push_back(slice(wa, e, d, d_ff));
      v.push_back(slice(va, e, d, d_ff));
      w2.push_back(slice(w2a, e, d_ff, d));
    }
    for (int64_t e = 0; e < count; ++e) {
      const size_t i = static_cast<size_t>(e);
      fns.push_back([this, i, act](std::span<const T> row) {
        const ref::Mat<T> x(1, static_cast<int64_t>(row.size()),
                            std::vector<T>(row.begin(), row.end()));
        return ref::glu_ffn<T>(x, w[i], v[i], w2[i], act).data;
      });
    }
  }
  GluExperts(const GluExperts&) = delete;  // the callables hold this
};

}  // namespace

template <class T>
Outputs<T> MoeLayerOp::compute(const InputSet& in) const {
  const RouterParams& r = p_.router;
  const ref::Mat<T> x(r.tokens, p_.d, in.values<T>("x"));
  const ref::Mat<T> logits =
      ref::matmul<T>(x, ref::Mat<T>(p_.d, r.experts, in.values<T>("router")));
  const std::vector<T> bias = r.bias ? in.values<T>("bias") : std::vector<T>{};
  const std::vector<ref::Routing<T>> routing = ref::route_tokens<T>(logits, bias, r.config<T>());
  const GluExperts<T> routed(in, "w", "v", "w2", r.experts, p_.d, p_.d_ff, p_.act);
  const GluExperts<T> shared(in, "ws", "vs", "w2s", p_.shared, p_.d, p_.d_ff, p_.act);
  Outputs<T> out(1);
  out[0].values.resize(static_cast<size_t>(r.tokens * p_.d));
  ref::parallel_for(r.tokens, [&](int64_t t) {
    const std::vector<T> y = ref::moe_layer<T>(
        x.row(t), routing[static_cast<size_t>(t)], std::span<const ref::ExpertFn<T>>(shared.fns),
        std::span<const ref::ExpertFn<T>>(routed.fns), p_.residual);
    std::copy(y.begin(), y.end(), out[0].values.begin() + t * p_.d);
  });
  return out;
}

void add_moe_layer_ops(std::vector<OpInfo>& ops) {
  ops.push_back({"moe_layer",
                 "F20",
                 "router logits x·W_r, every F20 routing mode, GLU experts, shared experts, the "
                 "gate-weighted combine × routed scale",
                 [](ParamReader& r) {
                   MoeLayerParams p;
                   p.router = read_router_params(r, /*generated_logits=*/false);
                   p.d = r.integer("d", 1, kMaxWidth);
                   p.d_ff = r.integer("d_ff", 1, kMaxWidth);
                   p.shared = r.integer("shared", 0, 64, 0);
                   p.act = read_activation(r);
                   p.residual = r.flag("residual", false);
                   return std::make_unique<MoeLayerOp>(p);
                 },
                 KernelEntry::kMoeLayer,
                 {reduction_output(naive_policy(),
                                   "router GEMM, routing, GLU expert GEMMs and the gate-weighted "
                                   "sum: a composition")}});
}

}  // namespace lmo::oracle
