// An op of the oracle: one formula of the catalog with its parameters bound (from a case's
// "params"), able to say which inputs it reads and outputs it writes, and to evaluate itself
// exactly (mp) and as a naive kernel in a simulated compute format. Backends (backend.h) and the
// verify driver (verify.h) see ops only through this interface.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "oracle/core/kernel_entry.h"
#include "oracle/core/params.h"
#include "oracle/core/topk_groups.h"
#include "oracle/rules/policy.h"
#include "oracle/rules/recipe.h"
#include "reference/ball.h"
#include "reference/formats.h"
#include "reference/number_types.h"
#include "reference/tensor.h"

namespace lmo::oracle {

enum class Dist : uint8_t { kNormal, kUniform, kUniformInt };

class InputSet;

// One input tensor: its name (the Philox stream is keyed by it), shape and distribution.
struct InputDecl {
  InputDecl(std::string n, std::vector<int64_t> s, Dist d, double lo_or_mean, double hi_or_std,
            std::optional<ref::DType> fixed = std::nullopt)
      : name(std::move(n)), shape(std::move(s)), dist(d), a(lo_or_mean), b(hi_or_std),
        dtype(fixed) {}
  std::string name;
  std::vector<int64_t> shape;
  Dist dist = Dist::kNormal;
  double a = 0, b = 1;  // kNormal: mean, stddev; kUniform: [a, b); kUniformInt: [a, b)
  // Integer inputs (targets, positions) have a fixed dtype; real inputs take the case's storage
  // format unless they fix theirs (a RoPE cos/sin table kept in f32).
  std::optional<ref::DType> dtype;
  // A derived input (a RoPE cos/sin table): its values are a function of the inputs declared
  // before it, written into the allocated tensor by this function instead of a Philox draw (dist,
  // a and b are unused). It is not random, so a case cannot override its distribution.
  std::function<void(const InputSet& earlier, ref::Tensor& t)> computed;
  // An integer input whose range [a, b) is its domain, not only what the generator draws
  // (positions within max_position, token ids below the vocabulary, targets below n): values a
  // user supplies outside it are refused (user_ref.h) instead of silently computed.
  bool bounded = false;
};

// One output tensor.
struct OutputDecl {
  OutputDecl(std::string n, std::vector<int64_t> s, int64_t group_size = 0)
      : name(std::move(n)), shape(std::move(s)), group(group_size) {}
  std::string name;
  std::vector<int64_t> shape;
  // Naive-relative policy: number of consecutive elements judged as one group, each group
  // against its own max|naive − exact|; 0 = the whole tensor is one group (the FlashAttention
  // rule as published). Use groups only where their scales differ by orders of magnitude: the
  // naive kernel's error in one row is a matter of its summation order's luck (a sequential f32
  // sum over 8192 values was 1 ulp off in one row and 17 in another), so a per-row yardstick
  // flags correct kernels whose order was merely less lucky on that row.
  int64_t group = 0;
  // Top-k expert indices (i64, judged as sets). The exact run returns the selection scores
  // (shape[0] × topk_experts) as values and the selected experts as indices.
  bool topk = false;
  int64_t topk_experts = 0;
  TopkGroups topk_groups;  // the selection's group limit (judge_topk)
  // A real output stored in a format of its own whatever the storage format (fp8 quantization:
  // q in e4m3, its scales in f32); nullopt: the storage format. A case whose real outputs all
  // have one (nothing in it is stored in "the" storage format but its inputs) lists exactly
  // one format, that of its inputs (parse_case), so that a file never holds two runs' outputs
  // under one name.
  std::optional<ref::Format> format;
};

// The format output d is stored in by a kernel whose storage format is `storage`.
inline ref::Format output_format(const OutputDecl& d, ref::Format storage) {
  return d.format.value_or(storage);
}
// Whether every real (non-top-k) output of decls has a format of its own.
bool outputs_fix_their_formats(const std::vector<OutputDecl>& decls);

// The inputs of one case in one storage format: generated once, read by the reference and by
// every backend, so all of them see the very same values.
class InputSet {
 public:
  void add(std::string name, ref::Tensor t);
  const ref::Tensor& at(std::string_view name) const;
  const std::vector<std::pair<std::string, ref::Tensor>>& all() const { return tensors_; }

  // The stored values of a real input, converted to T once each (exact for mp and double, a
  // rounding for a narrower simulated T, as a naive kernel loading them would do).
  template <class T>
  std::vector<T> values(std::string_view name) const;
  // An integer input's values.
  std::vector<int64_t> ints(std::string_view name) const;

 private:
  std::vector<std::pair<std::string, ref::Tensor>> tensors_;
};

template <class T>
struct OutputValues {
  std::vector<T> values;
  std::vector<int64_t> indices;  // top-k outputs only
  // Exact runs of ops whose policy has arg_error (policy.h): the condition number of the inner
  // function at each element's argument.
  std::vector<double> condition;
  // Exact runs of compositions whose policy has error_scale (policy.h, rule (2)): per element,
  // the scale S_i of a correct compute-format kernel's rounding errors, in units of u_c.
  std::vector<double> error_scale;
};
template <class T>
using Outputs = std::vector<OutputValues<T>>;  // one per OutputDecl, in order

class Op {
 public:
  virtual ~Op() = default;
  virtual std::vector<InputDecl> inputs() const = 0;
  virtual std::vector<OutputDecl> outputs() const = 0;
  // The exact values (the reference in mp). Callers outside the op go through
  // exact_outputs() (certified.h), which tries enclosure() first.
  virtual Outputs<ref::mp> exact(const InputSet& in) const = 0;
  // The same formula on balls ([certified], reference/ball.h): an interval around each exact
  // value, without the per-element data of annotate_exact. nullopt: the op has no such path.
  virtual std::optional<Outputs<ref::Ball>> enclosure(const InputSet& in) const {
    (void)in;
    return std::nullopt;
  }
  // The certified path's fallback at real shapes (certified.h): replaces in `out`, the
  // enclosure's midpoints, the listed elements (per output, flat indices) by the exact run's
  // values, recomputing in MPFR only what they depend on (their rows) and bit-identical to
  // exact(). false: the op has no such path, and the whole op runs in MPFR.
  virtual bool exact_elements(const InputSet& in, const std::vector<std::vector<int64_t>>& which,
                              Outputs<ref::mp>& out) const {
    (void)in;
    (void)which;
    (void)out;
    return false;
  }
  // Ops whose rows are independent: every input and output has this many rows as its leading
  // dimension, and row r of each output depends on row r of the inputs only. Golden evaluates
  // them in blocks of rows (with_rows: the same op over fewer rows), since at real shapes the
  // exact values of the whole op do not fit in memory, and the certified path recomputes in
  // MPFR only the rows of undecided elements (certified.cc). 0: not separable.
  virtual int64_t independent_rows() const { return 0; }
  virtual std::unique_ptr<Op> with_rows(int64_t rows) const {
    (void)rows;
    return nullptr;
  }
  // Of such an op, whether input `name` has the rows as its leading dimension; false: one tensor
  // every row reads whole (a norm's weight).
  virtual bool row_input(std::string_view name) const {
    (void)name;
    return true;
  }
  // What an exact run adds beyond the values (OutputValues::condition, error_scale computed
  // from the inputs), applied by exact() and by the certified path alike.
  virtual void annotate_exact(const InputSet& in, Outputs<ref::mp>& out) const {
    (void)in;
    (void)out;
  }
  // The naive kernel: the same reference formula evaluated in the compute format (f64 in
  // double; f32 and narrower in the simulated formats, every operation rounded once). Values
  // are exact as doubles.
  virtual Outputs<double> simulated(ref::Format compute, const InputSet& in) const = 0;
  // The intermediate values a kernel may hold in a narrower format, and the op's form choices
  // ([recipes], recipe.h); none: only strict, +ftz and +fma apply.
  virtual std::vector<RoundingPoint> rounding_points() const { return {}; }
  // The points the op's own parameters fix: a case's `literal: true` is form=literal. Every
  // recipe the op is judged under takes them (bind_recipe).
  virtual std::map<std::string, std::string> implied_points() const { return {}; }
  // The naive kernel following a recipe bound to this op (BoundRecipe built from
  // rounding_points()): the values rounded at the recipe's points, with ftz subnormal results
  // at those points and at the store flushed to zero, with fma the products of its sums fused
  // (reference/contraction.h). A strict recipe gives simulated(compute, in). Ops may fill
  // OutputValues::error_scale for a recipe whose form has a bound of its own (the literal
  // activations, policy.h rule (2)).
  virtual Outputs<double> simulated(ref::Format compute, const InputSet& in,
                                    const BoundRecipe& recipe) const = 0;
  // For an op with a top-k output and values paired with it (the router's gates): the op with
  // its selection fixed to `experts` (ascending per token, as the top-k output's shape), so
  // that a kernel whose selection differs from the reference's within the tie margin has its
  // values judged on its own selection. nullptr: the op has no such output.
  virtual std::unique_ptr<Op> with_selection(std::vector<int64_t> experts) const {
    (void)experts;
    return nullptr;
  }
  // Scalar operations of one reference run, roughly: verify refuses a case above its limit
  // before spending hours on it.
  virtual double cost() const = 0;
};

template <class T>
std::vector<T> InputSet::values(std::string_view name) const {
  const ref::Tensor& t = at(name);
  if (!ref::is_float(t.dtype())) {
    throw std::invalid_argument("input '" + std::string(name) + "' is an integer tensor");
  }
  std::vector<T> v;
  v.reserve(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(T(t.get(i)));
  return v;
}

// What an output's element is a function of, which decides the kind of its policy (DESIGN.md,
// Oracle): a few input values (kElementwise: ulps against the correctly rounded value), a
// reduction or composition over many (kReduction: against the naive run), or a discrete choice
// (kSelection: top-k sets).
enum class OutputStructure : uint8_t { kElementwise, kReduction, kSelection };

// How one output of an op is judged, with the reason for the policy and its constants.
struct OutputPolicy {
  std::string output;  // "" = every output the op has no row of its own for
  OutputStructure structure;
  Policy policy;
  std::string justification;  // one line
};

inline OutputPolicy per_element_output(std::string output, Policy p, std::string why) {
  return {std::move(output), OutputStructure::kElementwise, p, std::move(why)};
}
inline OutputPolicy per_element_output(Policy p, std::string why) {
  return per_element_output("", p, std::move(why));
}
inline OutputPolicy reduction_output(std::string output, Policy p, std::string why) {
  return {std::move(output), OutputStructure::kReduction, p, std::move(why)};
}
inline OutputPolicy reduction_output(Policy p, std::string why) {
  return reduction_output("", p, std::move(why));
}
inline OutputPolicy selection_output(std::string output, Policy p, std::string why) {
  return {std::move(output), OutputStructure::kSelection, p, std::move(why)};
}

// A shape the op is benchmarked at (`lmoracle bench`, bench/memory_workloads.h): the case that
// runs it with `rows` rows of its main input (its first input), each of `row` elements; the
// bench chooses the rows for the size asked for. Its traffic is every input read once and every
// output written once, from the case's declarations.
struct BenchShape {
  std::string name;  // the bench row's name: the op's, or a variant's of its own ("softcap_wide")
  // Elements of the main array per row: the first input, or the first output for an op that
  // reads less than a row per row (sinusoidal_pe writes its encoding from one position a row).
  int64_t row = 1;
  std::function<nlohmann::json(int64_t rows)> params;
  nlohmann::json inputs = nlohmann::json::object();  // input overrides, as a case's "inputs"
  // Inputs the op declares that its kernels do not read, left out of the traffic (rope_table's
  // positions, which only derive its cos/sin table).
  std::vector<std::string> unread = {};
};

// A compute-bound benchmark shape (`lmoracle bench`, bench/attention_workloads.h): the case that
// runs the op over `tokens` tokens, and what one call computes: its useful operations and the
// sgemm of comparable shape it is measured against.
struct ComputeCount {
  std::string shape;  // e.g. "h8 g2 d128 T2048 causal"
  int64_t size = 0;   // the pairs or elements the operations are counted over
  double flops = 0;   // useful operations of one call
  int64_t gemm_m = 0, gemm_n = 0, gemm_k = 0;
};
struct ComputeShape {
  std::string name;  // the bench row's name
  std::function<nlohmann::json(int64_t tokens)> params;
  std::function<ComputeCount(int64_t tokens)> count;
};

// THE record of an op: everything the oracle says about it lives here, and the policy table
// (policy_table.h), the backends' support (through `kernel`), `lmoracle list`, the Python
// package's ops() and the tests derive from the registry of these records (ops/registry.h).
struct OpInfo {
  std::string name;     // as in case files
  std::string catalog;  // F-rows it evaluates, e.g. "F12, F13, F14"
  std::string summary;  // one line, for `lmoracle list`
  // Reads and checks the parameters (ParamReader::finish is called by the caller).
  std::function<std::unique_ptr<Op>(ParamReader&)> make;
  // The kernel call a kernel library implements it with (kernel_entry.h).
  KernelEntry kernel = KernelEntry::kNone;
  // Its tolerance policies, at least one; an output's own row before the "" row.
  std::vector<OutputPolicy> policies;
  // The named recipes (recipe.h) that describe kernels of this op, beside "strict".
  std::vector<std::string> recipes = {};
  // Its memory-bound benchmark shapes (none: not benchmarked for bandwidth).
  std::vector<BenchShape> bench = {};
  // Its compute-bound benchmark shapes (none: not benchmarked for operations per second).
  std::vector<ComputeShape> compute = {};
};

}  // namespace lmo::oracle
