// The registry of the ops' records (OpInfo, oracle/core/op.h), which each family adds to
// (families.h), and what derives from it: the named recipes with the ops they describe, and a
// recipe bound to an op. Every table of the oracle that names ops is read from here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "oracle/core/kernel_entry.h"
#include "oracle/core/op.h"
#include "oracle/rules/recipe.h"
#include "reference/formats.h"

namespace lmo::oracle {

// Every op, in a fixed order.
const std::vector<OpInfo>& op_registry();
// nullptr when unknown.
const OpInfo* find_op(std::string_view name);
// The kernel entry of the op named `name` (KernelEntry::kNone when unknown).
KernelEntry kernel_entry(std::string_view name);
std::string known_op_names();

// recipe_table() with each recipe's ops, in registry order, from the records that name it.
const std::vector<NamedRecipe>& named_recipes();
// Whether named recipe n (of named_recipes()) describes the op named op_name: an every-op recipe
// describes them all.
bool describes(const NamedRecipe& n, std::string_view op_name);

// r with the op's implied points (Op::implied_points); RecipeError when r sets one otherwise.
Recipe with_implied_points(const Recipe& r, std::string_view op_name, const Op& op);
// The recipe a kernel of op (named op_name) storing format f is judged under: r with the op's
// implied points. RecipeError when r is unknown, describes other ops, or sets an implied point
// otherwise.
BoundRecipe bind_recipe(const Recipe& r, std::string_view op_name, const Op& op, ref::Format f);

}  // namespace lmo::oracle
