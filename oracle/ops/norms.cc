#include "oracle/ops/norms.h"

#include "oracle/ops/families.h"
#include "oracle/ops/limits.h"
#include "reference/norms.h"

namespace lmo::oracle {

std::vector<InputDecl> NormOp::inputs() const {
  // Gemma stores γ around 0 (the weight is 1 + γ); the others around 1.
  const double gamma_mean = p_.kind == NormKind::kRmsGemma ? 0.0 : 1.0;
  std::vector<InputDecl> v = {{"x", {p_.rows, p_.d}, Dist::kNormal, 0, 1},
                              {"gamma", {p_.d}, Dist::kNormal, gamma_mean, 0.1}};
  if (p_.kind == NormKind::kLayer) v.push_back({"beta", {p_.d}, Dist::kNormal, 0, 0.1});
  // The residual stream: larger than the sublayer output x added to it.
  if (p_.kind == NormKind::kFusedAddRms) {
    v.push_back({"residual", {p_.rows, p_.d}, Dist::kNormal, 0, 4});
  }
  return v;
}

std::vector<OutputDecl> NormOp::outputs() const {
  if (p_.kind == NormKind::kFusedAddRms) return {{"residual", {p_.rows, p_.d}}, {"y", {p_.rows, p_.d}}};
  return {{"y", {p_.rows, p_.d}}};
}

template <class T>
Outputs<T> NormOp::compute(const InputSet& in) const {
  const ref::Mat<T> x(p_.rows, p_.d, in.values<T>("x"));
  const std::vector<T> gamma = in.values<T>("gamma");
  const T eps = T(p_.eps);
  ref::Mat<T> y;
  switch (p_.kind) {
    case NormKind::kRms:
      y = ref::rmsnorm<T>(x, gamma, eps);
      break;
    case NormKind::kRmsGemma:
      y = ref::rmsnorm_gemma<T>(x, gamma, eps);
      break;
    case NormKind::kLayer: {
      const std::vector<T> beta = in.values<T>("beta");
      y = ref::layernorm<T>(x, gamma, beta, eps);
      break;
    }
    case NormKind::kFusedAddRms: {
      const ref::Mat<T> r(p_.rows, p_.d, in.values<T>("residual"));
      ref::FusedAddNorm<T> f = ref::fused_add_rmsnorm<T>(x, r, gamma, eps);
      Outputs<T> out(2);
      out[0].values = std::move(f.residual.data);
      out[1].values = std::move(f.y.data);
      return out;
    }
  }
  Outputs<T> out(1);
  out[0].values = std::move(y.data);
  return out;
}

std::vector<RoundingPoint> NormOp::rounding_points() const {
  if (p_.kind == NormKind::kLayer) {
    return {{"form", {"divide", "rsqrt"}, "divide",
             "divide: (x − μ) / sqrt(σ² + ε) as written; rsqrt: (x − μ) · (1/sqrt(·)) with the "
             "reciprocal held"},
            {"inv_std", {}, "f32", "the reciprocal 1/sqrt(σ² + ε) (form=rsqrt)"},
            {"normed", {}, "f32", "the normalized row before γ and β"},
            {"variance", {"two_pass", "one_pass", "welford"}, "two_pass",
             "σ² as mean((x − μ)²) (two passes), as E[x²] − μ² clamped at 0 (one pass: flax's "
             "default), or by Welford's running update (Apex, TransformerEngine)"}};
  }
  if (p_.kind != NormKind::kRms && p_.kind != NormKind::kFusedAddRms) return {};
  std::vector<RoundingPoint> v;
  if (p_.kind == NormKind::kFusedAddRms) {
    v.push_back({"sum", {}, "f32", "x + r as the norm reads it (vLLM: the stored, rounded sum)"});
  }
  for (RoundingPoint& p : rms_points()) v.push_back(std::move(p));
  return v;
}

std::vector<RoundingPoint> NormOp::rms_points() {
  return {{"form", {"divide", "rsqrt"}, "divide",
           "divide: x / sqrt(mean(x²) + ε) as written; rsqrt: x · (1/sqrt(·)) with the "
           "reciprocal held"},
          {"inv_rms", {}, "f32", "the reciprocal 1/sqrt(mean(x²) + ε) (form=rsqrt)"},
          {"normed", {}, "f32", "the normalized row before the weight"}};
}

template <class T>
Outputs<T> NormOp::compute(const InputSet& in, const BoundRecipe& recipe) const {
  if (p_.kind == NormKind::kRmsGemma) return compute<T>(in);  // no points: only +ftz applies
  const ref::Mat<T> x(p_.rows, p_.d, in.values<T>("x"));
  const std::vector<T> gamma = in.values<T>("gamma");
  const bool layer = p_.kind == NormKind::kLayer;
  ref::NormRounding<T> r;
  r.multiply_by_inverse = recipe.choice("form") == "rsqrt";
  r.inv_rms = point_rounding<T>(recipe, layer ? "inv_std" : "inv_rms");
  r.normed = point_rounding<T>(recipe, "normed");
  if (layer) {
    const std::string& v = recipe.choice("variance");
    r.variance = v == "one_pass"  ? ref::Variance::kOnePass
                 : v == "welford" ? ref::Variance::kWelford
                                  : ref::Variance::kTwoPass;
    Outputs<T> out(1);
    out[0].values = ref::layernorm<T>(x, gamma, in.values<T>("beta"), T(p_.eps), r).data;
    return out;
  }
  if (p_.kind == NormKind::kFusedAddRms) {
    const ref::Mat<T> res(p_.rows, p_.d, in.values<T>("residual"));
    ref::FusedAddNorm<T> f =
        ref::fused_add_rmsnorm<T>(x, res, gamma, T(p_.eps), r, point_rounding<T>(recipe, "sum"));
    Outputs<T> out(2);
    out[0].values = std::move(f.residual.data);
    out[1].values = std::move(f.y.data);
    return out;
  }
  Outputs<T> out(1);
  out[0].values = ref::rmsnorm<T>(x, gamma, T(p_.eps), r).data;
  return out;
}

namespace {

OpInfo norm_info(std::string name, NormKind kind, std::string catalog, std::string summary,
                 std::vector<OutputPolicy> policies, std::vector<std::string> recipes = {},
                 std::vector<BenchShape> bench = {}) {
  return {std::move(name),
          std::move(catalog),
          std::move(summary),
          [kind](ParamReader& r) {
            NormParams p;
            p.kind = kind;
            p.rows = r.integer("rows", 1, kMaxRows);
            p.d = r.integer("d", 1, kMaxWidth);
            p.eps = r.real("eps", 0, 1);
            return std::make_unique<NormOp>(p);
          },
          kind == NormKind::kFusedAddRms ? KernelEntry::kFusedAddRmsnorm : KernelEntry::kNorm,
          std::move(policies),
          std::move(recipes),
          std::move(bench)};
}

// The bench shape: rows of Llama 3 8B's hidden size 4096.
BenchShape norm_bench(std::string name, double eps) {
  return {std::move(name), 4096, [eps](int64_t rows) {
            return nlohmann::json{{"rows", rows}, {"d", 4096}, {"eps", eps}};
          }};
}

}  // namespace

void add_norm_ops(std::vector<OpInfo>& ops) {
  ops.push_back(norm_info("rmsnorm", NormKind::kRms, "F02", "y = x / sqrt(mean(x²) + ε) · γ",
                          {reduction_output(naive_policy(),
                                            "mean of squares over d, a root and a scale: a "
                                            "reduction, judged against the naive run")},
                          {"hf-llama-rmsnorm"}, {norm_bench("rmsnorm", 1e-6)}));
  ops.push_back(norm_info(
      "rmsnorm_gemma", NormKind::kRmsGemma, "F02", "y = x / sqrt(mean(x²) + ε) · (1 + γ)",
      {reduction_output(naive_policy(),
                        "RMS reduction over d, then x·(1 + w): a reduction, judged against the "
                        "naive run")}));
  ops.push_back(norm_info(
      "layernorm", NormKind::kLayer, "F01", "y = (x − μ) / sqrt(σ² + ε) · γ + β",
      {reduction_output(naive_policy(),
                        "mean and variance over d with cancellation in x − mean: a reduction")},
      {}, {norm_bench("layernorm", 1e-5)}));
  ops.push_back(norm_info(
      "fused_add_rmsnorm", NormKind::kFusedAddRms, "F02",
      "h = x + residual (an output), then y = RMSNorm(h) · γ",
      {per_element_output("residual", ulp_policy(0, 0, kRoundingMargin),
                          "x + r is one addition, correctly rounded in f32; margin: the second "
                          "rounding to narrow"),
       reduction_output("y", naive_policy(),
                        "RMSNorm of x + r: a reduction over d, judged against the naive run")},
      {"vllm-fused-add-rmsnorm"}));
}

}  // namespace lmo::oracle
