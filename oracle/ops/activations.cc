#include "oracle/ops/activations.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>

#include "oracle/ops/families.h"
#include "oracle/ops/limits.h"
#include "reference/activations.h"
#include "reference/ball.h"
#include "reference/ball_rounding.h"
#include "reference/ffn.h"
#include "reference/parallel.h"
#include "reference/sigmoid_balls.h"
#include "reference/softcap_balls.h"
#include "reference/softmax.h"

namespace lmo::oracle {

std::vector<InputDecl> ElementwiseOp::inputs() const {
  switch (p_.kind) {
    case ElementwiseKind::kActivation:
      // σ = 3 reaches both tails (GELU's negative tail is where unstable forms fail).
      return {{"x", {p_.n}, Dist::kNormal, 0, 3}};
    case ElementwiseKind::kGluGate:
      return {{"a", {p_.n}, Dist::kNormal, 0, 3}, {"b", {p_.n}, Dist::kNormal, 0, 1}};
    case ElementwiseKind::kSoftcap:
      // Logits up to about twice the cap: the saturating part of tanh.
      return {{"z", {p_.n}, Dist::kNormal, 0, p_.cap}};
  }
  return {};
}

std::vector<OutputDecl> ElementwiseOp::outputs() const { return {{"y", {p_.n}}}; }

namespace {

// f(x.subspan(i, len)), the reference's elementwise function on a block, over blocks of 4096
// elements spread over the threads (ref::parallel_for): each block writes its own slots, so the
// bytes do not depend on the thread count. The reference functions stay serial, as the FFNs and
// the loss call them inside their own parallel rows.
template <class T, class F>
std::vector<T> in_blocks(size_t n, F f) {
  constexpr size_t kBlock = 4096;
  std::vector<T> y(n);
  ref::parallel_for(static_cast<int64_t>((n + kBlock - 1) / kBlock), [&](int64_t b) {
    const size_t i = static_cast<size_t>(b) * kBlock, len = std::min(kBlock, n - i);
    const std::vector<T> part = f(i, len);
    std::copy(part.begin(), part.end(), y.begin() + static_cast<std::ptrdiff_t>(i));
  });
  return y;
}

// act(x) or the gate act(a)·b, blockwise (in_blocks).
template <class T>
std::vector<T> activations(ref::Activation act, const std::vector<T>& x, const std::vector<T>* b,
                           bool literal) {
  return in_blocks<T>(x.size(), [&](size_t i, size_t len) {
    const std::span<const T> xs(x.data() + i, len);
    if (!b) return ref::activate<T>(act, xs, literal);
    return ref::glu_gate<T>(xs, std::span<const T>(b->data() + i, len), act, literal);
  });
}

}  // namespace

std::optional<Outputs<ref::Ball>> ElementwiseOp::enclosure(const InputSet& in) const {
  Outputs<ref::Ball> out(1);
  if (p_.kind == ElementwiseKind::kSoftcap) {
    const std::vector<double> z = in.values<double>("z");
    out[0].values = in_blocks<ref::Ball>(z.size(), [&](size_t i, size_t len) {
      std::vector<ref::Ball> y(len);
      ref::softcap_balls(std::span<const double>(z.data() + i, len), p_.cap, y, {});
      return y;
    });
    return out;
  }
  // SiLU x·σ(x), GELU-tanh x·σ(2u) and GELU (x/2)·erfc(−x/√2) in their stable forms
  // (activations.h), the sigmoids or erfc batched (reference/sigmoid_balls.h, ball.h's
  // erfc_many). Not the literal forms: MPFR evaluates those as printed, and where they cancel
  // its value strays from the exact one further than a tight ball reaches.
  const ref::Activation act = p_.act;
  if (act == ref::Activation::kReLU || p_.literal) return GenericOp<ElementwiseOp>::enclosure(in);
  const bool gate = p_.kind == ElementwiseKind::kGluGate;
  const std::vector<ref::Ball> x = in.values<ref::Ball>(gate ? "a" : "x");
  const std::vector<ref::Ball> b = gate ? in.values<ref::Ball>("b") : std::vector<ref::Ball>{};
  static const ref::Ball sqrt2 = ref::from_mp<ref::Ball>(sqrt(ref::mp(2)));  // as gelu's
  out[0].values = in_blocks<ref::Ball>(x.size(), [&](size_t i, size_t len) {
    std::vector<ref::Ball> s(len);
    for (size_t j = 0; j < len; ++j) {
      const ref::Ball& v = x[i + j];
      s[j] = act == ref::Activation::kSiLU       ? v
             : act == ref::Activation::kGELUTanh ? ref::Ball(2.0) * ref::gelu_tanh_inner(v)
                                                 : -(v / sqrt2);
    }
    if (act == ref::Activation::kGELU) {
      ref::erfc_many(s);
    } else {
      ref::sigmoid_balls(s);
    }
    for (size_t j = 0; j < len; ++j) {
      const ref::Ball& v = x[i + j];
      s[j] = (act == ref::Activation::kGELU ? v / ref::Ball(2.0) : v) * s[j];
      if (gate) s[j] = s[j] * b[i + j];
    }
    return s;
  });
  return out;
}

template <class T>
Outputs<T> ElementwiseOp::compute(const InputSet& in) const {
  Outputs<T> out(1);
  std::vector<T>& y = out[0].values;
  switch (p_.kind) {
    case ElementwiseKind::kActivation: {
      const std::vector<T> x = in.values<T>("x");
      y = activations<T>(p_.act, x, nullptr, p_.literal);
      break;
    }
    case ElementwiseKind::kGluGate: {
      const std::vector<T> a = in.values<T>("a");
      const std::vector<T> b = in.values<T>("b");
      y = activations<T>(p_.act, a, &b, p_.literal);
      break;
    }
    case ElementwiseKind::kSoftcap: {
      const std::vector<T> z = in.values<T>("z");
      const T cap(p_.cap);
      y = in_blocks<T>(z.size(), [&](size_t i, size_t len) {
        return ref::softcap<T>(std::span<const T>(z.data() + i, len), cap);
      });
      break;
    }
  }
  return out;
}

namespace {

// Condition number of the inner function of the stable evaluations in reference/activations.h
// at the argument a kernel forms from x: erfc at −x/√2 for GELU, κ = |a·erfc'(a)/erfc(a)| =
// 2|a|e^{−a²}/(√π erfc(a)); sigmoid at s = 2√(2/π)(x + 0.044715x³) for GELU-tanh,
// κ = |s|·(1 − σ(s)). Other activations take x itself (exact): κ = 0. On mp or on balls; 0 where
// erfc underflows (x = −∞).
template <class T>
T condition_formula(ref::Activation act, const T& x) {
  using std::abs;
  if (act == ref::Activation::kGELU) {
    const T a = -x / sqrt(T(2));
    const T e = erfc(a);
    if (e == T(0)) return T(0);
    return abs(a) * T(2) * exp(-a * a) / (sqrt(T(boost::math::constants::pi<ref::mp>())) * e);
  }
  const T s = T(2) * ref::gelu_tanh_inner(x);
  return abs(s) * (T(1) - ref::sigmoid(s));
}

// The formula on balls first. Where its interval decides a double's rounding, that double is the
// mp formula's: the mp value lies in the ball (its 167-bit roundings are far inside the
// double-double radius that decides_rounding widens), as for every certified value
// (oracle/core/certified.h). A few double-double operations instead of MPFR's erfc, which costs
// up to a millisecond far from 0.
std::optional<double> condition_by_balls(ref::Activation act, const ref::mp& x) {
  const ref::Ball b(x);
  // |x| ≤ 36: erfc(−x/√2) stays above 2^-950, inside ball.cc's own erfc; never a comparison or
  // a division with a ball around 0.
  if (!b.exact() || !(std::fabs(b.hi()) <= 36)) return std::nullopt;
  const ref::Ball k = condition_formula(act, b);
  if (!ref::decides_rounding(k, {})) return std::nullopt;  // f64 only
  return std::bit_cast<double>(ref::decided_bits(k, ref::Format::f64));
}

}  // namespace

double activation_condition(ref::Activation act, const ref::mp& x) {
  if (act != ref::Activation::kGELU && act != ref::Activation::kGELUTanh) return 0;
  if (const std::optional<double> k = condition_by_balls(act, x)) return *k;
  return static_cast<double>(condition_formula(act, x));
}

namespace {

OpInfo elementwise_info(std::string name, ElementwiseKind kind, ref::Activation act,
                        std::string catalog, std::string summary, Policy policy, std::string why,
                        std::vector<std::string> recipes = {}, std::vector<BenchShape> bench = {}) {
  return {std::move(name),
          std::move(catalog),
          std::move(summary),
          [kind, act](ParamReader& r) {
            ElementwiseParams p;
            p.kind = kind;
            p.act = act;
            p.n = r.integer("n", 1, int64_t{1} << 28);
            if (kind == ElementwiseKind::kSoftcap) {
              p.cap = r.real("cap", 1e-3, 1e6);
            } else if (act != ref::Activation::kReLU) {
              p.literal = r.flag("literal", false);
            }
            return std::make_unique<ElementwiseOp>(p);
          },
          KernelEntry::kElementwise,
          {per_element_output(policy, std::move(why))},
          std::move(recipes),
          std::move(bench)};
}

// A bench shape of n elements (a row is one element); extra parameters and input overrides.
BenchShape elementwise_bench(std::string name, nlohmann::json params = nlohmann::json::object(),
                             nlohmann::json inputs = nlohmann::json::object()) {
  return {std::move(name), 1,
          [params](int64_t n) {
            nlohmann::json p = params;
            p["n"] = n;
            return p;
          },
          std::move(inputs)};
}

}  // namespace

void ElementwiseOp::annotate_exact(const InputSet& in, Outputs<ref::mp>& out) const {
  if (p_.kind != ElementwiseKind::kSoftcap &&
      (p_.act == ref::Activation::kGELU || p_.act == ref::Activation::kGELUTanh)) {
    const std::vector<ref::mp> x = in.values<ref::mp>(p_.kind == ElementwiseKind::kGluGate ? "a" : "x");
    std::vector<double>& c = out[0].condition;
    c.resize(x.size());
    ref::parallel_for(static_cast<int64_t>(x.size()), [&](int64_t i) {
      c[static_cast<size_t>(i)] = activation_condition(p_.act, x[static_cast<size_t>(i)]);
    });
  }
}

namespace {

// The accuracy assumed of a kernel's erf, tanh and exp, in ulps: PyTorch's CPU kernels use
// Sleef's u10 functions (documented maximum error 1.0 ulp); glibc's erff, tanhf and expf are
// listed at up to 2 ulp in its libm-test-ulps. The larger of the two.
constexpr double kLibmUlps = 2;

// PyTorch's CPU GELU does not call a libm erf: ATen's vectorized kernel evaluates Abramowitz &
// Stegun 7.1.26, erf(z) ≈ 1 − (a₁t + … + a₅t⁵)·e^(−z²), t = 1/(1 + pz), whose documented
// maximum absolute error is 1.5e-7, in f32: about eight more roundings, each of a value of
// magnitude at most 1 (t, the polynomial's terms, e^(−z²), the difference), so at most 8u more.
// In units of u = 2^-24: 1.5e-7·2^24 + 8. An absolute bound, not a relative one: near erf = 0
// (x → 0) it is many ulps of erf, which is where F.gelu's outputs show it.
constexpr double kErfAbsError = 1.5e-7 * 16777216.0 + 8;

// The activations, and the GLU gates over them, that have a literal form besides the stable one.
bool has_form(const ElementwiseParams& p) {
  return p.kind != ElementwiseKind::kSoftcap &&
         (p.act == ref::Activation::kGELU || p.act == ref::Activation::kGELUTanh ||
          p.act == ref::Activation::kSiLU);
}

}  // namespace

double literal_error_scale(ref::Activation act, double x, double y) {
  // An error of L ulps in a value v is at most 2L·u·|v| (ulp(v) ≤ 2u|v|); a relative error ρ of
  // an argument a becomes |f'(a)·a|·ρ in f(a). Each term below is one rounding's magnitude
  // carried to y, in units of u.
  const double half_x = std::fabs(x) / 2, l2 = 2 * kLibmUlps;
  if (act == ref::Activation::kGELU) {
    // x/2·(1 + erf(t)), t = x/√2: √2 and the quotient (2 roundings of t, times erf'(t)·t), erf
    // (L ulps), 1 + erf (½ ulp, u), the product (u·|y|); x/2 is exact.
    const double t = x / std::sqrt(2.0), e = std::erf(t);
    const double derf = 2 / std::sqrt(M_PI) * std::exp(-t * t) * std::fabs(t);
    return half_x * (2 * derf + std::max(l2 * std::fabs(e), kErfAbsError) + std::fabs(1 + e)) +
           std::fabs(y);
  }
  if (act == ref::Activation::kGELUTanh) {
    // x/2·(1 + tanh(u)), u = √(2/π)(x + 0.044715x³): two rounded constants and five operations
    // (x and 0.044715x³ have the same sign: no cancellation), 7 roundings of u times
    // tanh'(u)·u; tanh (L ulps); 1 + tanh; the product.
    const double u = std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x), th = std::tanh(u);
    return half_x * (7 * (1 - th * th) * std::fabs(u) + l2 * std::fabs(th) + std::fabs(1 + th)) +
           std::fabs(y);
  }
  // x·(1/(1 + e^−x)): exp (L ulps, condition e^−x/(1 + e^−x) ≤ 1 through 1 + e^−x), the sum, the
  // reciprocal and the product (u each), relative to y; and where the sigmoid is subnormal in
  // f32 (x < −87.3) its absolute error ½·2^−149, times |x|, which is 2^−125·|x| in units of u.
  return (l2 + 3) * std::fabs(y) + std::ldexp(std::fabs(x), -125);
}

std::vector<RoundingPoint> ElementwiseOp::rounding_points() const {
  if (!has_form(p_)) return {};
  return {{"form", {"stable", "literal"}, "stable",
           "stable: the evaluation without cancellation (reference/activations.h); literal: the "
           "printed formula (1 + erf, 1 + tanh, 1/(1 + e^−x))"}};
}

std::map<std::string, std::string> ElementwiseOp::implied_points() const {
  if (!has_form(p_) || !p_.literal) return {};
  return {{"form", "literal"}};
}

template <class T>
Outputs<T> ElementwiseOp::compute(const InputSet& in, const BoundRecipe& recipe) const {
  if (!has_form(p_)) return compute<T>(in);  // no points: only +ftz and +fma apply
  // The recipe's form alone: bound through bind_recipe it is literal when the case is, and the
  // diagnosis's candidates simulate the form they name.
  const bool literal = recipe.choice("form") == "literal";
  const bool gate = p_.kind == ElementwiseKind::kGluGate;
  const std::vector<T> x = in.values<T>(gate ? "a" : "x");
  Outputs<T> out(1);
  const std::vector<T> act = activations<T>(p_.act, x, nullptr, literal);
  const std::vector<T> b = gate ? in.values<T>("b") : std::vector<T>{};
  out[0].values = gate ? activations<T>(p_.act, x, &b, literal) : act;
  if (literal) {
    // A gate act(a)·b carries the activation's errors times |b|, and rounds the product (u·|y|).
    for (size_t i = 0; i < x.size(); ++i) {
      const double s = literal_error_scale(p_.act, ref::to_double(x[i]), ref::to_double(act[i]));
      const double y = ref::to_double(out[0].values[i]);
      out[0].error_scale.push_back(
          gate ? s * std::fabs(ref::to_double(b[i])) + std::fabs(y) : s);
    }
  }
  return out;
}

// The records' ulp constants: wide k in f32 ulps (the compute precision of fast/ and gpu/), the
// ulps of the functions' own evaluation plus ½ ulp per rounding after them; narrow k 0, a kernel
// computing in f32 rounds once at the store (policy.h). Where the inner function is evaluated at
// a rounded argument, the argument's relative error (the last constant, in u = 2^-24) is
// amplified by the function's condition number per element (Policy::arg_error): ≈ x² ulps for
// GELU's tail, which no constant k covers.
void add_activation_ops(std::vector<OpInfo>& ops) {
  using ref::Activation;
  constexpr ElementwiseKind kAct = ElementwiseKind::kActivation;
  constexpr ElementwiseKind kGlu = ElementwiseKind::kGluGate;
  constexpr double kMargin = kRoundingMargin;
  ops.push_back(elementwise_info(
      "relu", kAct, Activation::kReLU, "F06", "max(x, 0)", ulp_policy(0, 0),
      "max(x, 0) is an input value or 0: only the store rounds, exactly as the reference does"));
  ops.push_back(elementwise_info(
      "gelu", kAct, Activation::kGELU, "F06", "x·Φ(x), exact", ulp_policy(4, 0, kMargin, 2),
      "f32: erfc (≤2 ulp) of −x/√2 (√2 and the quotient: 2u, times erfc's κ), x/2·(·); narrow: "
      "once",
      {"torch-gelu"}));
  ops.push_back(elementwise_info(
      "gelu_tanh", kAct, Activation::kGELUTanh, "F06", "x/2·(1 + tanh(√(2/π)(x + 0.044715x³)))",
      ulp_policy(4, 0, kMargin, 7),
      "f32: sigmoid (≤3 ulp) of 2√(2/π)(x + 0.044715x³) (7 roundings: 7u, times κ), x·(·)",
      {"torch-gelu-tanh"}));
  ops.push_back(elementwise_info(
      "silu", kAct, Activation::kSiLU, "F06", "x·sigmoid(x)", ulp_policy(3, 0, kMargin),
      "f32: exp (≤2 ulp), 1 + e^−x (condition ≤1), x/(·) (½ ulp); narrow: rounded once",
      {"torch-silu"}));
  ops.push_back(elementwise_info(
      "reglu_gate", kGlu, Activation::kReLU, "F05", "relu(a) ⊙ b", ulp_policy(0, 0, kMargin),
      "relu(a)·b is one product, correctly rounded in f32; margin: the second rounding to "
      "narrow",
      {}, {elementwise_bench("reglu_gate")}));
  ops.push_back(elementwise_info(
      "geglu_gate", kGlu, Activation::kGELU, "F05", "gelu(a) ⊙ b", ulp_policy(5, 0, kMargin, 2),
      "f32: gelu(a) (≤4 ulp, argument 2u) times b (½ ulp); narrow: rounded once", {"torch-gelu"},
      {elementwise_bench("geglu_gate")}));
  ops.push_back(elementwise_info(
      "geglu_tanh_gate", kGlu, Activation::kGELUTanh, "F05", "gelu_tanh(a) ⊙ b (Gemma)",
      ulp_policy(5, 0, kMargin, 7),
      "f32: gelu_tanh(a) (≤4 ulp, argument 7u) times b (½ ulp); narrow: rounded once",
      {"torch-gelu-tanh"}, {elementwise_bench("geglu_tanh_gate")}));
  ops.push_back(elementwise_info("swiglu_gate", kGlu, Activation::kSiLU, "F05", "silu(a) ⊙ b",
                                 ulp_policy(4, 0, kMargin),
                                 "f32: silu(a) (≤3 ulp) times b (½ ulp); narrow: rounded once",
                                 {"torch-silu"}, {elementwise_bench("swiglu_gate")}));
  ops.push_back(elementwise_info(
      "softcap", ElementwiseKind::kSoftcap, Activation::kReLU, "F14", "cap·tanh(z/cap)",
      ulp_policy(3, 0, kMargin),
      "f32: z/cap (½ ulp), tanh (≤2 ulp, condition ≤1), ×cap (½ ulp); narrow: rounded once", {},
      // Capping at 30. softcap: inputs in [-2, 2), where the kernel skips the exponential (every
      // |z| of a vector below 0.625·cap); softcap_wide: inputs in [-60, 60) (±2·cap), where nearly
      // every vector takes it, the cost of capping real logits.
      {elementwise_bench("softcap", {{"cap", 30.0}},
                         {{"z", {{"dist", "uniform"}, {"lo", -2.0}, {"hi", 2.0}}}}),
       elementwise_bench("softcap_wide", {{"cap", 30.0}},
                         {{"z", {{"dist", "uniform"}, {"lo", -60.0}, {"hi", 60.0}}}})}));
}

}  // namespace lmo::oracle
