// Claims on kernel backends (fast-<target>, gpu): the claim's computations run as oracle ops
// through the Backend interface (backend.h), so every op that gains a kernel on a backend is
// covered by the claims written against it without touching them. Internal to the registry.
//
// The bound of a kernel value: its allowance, the accuracy contract the oracle already judges the
// kernel by (policy_table.h), evaluated at that element from the op's exact and naive-f32 runs
// on the same inputs (kernel_allowance below). An identity A = B (exact in real arithmetic) is
// then held to |A − B| ≤ allowance(A) + allowance(B): never tuned to the claim, and a kernel
// that meets its contract on these inputs always passes.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "oracle/backends/backend.h"
#include "reference/number_types.h"

namespace lmo::oracle::claims {

inline const char* kKernelSource =
    "kernel backends (fast-<target>, gpu): |A - B| <= allowance(A) + allowance(B), each the op's "
    "accuracy contract in policy_table.cc at that element (naive-relative ops: 2 x max|naive f32 "
    "- exact| over the group + 0.5 ulp output + 2 ulp f32 floor + the store's rounding; ULP ops: "
    "k ulp + the rounding and midpoint terms), from the op's exact and naive f32 runs on the "
    "same f32 inputs";

// A value a kernel computed (or exact arithmetic on such values), with the exact value it
// approximates and the most it may differ from it. value_of / error_of (claims_eval.h) read it
// like a Tracked number, so IdentityCheck judges it unchanged.
struct KernelValue {
  ref::mp value;
  ref::mp exact;
  double allowance = 0;
};

// The op the claim needs has no kernel on this backend (what Backend::unsupported said).
class NoKernel : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Exact arithmetic on kernel values (host side, no rounding): the allowances add; for a product
// |a'b' − ab| ≤ |a'|·δb + (|b'| + δb)·δa; for −log p it is δ / (p − δ) (|log p' − log p| ≤
// δ / min(p, p') for |p' − p| ≤ δ).
inline KernelValue exact_value(const ref::mp& x) { return {x, x, 0}; }
KernelValue operator-(const KernelValue& a);
KernelValue operator*(const KernelValue& a, const KernelValue& b);
KernelValue kernel_dot(const std::vector<KernelValue>& a, const std::vector<KernelValue>& b);
KernelValue operator+(const KernelValue& a, const KernelValue& b);
KernelValue operator-(const KernelValue& a, const KernelValue& b);
KernelValue scaled(const KernelValue& a, const ref::mp& c);
KernelValue neg_log(const KernelValue& p);

// One run of one op: each output's values, in the op's output order.
struct KernelOutputs {
  std::vector<std::string> names;
  std::vector<std::vector<KernelValue>> values;
  const std::vector<KernelValue>& at(std::string_view name) const;
};

// Runs ops on one kernel backend in f32 storage (the kernels' compute format, so the claim's
// inputs reach them unrounded). Records which ops ran, for the evidence note.
class KernelRunner {
 public:
  explicit KernelRunner(Backend& backend) : backend_(backend), name_(backend.name()) {}

  // Runs `op` with `params` on the named inputs (every input the op declares, except derived
  // ones such as RoPE tables, which the op computes). Float inputs must be f32 values (a claim
  // that rounds them has changed its inputs: std::logic_error); integer inputs are taken as
  // they are. Throws NoKernel when the backend has no kernel for the op.
  KernelOutputs run(const std::string& op, const nlohmann::json& params,
                    const std::vector<std::pair<std::string, std::vector<double>>>& inputs);

  const std::string& backend_name() const { return name_; }
  // "rmsnorm, layernorm": the ops run so far, in first-run order.
  std::string ops_run() const;

 private:
  Backend& backend_;
  std::string name_;
  std::vector<std::string> ran_;
};

// n f32 values uniform in [a, b) from the stream (seed, name): the ref-f32 backend's inputs of
// the same claim.
std::vector<double> f32_uniform(uint64_t seed, const std::string& name, int64_t n, double a,
                                double b);
// x rounded to a multiple of 2^-bits: a grid on which sums, shifts and power-of-two scalings
// of small values stay exact in f32 (claims whose identity transforms the inputs).
double on_grid(double x, int bits);

}  // namespace lmo::oracle::claims
