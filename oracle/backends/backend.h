// Backends: what the oracle judges. A backend evaluates one case (an op with its parameters and
// inputs) in one storage format into guarded output buffers (DESIGN.md, Oracle). This build's
// backends:
//   ref           the exact reference (mp), rounded once to the storage format: the golden values
//                 themselves, so it must always pass (a check of the whole pipeline);
//   ref-f64       the reference formula computed in double;
//   ref-f32       the reference formula computed in f32, every operation rounded once (what a
//                 careful f32-compute kernel does): a correct kernel, so it must pass too;
//   ref-<narrow>  (tf32, bf16, f16, e4m3, e5m2) the naive kernel computing in its own storage
//                 format (judged, like every backend, against the naive run in its own compute
//                 format: policy.h). It runs only on its own format and is not in the default
//                 run: it is expected to fail the elementwise ULP policies (that is what makes
//                 it naive), so it runs only when asked for;
//   fast-<target> and gpu join as their kernels arrive.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oracle/cases/case.h"
#include "oracle/core/guarded_buffer.h"
#include "oracle/core/kernel_entry.h"
#include "oracle/core/op.h"
#include "oracle/rules/recipe.h"

namespace lmo::oracle {

// Everything a backend call may read. The exact and naive values are computed once per case and
// format and shared (the reference backends only round them).
struct RunContext {
  const Case& c;
  const Op& op;
  ref::Format storage;
  const InputSet& in;
  std::function<const Outputs<ref::mp>&()> exact;
  std::function<const Outputs<double>&(ref::Format compute)> simulated;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  // Whether `verify` runs it when no --backend is given.
  virtual bool in_default_run() const { return true; }
  // The format it computes in: the naive-relative policy's yardstick is the reference run in
  // this format (policy.h). f32 for fast/ and gpu/.
  virtual ref::Format compute_format() const { return ref::Format::f32; }
  // "" when the backend runs this case in this storage format, else the reason it does not.
  virtual std::string unsupported(const Case& c, const Op& op, ref::Format storage) const = 0;
  // The recipe (recipe.h) its kernel for an op's kernel entry follows, per entry as unsupported()
  // answers per case: a kernel that contracts its sums of squares into fmas declares strict+fma,
  // one that stores by truncation strict+trunc. nullopt (the default): none declared, the kernel
  // is judged under the case's recipe. verify judges each backend under
  // judged_recipe(case recipe, declaration) (recipe.h: the declaration where the case names no
  // recipe, else the case's with the declared modifiers added); a declaration that does not fit
  // the op fails the backend's row.
  virtual std::optional<Recipe> declared_recipe(KernelEntry entry) const {
    (void)entry;
    return std::nullopt;
  }
  // Writes every output (one buffer per OutputDecl, in order, armed by the caller).
  virtual void run(const RunContext& ctx, std::vector<GuardedBuffer>& outputs) = 0;
};

// Every backend of this build that can run on this machine, in a fixed order.
std::vector<std::unique_ptr<Backend>> available_backends();

// Whether a backend name given on the command line selects the backend `name`: itself, or
// "fast" for every fast-<target> backend (each Highway target this CPU supports).
inline bool backend_selected_by(std::string_view asked, std::string_view name) {
  return name == asked || (asked == "fast" && name.starts_with("fast-"));
}

// Writes values rounded to nearest-even in the buffer's format (indices for top-k outputs).
void store_outputs(const Outputs<double>& values, std::vector<GuardedBuffer>& outputs);
void store_outputs(const Outputs<ref::mp>& values, std::vector<GuardedBuffer>& outputs);

}  // namespace lmo::oracle
