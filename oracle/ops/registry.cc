#include "oracle/ops/registry.h"

#include <algorithm>
#include <stdexcept>

#include "oracle/ops/families.h"

namespace lmo::oracle {
namespace {

// The recipes with the ops whose records name them, in registry order. A record naming an
// unknown recipe, or a recipe (other than an every-op one) that no record names, is a mistake
// in the records, caught the first time the recipes are read.
std::vector<NamedRecipe> with_their_ops(std::vector<NamedRecipe> recipes) {
  for (const OpInfo& o : op_registry()) {
    for (const std::string& name : o.recipes) {
      auto r = std::find_if(recipes.begin(), recipes.end(),
                            [&](const NamedRecipe& x) { return x.name == name; });
      if (r == recipes.end() || r->every_op) {
        throw std::logic_error("op '" + o.name + "' names recipe '" + name +
                               "', which is not a recipe of particular ops");
      }
      r->ops.push_back(o.name);
    }
  }
  for (const NamedRecipe& r : recipes) {
    if (!r.every_op && r.ops.empty()) {
      throw std::logic_error("recipe '" + r.name + "' is named by no op's record");
    }
  }
  return recipes;
}

}  // namespace

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
  for (const NamedRecipe& n : named_recipes()) {
    if (n.name != r.name) continue;
    if (!describes(n, op_name)) {
      std::string ops;
      for (const std::string& o : n.ops) ops += (ops.empty() ? "" : ", ") + o;
      throw RecipeError("recipe '" + r.name + "' describes " + ops + ", not " +
                        std::string(op_name));
    }
  }
  return BoundRecipe(with_implied_points(r, op_name, op), op_name, op.rounding_points(), f);
}

const std::vector<NamedRecipe>& named_recipes() {
  static const std::vector<NamedRecipe> recipes = with_their_ops(recipe_table());
  return recipes;
}

bool describes(const NamedRecipe& n, std::string_view op_name) {
  return n.ops.empty() || std::find(n.ops.begin(), n.ops.end(), op_name) != n.ops.end();
}

}  // namespace lmo::oracle
