// No false alarms: correct kernels — the exact values rounded once (`ref`), the reference
// formula computed in f64 and in f32 with every operation rounded once (`ref-f64`, `ref-f32`),
// and the fast SIMD kernels on every supported target (`fast-*`): every backend of verify's
// default run — are never flagged, over at least 1000 random
// cases per op family: random op of the family, random shapes and parameters, random storage
// formats, random seeds. The parameters come from Philox (oracle/core/philox.h through InputStream), so
// the sweep is the same on every run.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/oracle_sweep.h"

namespace lmo::oracle {
namespace {

using lmo::testing::Draw;
using lmo::testing::sweep;
using nlohmann::json;

json norm_case(Draw& d) {
  json c = {{"op", d.pick<std::string>({"rmsnorm", "rmsnorm_gemma", "layernorm"})},
            {"params",
             {{"rows", d.between(1, 3)},
              {"d", d.between(1, 96)},
              {"eps", d.pick<double>({0.0, 1e-6, 1e-5, 1e-3})}}}};
  // Scales from tiny (ε dominates) to large, and a mean offset for LayerNorm's cancellation.
  c["inputs"]["x"] = {{"dist", "normal"},
                      {"mean", d.pick<double>({0.0, 0.0, 3.0, -50.0})},
                      {"std", d.log_uniform(1e-3, 30)}};
  return c;
}

json activation_case(Draw& d) {
  const std::string op =
      d.pick<std::string>({"relu", "gelu", "gelu_tanh", "silu", "reglu_gate", "geglu_gate",
                           "geglu_tanh_gate", "swiglu_gate", "softcap"});
  json c = {{"op", op}, {"params", {{"n", d.between(1, 64)}}}};
  const std::string in = op == "softcap" ? "z" : (op.find("gate") != std::string::npos ? "a" : "x");
  if (op == "softcap") c["params"]["cap"] = d.log_uniform(1, 100);
  c["inputs"][in] = {{"dist", "normal"}, {"mean", 0}, {"std", d.log_uniform(0.01, 12)}};
  return c;
}

json softmax_case(Draw& d) {
  const std::string op =
      d.pick<std::string>({"softmax", "logsumexp", "cross_entropy", "online_softmax"});
  const int64_t n = d.between(1, 200);
  json c = {{"op", op},
            {"params", {{"rows", d.between(1, 3)}, {"logit_std", d.log_uniform(0.01, 30)}}}};
  c["params"][op == "cross_entropy" ? "vocab" : "n"] = n;
  if (op == "online_softmax") c["params"]["tile"] = d.between(1, 64);
  if (op == "cross_entropy") {
    c["params"]["z_loss"] = d.pick<double>({0.0, 1e-4, 1e-2});
    c["params"]["softcap"] = d.pick<double>({0.0, 0.0, 30.0, 5.0});
  }
  return c;
}

// The mean offsets (3, −50 with std down to 1e-3) are the cases where the error of μ dominates
// after the cancellation x − μ; the fast LayerNorm carries μ as a rounded mean plus the
// deviations' residual (the corrected two-pass algorithm) for them.
TEST(NoFalseAlarms, Norms) { sweep("norms", norm_case, {}); }
TEST(NoFalseAlarms, ActivationsAndGates) { sweep("activations", activation_case, {}); }
TEST(NoFalseAlarms, SoftmaxFamily) { sweep("softmax", softmax_case, {}); }

}  // namespace
}  // namespace lmo::oracle
