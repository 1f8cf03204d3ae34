// Runs one case in one storage format through the oracle's own judging (run_and_judge) with a
// backend made from a function: how the oracle's tests feed it deliberately wrong kernels
// (mutants) and correct ones.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "oracle/backends/backend.h"
#include "oracle/cases/case.h"
#include "oracle/cases/case_inputs.h"
#include "oracle/verify/verify.h"

namespace lmo::testing {

using Kernel = std::function<oracle::Outputs<double>(const oracle::RunContext&)>;

// A backend made from a function, declaring `declared` (Backend::declared_recipe) for every
// kernel entry, or nothing.
class FnBackend : public oracle::Backend {
 public:
  FnBackend(std::string name, Kernel k, std::optional<oracle::Recipe> declared = std::nullopt)
      : name_(std::move(name)), kernel_(std::move(k)), declared_(std::move(declared)) {}
  std::string name() const override { return name_; }
  std::string description() const override { return "test kernel"; }
  std::string unsupported(const oracle::Case&, const oracle::Op&, ref::Format) const override {
    return "";
  }
  std::optional<oracle::Recipe> declared_recipe(oracle::KernelEntry) const override {
    return declared_;
  }
  void run(const oracle::RunContext& ctx, std::vector<oracle::GuardedBuffer>& out) override {
    oracle::store_outputs(kernel_(ctx), out);
  }

 private:
  std::string name_;
  Kernel kernel_;
  std::optional<oracle::Recipe> declared_;
};

class Harness {
 public:
  Harness(const nlohmann::json& case_json, ref::Format storage)
      : c_(oracle::parse_case(case_json, "<test>", "case")),
        op_(oracle::make_op(c_)),
        storage_(storage),
        in_(oracle::make_inputs(c_, *op_, storage)) {}

  const oracle::Case& c() const { return c_; }
  const oracle::Op& op() const { return *op_; }
  const oracle::InputSet& inputs() const { return in_; }
  ref::Format storage() const { return storage_; }

  // The same op with some parameters replaced (a mutant's wrong constant).
  std::unique_ptr<oracle::Op> op_with(const nlohmann::json& param_changes) const {
    oracle::Case m = c_;
    for (auto it = param_changes.begin(); it != param_changes.end(); ++it) {
      if (it.value().is_null()) {
        m.params.erase(it.key());
      } else {
        m.params[it.key()] = it.value();
      }
    }
    return oracle::make_op(m);
  }

  oracle::RunContext ctx() {
    return {c_,
            *op_,
            storage_,
            in_,
            [this]() -> const oracle::Outputs<ref::mp>& {
              if (!exact_) exact_ = op_->exact(in_);
              return *exact_;
            },
            [this](ref::Format f) -> const oracle::Outputs<double>& {
              auto it = sims_.find(f);
              if (it == sims_.end()) it = sims_.emplace(f, op_->simulated(f, in_)).first;
              return it->second;
            }};
  }

  // k judged as verify judges it; `declared`: the recipe its backend declares (none: the case's).
  oracle::VerifyRow judge(const std::string& name, Kernel k,
                          std::optional<oracle::Recipe> declared = std::nullopt) {
    FnBackend b(name, std::move(k), std::move(declared));
    const oracle::RunContext x = ctx();
    return oracle::run_and_judge(c_, *op_, storage_, b, x);
  }

  // Every kernel backend of available_backends() (the fast targets; gpu with a device) that
  // takes the case passes it, judged as verify judges; returns how many ran.
  int expect_kernel_backends_pass() {
    int ran = 0;
    for (const auto& b : oracle::available_backends()) {
      if (b->name().rfind("ref", 0) == 0 || !b->unsupported(c_, *op_, storage_).empty()) continue;
      const oracle::RunContext x = ctx();
      const oracle::VerifyRow row = oracle::run_and_judge(c_, *op_, storage_, *b, x);
      EXPECT_TRUE(row.pass) << b->name() << " on " << c_.id << ": " << row.detail;
      ++ran;
    }
    return ran;
  }

 private:
  oracle::Case c_;
  std::unique_ptr<oracle::Op> op_;
  ref::Format storage_;
  oracle::InputSet in_;
  std::optional<oracle::Outputs<ref::mp>> exact_;
  std::map<ref::Format, oracle::Outputs<double>> sims_;
};

// A correct kernel: the reference formula computed in f32, each operation rounded once.
inline oracle::Outputs<double> careful_f32(const oracle::RunContext& ctx) {
  return ctx.op.simulated(ref::Format::f32, ctx.in);
}

// The correct kernel (careful_f32) passes on the harness's case and the mutant fails, caught by
// the tolerance policy (a wrong value or set), not by a crash or an unwritten output.
inline void expect_caught(Harness& h, const Kernel& mutant) {
  const oracle::VerifyRow good = h.judge("careful-f32", careful_f32);
  EXPECT_TRUE(good.pass) << good.detail;
  const oracle::VerifyRow bad = h.judge("mutant", mutant);
  EXPECT_FALSE(bad.pass) << "the mutant passed: max ulp " << bad.max_ulps;
  bool by_policy = false;
  for (const oracle::OutputVerdict& o : bad.outputs) {
    by_policy |= o.verdict.reason == oracle::FailReason::kPolicy;
  }
  EXPECT_TRUE(by_policy) << bad.detail;
}

// The exact values rounded once to the storage format (what the `ref` backend stores): the
// judge's floor, which every policy must accept.
inline oracle::Outputs<double> exact_rounded(const oracle::RunContext& ctx) {
  const oracle::Outputs<ref::mp>& e = ctx.exact();
  oracle::Outputs<double> o(e.size());
  for (size_t k = 0; k < e.size(); ++k) {
    for (const ref::mp& v : e[k].values) {
      o[k].values.push_back(ref::decode<double>(ctx.storage, ref::encode(ctx.storage, v)));
    }
  }
  return o;
}

}  // namespace lmo::testing
