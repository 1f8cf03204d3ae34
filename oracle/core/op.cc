#include "oracle/core/op.h"

#include <cmath>

#include "oracle/ops/families.h"
#include "oracle/core/op_generic.h"

namespace lmo::oracle {

void InputSet::add(std::string name, ref::Tensor t) {
  for (const auto& [n, _] : tensors_) {
    if (n == name) throw std::invalid_argument("input '" + name + "' added twice");
  }
  tensors_.emplace_back(std::move(name), std::move(t));
}

const ref::Tensor& InputSet::at(std::string_view name) const {
  for (const auto& [n, t] : tensors_) {
    if (n == name) return t;
  }
  throw std::invalid_argument("no input named '" + std::string(name) + "'");
}

std::vector<int64_t> InputSet::ints(std::string_view name) const {
  const ref::Tensor& t = at(name);
  if (ref::is_float(t.dtype())) {
    throw std::invalid_argument("input '" + std::string(name) + "' is not an integer tensor");
  }
  std::vector<int64_t> v;
  v.reserve(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(static_cast<int64_t>(t.get(i)));
  return v;
}

bool outputs_fix_their_formats(const std::vector<OutputDecl>& decls) {
  bool any = false;
  for (const OutputDecl& d : decls) {
    if (d.topk) continue;
    if (!d.format) return false;
    any = true;
  }
  return any;
}

const std::vector<OpInfo>& op_registry() {
  static const std::vector<OpInfo> ops = [] {
    std::vector<OpInfo> v;
    add_norm_ops(v);
    add_activation_ops(v);
    add_softmax_ops(v);
    add_attention_ops(v);
    add_paged_attention_ops(v);
    add_mla_ops(v);
    add_paged_mla_ops(v);
    add_moe_ops(v);
    add_positional_ops(v);
    add_rope_ops(v);
    add_ffn_ops(v);
    add_block_ops(v);
    add_moe_balance_ops(v);
    add_moe_layer_ops(v);
    add_fp8_ops(v);
    return v;
  }();
  return ops;
}

const OpInfo* find_op(std::string_view name) {
  for (const OpInfo& o : op_registry()) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

KernelEntry kernel_entry(std::string_view name) {
  const OpInfo* o = find_op(name);
  return o ? o->kernel : KernelEntry::kNone;
}

std::string known_op_names() {
  std::string s;
  for (const OpInfo& o : op_registry()) s += (s.empty() ? "" : ", ") + o.name;
  return s;
}

Recipe with_implied_points(const Recipe& r, std::string_view op_name, const Op& op) {
  Recipe with = r;
  for (const auto& [point, value] : op.implied_points()) {
    const auto it = r.points.find(point);
    if (it != r.points.end() && it->second != value) {
      throw RecipeError("op " + std::string(op_name) + ": its parameters fix " + point + "=" +
                        value + " (a literal activation: literal: true), the recipe sets " +
                        point + "=" + it->second);
    }
    with.points[point] = value;
  }
  return with;
}

BoundRecipe bind_recipe(const Recipe& r, std::string_view op_name, const Op& op, ref::Format f) {
  return BoundRecipe(with_implied_points(r, op_name, op), op_name, op.rounding_points(), f);
}

void flush_outputs(Outputs<double>& o, const BoundRecipe& r) {
  if (!r.ftz()) return;
  for (OutputValues<double>& out : o) {
    // Only the flush: the values stay unrounded (the judge's bound is on the error before the
    // store).
    for (double& v : out.values) {
      if (round_point(v, r.storage(), true) == 0) v = std::copysign(0.0, v);
    }
  }
}

}  // namespace lmo::oracle
