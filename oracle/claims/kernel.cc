#include "oracle/claims/kernel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "oracle/backends/kernel_call.h"
#include "oracle/cases/case.h"
#include "oracle/core/certified.h"
#include "oracle/core/guarded_buffer.h"
#include "oracle/core/inputs.h"
#include "oracle/judge/metrics.h"
#include "oracle/ops/policy_table.h"

namespace lmo::oracle::claims {
namespace {

using ref::mp;
constexpr ref::Format kF32 = ref::Format::f32;

// The allowance of each element of one output of one kernel run: the policy (policy.h) the
// judge applies to that output, turned into a bound on |y − x| for a y it accepts.
//  - kNaiveRelative: the judge accepts y = round(v) for some v within B_i of x, B_i =
//    naive_factor · max_group|naive − x| + (output_ulps − ½) ulp(x) + compute_ulps ulp_f32(x),
//    the first term at least error_scale · 2^-24 · S_i where the op supplies its error scale;
//    so |y − x| ≤ B_i + ½ ulp(|x| + B_i).
//  - kUlp: y is at most k (+ the argument-rounding ulps, + 1 where the midpoint rule forgives)
//    ulps from the correct rounding r, itself within ½ ulp of x; every step is counted in the
//    ulp of the binade above |x|, an upper bound on each step within reach.
std::vector<double> allowances(const Policy& p, const OutputDecl& d, const OutputValues<mp>& exact,
                               const OutputValues<double>& naive) {
  using std::abs;
  const auto n = static_cast<int64_t>(exact.values.size());
  std::vector<double> out(static_cast<size_t>(n), 0.0);
  if (p.kind == PolicyKind::kNaiveRelative) {
    const int64_t group = d.group > 0 ? d.group : std::max<int64_t>(n, 1);
    for (int64_t g0 = 0; g0 < n; g0 += group) {
      mp worst = 0;
      for (int64_t i = g0; i < std::min(n, g0 + group); ++i) {
        const auto k = static_cast<size_t>(i);
        if (!std::isfinite(naive.values[k]) || !isfinite(exact.values[k])) continue;
        worst = std::max(worst, mp(abs(mp(naive.values[k]) - exact.values[k])));
      }
      const mp naive_bound = mp(p.naive_factor) * worst;
      for (int64_t i = g0; i < std::min(n, g0 + group); ++i) {
        const auto k = static_cast<size_t>(i);
        const mp& x = exact.values[k];
        mp sampled = naive_bound;
        if (p.error_scale > 0 && k < exact.error_scale.size() &&
            std::isfinite(exact.error_scale[k])) {
          sampled = std::max(sampled,
                             mp(mp(p.error_scale) * mp(exact.error_scale[k]) * ldexp(mp(1), -24)));
        }
        const mp b = sampled + mp(p.output_ulps - 0.5) * ulp_at(kF32, x) +
                     mp(p.compute_ulps) * ulp_at(kF32, x);
        out[k] = static_cast<double>(b + ulp_at(kF32, mp(abs(x) + b)) / 2);
      }
    }
    return out;
  }
  if (p.kind == PolicyKind::kUlp) {
    for (int64_t i = 0; i < n; ++i) {
      const auto k = static_cast<size_t>(i);
      const mp& x = exact.values[k];
      double steps = static_cast<double>(p.max_ulps(kF32)) + (p.midpoint_margin > 0 ? 1 : 0);
      if (p.arg_error > 0 && x != 0 && k < exact.condition.size()) {
        steps += std::ceil(static_cast<double>(mp(p.arg_error * exact.condition[k]) *
                                               ldexp(mp(1), -24) * abs(x) / ulp_at(kF32, x)));
      }
      out[k] = static_cast<double>(mp(steps) * ulp_at(kF32, mp(2 * abs(x))) + ulp_at(kF32, x) / 2);
    }
    return out;
  }
  throw std::logic_error("claims on kernels: top-k outputs have no numeric allowance");
}

}  // namespace

KernelValue operator-(const KernelValue& a) { return {-a.value, -a.exact, a.allowance}; }
KernelValue operator+(const KernelValue& a, const KernelValue& b) {
  return {a.value + b.value, a.exact + b.exact, a.allowance + b.allowance};
}
KernelValue operator-(const KernelValue& a, const KernelValue& b) { return a + (-b); }
KernelValue operator*(const KernelValue& a, const KernelValue& b) {
  using std::abs;
  const mp da(a.allowance), db(b.allowance);
  return {a.value * b.value, a.exact * b.exact,
          static_cast<double>(abs(a.value) * db + (abs(b.value) + db) * da)};
}
KernelValue kernel_dot(const std::vector<KernelValue>& a, const std::vector<KernelValue>& b) {
  KernelValue s = exact_value(0);
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) s = s + a[i] * b[i];
  return s;
}
KernelValue scaled(const KernelValue& a, const mp& c) {
  using std::abs;
  return {c * a.value, c * a.exact, static_cast<double>(abs(c) * mp(a.allowance))};
}
KernelValue neg_log(const KernelValue& p) {
  using std::log;
  const mp low = p.value - mp(p.allowance);
  const double allowance = low > 0 ? static_cast<double>(mp(p.allowance) / low)
                                   : std::numeric_limits<double>::infinity();
  return {-log(p.value), -log(p.exact), allowance};
}

const std::vector<KernelValue>& KernelOutputs::at(std::string_view name) const {
  for (size_t k = 0; k < names.size(); ++k) {
    if (names[k] == name) return values[k];
  }
  throw std::logic_error("claims on kernels: the op has no output '" + std::string(name) + "'");
}

KernelOutputs KernelRunner::run(
    const std::string& op_name, const nlohmann::json& params,
    const std::vector<std::pair<std::string, std::vector<double>>>& inputs) {
  std::vector<KernelInput> given;
  for (const auto& [name, values] : inputs) given.push_back({name, values, {}});
  const KernelCall call = make_kernel_call("claims on kernels", op_name, params, kF32, given);
  const Case& c = call.c;
  const std::unique_ptr<Op>& op = call.op;
  const InputSet& in = call.in;
  const std::string why = backend_.unsupported(c, *op, kF32);
  if (!why.empty()) throw NoKernel(why);
  if (std::find(ran_.begin(), ran_.end(), op_name) == ran_.end()) ran_.push_back(op_name);

  const Outputs<mp> exact = exact_outputs(*op, in);
  std::map<ref::Format, Outputs<double>> sims;
  auto simulated = [&](ref::Format f) -> const Outputs<double>& {
    auto s = sims.find(f);
    if (s == sims.end()) s = sims.emplace(f, op->simulated(f, in)).first;
    return s->second;
  };
  RunContext ctx{c, *op, kF32, in, [&]() -> const Outputs<mp>& { return exact; }, simulated};
  const std::vector<OutputDecl> decls = op->outputs();
  std::vector<GuardedBuffer> bufs = armed_outputs(*op, kF32);
  backend_.run(ctx, bufs);
  check_written(bufs, *op, name_, op_name);

  KernelOutputs out;
  for (size_t k = 0; k < decls.size(); ++k) {
    const ref::Tensor t = bufs[k].tensor();
    // Top-k outputs are expert indices: exact integers, compared with the exact selection.
    const std::vector<double> allowed =
        decls[k].topk ? std::vector<double>(static_cast<size_t>(t.numel()), 0.0)
                      : allowances(policy_for(op_name, decls[k].name), decls[k], exact[k],
                                   simulated(backend_.compute_format())[k]);
    std::vector<KernelValue> vals;
    for (int64_t i = 0; i < t.numel(); ++i) {
      const auto e = static_cast<size_t>(i);
      const mp x = decls[k].topk ? mp(exact[k].indices[e]) : exact[k].values[e];
      vals.push_back({mp(t.get(i)), x, allowed[e]});
    }
    out.names.push_back(decls[k].name);
    out.values.push_back(std::move(vals));
  }
  return out;
}

std::string KernelRunner::ops_run() const {
  std::string s;
  for (const std::string& o : ran_) s += (s.empty() ? "" : ", ") + o;
  return s;
}

std::vector<double> f32_uniform(uint64_t seed, const std::string& name, int64_t n, double a,
                                double b) {
  const ref::Tensor t = oracle::uniform(seed, name, ref::DType::f32, {n}, a, b);
  std::vector<double> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(t.get(i));
  return out;
}

double on_grid(double x, int bits) {
  return std::ldexp(std::nearbyint(std::ldexp(x, bits)), -bits);
}

}  // namespace lmo::oracle::claims
