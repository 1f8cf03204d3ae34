// Rounding recipes ([recipes]; docs/recipes.md): which intermediate values of an op a kernel
// holds in a narrower format, and how it evaluates the op's form. The default recipe, `strict`,
// is the project's naive kernel: every operation in f32, one rounding at the store. A kernel
// that declares recipe R is judged against R simulated exactly on the same inputs (the naive
// run with rounding at R's points, Op::simulated): its error may be at most twice R's, plus
// half an ulp of the output and the policy's floor (policy.h, rule (2)), FlashAttention's rule
// made exact and generalized.
//
// Text forms (`--recipe`, a case's "recipe" field, lmoracle.check(recipe=…)):
//   NAME                        a named recipe (recipe_table())
//   NAME+ftz                    with flush-to-zero
//   NAME+fma                    with FMA contraction (reference/contraction.h)
//   NAME+trunc                  with a store that rounds toward zero (f32 → bf16 by dropping
//                               bits), the output one ulp toward zero from round-to-nearest
//   point=value,point=value     a custom recipe over strict, e.g. probs=bf16,acc=f32
//   NAME,point=value[,ftz][,fma] a named recipe with points overridden
// A format point's value is a format name or `storage` (the format the kernel stores its
// outputs in); a choice point's value is one of its choices.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "reference/formats.h"

namespace lmo::oracle {

// Bad recipe text, or a recipe that names a point the op does not have: the message lists the
// valid names (the command line turns it into exit code 2 with the field it came from).
class RecipeError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// One named intermediate value of an op.
struct RoundingPoint {
  std::string name;
  // Empty: a format point (any format, or "storage"); otherwise the values it may take.
  std::vector<std::string> choices;
  std::string strict;  // its value under `strict`
  std::string what;    // one line, for `lmoracle recipes` and errors
};

struct Recipe {
  std::string name = "strict";  // the named recipe it starts from
  std::map<std::string, std::string> points;  // overrides of the named recipe's points
  bool ftz = false;
  bool fma = false;  // products fused into the sums they feed (reference/contraction.h)
  bool trunc = false;  // the store rounds toward zero (JudgeOptions::trunc)

  // Canonical text: parse_recipe(r.text()) == r.
  std::string text() const;
  bool operator==(const Recipe&) const = default;
};

struct NamedRecipe {
  std::string name;
  // The ops it applies to, in registry order, derived from the ops' records (OpInfo::recipes);
  // empty = every op (only a recipe with every_op).
  std::vector<std::string> ops;
  std::map<std::string, std::string> points;
  std::string source;  // the implementation it describes, for the README's table
  bool every_op = false;
};

// strict, flash-attention, flash-mla, hf-llama-rmsnorm, vllm-fused-add-rmsnorm, hf-rope,
// torch-gelu, torch-gelu-tanh, torch-silu, deepseek-v3-gate, torch-mlp: their points, with `ops`
// empty (the ops' records say which ops each describes: ops/registry.h, named_recipes()).
const std::vector<NamedRecipe>& recipe_table();
// From recipe_table(); nullptr when unknown.
const NamedRecipe* find_named_recipe(std::string_view name);
std::string named_recipe_names();

// RecipeError for an unknown name, modifier or malformed point=value.
Recipe parse_recipe(std::string_view text);

// The recipe a kernel is judged under, given the case's recipe (the case file's, or --recipe)
// and the recipe its backend declares for the op's kernel entry (Backend::declared_recipe;
// docs/recipes.md, "Declared recipes"):
//   - no declaration: the case's recipe, as for every kernel before declarations existed;
//   - the case names none (strict: no name, no point, no modifier): the declared recipe;
//   - the case names one: the case's recipe, with the declared modifiers (+ftz, +fma, +trunc)
//     added. The case's points and name stand: a declaration never replaces what the case
//     asks for, it only says how this kernel rounds beyond it.
// A declaration that does not fit the op is the backend's error, found when it is bound.
Recipe judged_recipe(const Recipe& case_recipe, const std::optional<Recipe>& declared);

// A recipe bound to one op and one storage format: every point of the op with its value, ready
// for the op's simulated run. RecipeError when a point or value is not the op's (whether a named
// recipe describes the op is the registry's to say: bind_recipe, ops/registry.h).
class BoundRecipe {
 public:
  BoundRecipe() = default;  // strict, no points
  BoundRecipe(const Recipe& r, std::string_view op, const std::vector<RoundingPoint>& points,
              ref::Format storage);

  // The format a format point rounds to; nullopt where the point keeps the compute format
  // (f32: the naive run computes in it already). std::logic_error for a point the op lacks.
  std::optional<ref::Format> format(std::string_view point) const;
  // A choice point's value.
  const std::string& choice(std::string_view point) const;
  bool ftz() const { return ftz_; }
  bool fma() const { return fma_; }
  bool trunc() const { return trunc_; }
  ref::Format storage() const { return storage_; }
  // No point differs from strict, no ftz, no fma: the naive run as it always was.
  bool is_strict() const { return strict_; }
  // Every point at its strict value (ftz and fma may be on).
  bool points_strict() const { return points_strict_; }
  // Whether the op has this rounding point.
  bool has_point(std::string_view point) const { return values_.count(point) > 0; }
  // The resolved values ("storage" and f64 at a format point replaced by what they mean), for
  // telling two recipes apart on this op.
  std::string key() const;

 private:
  const std::string& value(std::string_view point) const;
  std::map<std::string, std::string, std::less<>> values_;
  ref::Format storage_ = ref::Format::f32;
  bool ftz_ = false;
  bool fma_ = false;
  bool trunc_ = false;
  bool strict_ = true;
  bool points_strict_ = true;
  std::vector<std::string> format_points_;
};

// x rounded to f (nothing when f is empty), and flushed to ±0 when ftz and the result is
// subnormal in f. T: double or a simulated format (its values are doubles).
double round_point(double x, std::optional<ref::Format> f, bool ftz);

}  // namespace lmo::oracle
