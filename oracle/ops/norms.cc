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
  return v;
}

std::vector<OutputDecl> NormOp::outputs() const {
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
  }
  Outputs<T> out(1);
  out[0].values = std::move(y.data);
  return out;
}

std::vector<RoundingPoint> NormOp::rounding_points() const {
  if (p_.kind != NormKind::kRms) return {};
  return {{"form", {"divide", "rsqrt"}, "divide",
           "divide: x / sqrt(mean(x²) + ε) as written; rsqrt: x · (1/sqrt(·)) with the "
           "reciprocal held"},
          {"inv_rms", {}, "f32", "the reciprocal 1/sqrt(mean(x²) + ε) (form=rsqrt)"},
          {"normed", {}, "f32", "the normalized row before the weight"}};
}

template <class T>
Outputs<T> NormOp::compute(const InputSet& in, const BoundRecipe& recipe) const {
  if (p_.kind != NormKind::kRms) return compute<T>(in);  // no points: only +ftz applies
  const ref::Mat<T> x(p_.rows, p_.d, in.values<T>("x"));
  const std::vector<T> gamma = in.values<T>("gamma");
  ref::NormRounding<T> r;
  r.multiply_by_inverse = recipe.choice("form") == "rsqrt";
  r.inv_rms = point_rounding<T>(recipe, "inv_rms");
  r.normed = point_rounding<T>(recipe, "normed");
  Outputs<T> out(1);
  out[0].values = ref::rmsnorm<T>(x, gamma, T(p_.eps), r).data;
  return out;
}

namespace {

OpInfo norm_info(std::string name, NormKind kind, std::string catalog, std::string summary) {
  return {std::move(name), std::move(catalog), std::move(summary), [kind](ParamReader& r) {
            NormParams p;
            p.kind = kind;
            p.rows = r.integer("rows", 1, kMaxRows);
            p.d = r.integer("d", 1, kMaxWidth);
            p.eps = r.real("eps", 0, 1);
            return std::make_unique<NormOp>(p);
          }};
}

}  // namespace

void add_norm_ops(std::vector<OpInfo>& ops) {
  ops.push_back(norm_info("rmsnorm", NormKind::kRms, "F02", "y = x / sqrt(mean(x²) + ε) · γ"));
  ops.push_back(norm_info("rmsnorm_gemma", NormKind::kRmsGemma, "F02",
                          "y = x / sqrt(mean(x²) + ε) · (1 + γ)"));
  ops.push_back(
      norm_info("layernorm", NormKind::kLayer, "F01", "y = (x − μ) / sqrt(σ² + ε) · γ + β"));
}

}  // namespace lmo::oracle
