#include "oracle/ops/softmax.h"

#include <optional>

#include "oracle/ops/families.h"
#include "oracle/ops/limits.h"
#include "reference/attention_online.h"
#include "reference/cross_entropy_enclosure.h"
#include "reference/parallel.h"
#include "reference/softmax.h"

namespace lmo::oracle {

std::vector<InputDecl> SoftmaxOp::inputs() const {
  std::vector<InputDecl> v = {{"z", {p_.rows, p_.n}, Dist::kNormal, 0, p_.scale}};
  if (p_.kind == SoftmaxKind::kCrossEntropy) {
    v.push_back({"target", {p_.rows}, Dist::kUniformInt, 0, static_cast<double>(p_.n),
                 ref::DType::i64});
    v.back().bounded = true;  // a class index: below the vocabulary
  }
  return v;
}

std::vector<OutputDecl> SoftmaxOp::outputs() const {
  switch (p_.kind) {
    case SoftmaxKind::kSoftmax:
    case SoftmaxKind::kOnline:
      return {{"p", {p_.rows, p_.n}}};
    case SoftmaxKind::kLogsumexp:
      return {{"lse", {p_.rows}}};
    case SoftmaxKind::kCrossEntropy:
      return {{"loss", {p_.rows}}, {"logz", {p_.rows}}, {"grad", {p_.rows, p_.n}}};
  }
  return {};
}

std::vector<RoundingPoint> SoftmaxOp::rounding_points() const {
  if (p_.kind == SoftmaxKind::kOnline) return {};
  return {{"exps", {}, "f32",
           "each e^(z−m) (cross_entropy: also the gradient's probabilities)"},
          {"sum", {}, "f32", "the running Σ e^(z−m), after each addition"}};
}

template <class T>
Outputs<T> SoftmaxOp::compute(const InputSet& in, const BoundRecipe& recipe) const {
  if (p_.kind == SoftmaxKind::kOnline) return compute<T>(in);  // no points: only +ftz applies
  ref::SoftmaxRounding<T> r;
  r.exps = point_rounding<T>(recipe, "exps");
  r.sum = point_rounding<T>(recipe, "sum");
  return rows<T>(in, r);
}

template <class T>
Outputs<T> SoftmaxOp::compute(const InputSet& in) const {
  return rows<T>(in, {});
}

template <class T>
Outputs<T> SoftmaxOp::rows(const InputSet& in, const ref::SoftmaxRounding<T>& rounding) const {
  const std::vector<T> z = in.values<T>("z");
  const auto row = [&](int64_t r) {
    return std::span<const T>(z).subspan(static_cast<size_t>(r * p_.n), static_cast<size_t>(p_.n));
  };
  const auto put = [&](std::vector<T>& dst, int64_t r, const std::vector<T>& src) {
    std::copy(src.begin(), src.end(), dst.begin() + r * p_.n);
  };
  Outputs<T> out(outputs().size());
  switch (p_.kind) {
    case SoftmaxKind::kSoftmax:
    case SoftmaxKind::kOnline:
      out[0].values.resize(z.size());
      ref::parallel_for(p_.rows, [&](int64_t r) {
        put(out[0].values, r,
            p_.kind == SoftmaxKind::kSoftmax ? ref::softmax<T>(row(r), true, rounding)
                                             : ref::online_softmax<T>(row(r), p_.tile));
      });
      break;
    case SoftmaxKind::kLogsumexp:
      out[0].values.resize(static_cast<size_t>(p_.rows));
      ref::parallel_for(p_.rows, [&](int64_t r) {
        out[0].values[static_cast<size_t>(r)] = ref::logsumexp<T>(row(r), true, rounding);
      });
      break;
    case SoftmaxKind::kCrossEntropy: {
      const std::vector<int64_t> target = in.ints("target");
      out[0].values.resize(static_cast<size_t>(p_.rows));
      out[1].values.resize(static_cast<size_t>(p_.rows));
      out[2].values.resize(z.size());
      const std::optional<T> cap = p_.cap > 0 ? std::optional<T>(T(p_.cap)) : std::nullopt;
      ref::parallel_for(p_.rows, [&](int64_t r) {
        const ref::LossRow<T> l = ref::softmax_cross_entropy<T>(
            row(r), target[static_cast<size_t>(r)], T(p_.lambda), cap, true, rounding);
        out[0].values[static_cast<size_t>(r)] = l.loss;
        out[1].values[static_cast<size_t>(r)] = l.log_z;
        put(out[2].values, r, l.dlogits);
      });
      break;
    }
  }
  return out;
}

std::optional<Outputs<ref::Ball>> SoftmaxOp::enclosure(const InputSet& in) const {
  if (p_.kind == SoftmaxKind::kCrossEntropy) {
    std::optional<ref::LossEnclosure> e = ref::cross_entropy_enclosure(
        in.values<double>("z"), in.ints("target"), p_.rows, p_.n, p_.lambda, p_.cap);
    if (e) {
      Outputs<ref::Ball> out(3);
      out[0].values = std::move(e->loss);
      out[1].values = std::move(e->logz);
      out[2].values = std::move(e->grad);
      return out;
    }
  }
  return GenericOp<SoftmaxOp>::enclosure(in);
}

namespace {

OpInfo softmax_info(std::string name, SoftmaxKind kind, std::string catalog, std::string summary,
                    std::vector<OutputPolicy> policies, std::vector<BenchShape> bench = {}) {
  return {std::move(name),
          std::move(catalog),
          std::move(summary),
          [kind](ParamReader& r) {
            SoftmaxParams p;
            p.kind = kind;
            p.rows = r.integer("rows", 1, kMaxRows);
            p.n = r.integer(kind == SoftmaxKind::kCrossEntropy ? "vocab" : "n", 1, kMaxWidth);
            p.scale = r.real("logit_std", 1e-3, 1e3, 2.0);
            if (kind == SoftmaxKind::kCrossEntropy) {
              p.lambda = r.real("z_loss", 0, 1, 0.0);
              p.cap = r.real("softcap", 0, 1e6, 0.0);
            }
            if (kind == SoftmaxKind::kOnline) p.tile = r.integer("tile", 1, kMaxWidth);
            return std::make_unique<SoftmaxOp>(p);
          },
          KernelEntry::kSoftmax,
          std::move(policies),
          {},
          std::move(bench)};
}

}  // namespace

void add_softmax_ops(std::vector<OpInfo>& ops) {
  ops.push_back(
      softmax_info("softmax", SoftmaxKind::kSoftmax, "F12", "e^(z−m) / Σ e^(z−m)",
                   {reduction_output(naive_policy(),
                                     "exp, a row sum and a division: a reduction over the "
                                     "row")},
                   {{"softmax", 32768, [](int64_t rows) {
                       return nlohmann::json{{"rows", rows}, {"n", 32768}};
                     }}}));
  ops.push_back(softmax_info(
      "logsumexp", SoftmaxKind::kLogsumexp, "F12", "m + log Σ e^(z−m)",
      {reduction_output(naive_policy(), "m + log Σ e^(z−m): a reduction over the row")}));
  ops.push_back(softmax_info(
      "cross_entropy", SoftmaxKind::kCrossEntropy, "F12, F13, F14",
      "fused loss, log Z and ∂loss/∂z; z_loss λ, optional softcap",
      {reduction_output("loss", naive_policy(), "−z_t + log Z: log Z is a reduction over the row"),
       reduction_output("logz", naive_policy(), "log Σ e^z: a reduction over the row"),
       reduction_output("grad", naive_policy(),
                        "p_j − [j = t] (+ z-loss term): p depends on the row sum, a reduction")},
      // Llama 3's vocabulary with z-loss 1e-4 (PaLM) and Gemma 2's final soft-cap 30: the fused
      // pass with every term switched on.
      {{"cross_entropy", 128256, [](int64_t rows) {
          return nlohmann::json{
              {"rows", rows}, {"vocab", 128256}, {"z_loss", 1e-4}, {"softcap", 30.0}};
        }}}));
  ops.push_back(softmax_info("online_softmax", SoftmaxKind::kOnline, "F17",
                             "softmax by tiles with a running max and rescaled sums",
                             {reduction_output(naive_policy(),
                                               "tiled running max and rescaled partial sums: a "
                                               "reduction in another order than the naive")}));
}

}  // namespace lmo::oracle
