#include "oracle/ops/moe_balance.h"

#include <span>

#include "oracle/ops/families.h"
#include "oracle/ops/limits.h"
#include "reference/moe.h"

namespace lmo::oracle {

std::vector<InputDecl> AuxFreeUpdateOp::inputs() const {
  return {{"bias", {p_.experts}, Dist::kNormal, 0, p_.bias_std},
          {"load",
           {p_.experts},
           Dist::kUniformInt,
           0,
           static_cast<double>(p_.max_load),
           ref::DType::i64}};
}

std::vector<OutputDecl> AuxFreeUpdateOp::outputs() const { return {{"bias", {p_.experts}}}; }

template <class T>
Outputs<T> AuxFreeUpdateOp::compute(const InputSet& in) const {
  const std::vector<T> c = in.values<T>("bias");
  const std::vector<int64_t> load = in.ints("load");
  Outputs<T> out(1);
  out[0].values = ref::update_balance_bias<T>(std::span<const T>(c), std::span<const int64_t>(load),
                                              ref::from_mp<T>(ref::mp(p_.gamma)));
  return out;
}

void AuxFreeUpdateOp::annotate_exact(const InputSet& in, Outputs<ref::mp>& out) const {
  const std::vector<ref::mp> c = in.values<ref::mp>("bias");
  const ref::mp gamma(p_.gamma);
  out[0].condition.reserve(c.size());
  for (size_t i = 0; i < c.size(); ++i) {
    const ref::mp& y = out[0].values[i];
    // y = c_i ± γ: d y / d γ · γ / y; unchanged elements (and an exact 0, which the judge skips)
    // carry no γ.
    const bool moved = y != c[i] && y != 0;
    out[0].condition.push_back(moved ? static_cast<double>(gamma / abs(y)) : 0.0);
  }
}

void add_moe_balance_ops(std::vector<OpInfo>& ops) {
  ops.push_back({"aux_free_update",
                 "F22",
                 "c_i ← c_i + γ·sign(mean load − load_i): one auxiliary-loss-free balancing step",
                 [](ParamReader& r) {
                   AuxFreeParams p;
                   p.experts = r.integer("experts", 1, kMaxWidth);
                   p.gamma = r.real("gamma", 1e-9, 1);
                   p.max_load = r.integer("max_load", 1, int64_t{1} << 40);
                   p.bias_std = r.real("bias_std", 1e-6, 10, 0.05);
                   return std::make_unique<AuxFreeUpdateOp>(p);
                 },
                 KernelEntry::kAuxFreeUpdate,
                 {per_element_output(ulp_policy(0, 0, kRoundingMargin, 1),
                                     "c ± γ: one sum, rounded once; the f32 constant γ is off by "
                                     "u, times κ = |γ|/|c ± γ|")}});
}

}  // namespace lmo::oracle
