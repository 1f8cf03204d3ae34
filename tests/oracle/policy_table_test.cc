// The tolerance table (oracle/ops/policy_table.h, derived from the ops' records): every op of
// the registry has an entry with a justification and sane constants, elementwise outputs are
// judged in ulps, reductions against the naive run and selections as sets, and lookups of
// unknown ops fail with the list of known ones.
#include "oracle/ops/policy_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <utility>

#include "oracle/cases/case.h"
#include "oracle/core/op.h"
#include "oracle/check/check.h"
#include "oracle/ops/registry.h"

namespace lmo::oracle {
namespace {

// The registry's op names, from the registry itself (oracle/core/op.h): an op added there is
// checked here without a second list to keep in step.
std::set<std::string> registry_ops() {
  std::set<std::string> names;
  for (const OpInfo& o : op_registry()) names.insert(o.name);
  return names;
}
const std::set<std::string> kRegistryOps = registry_ops();

TEST(PolicyTable, EveryEntryIsAKnownOpWithAJustification) {
  std::set<std::pair<std::string, std::string>> seen;
  for (const PolicyEntry& e : policy_table()) {
    SCOPED_TRACE(std::string(e.op) + "/" + std::string(e.output));
    EXPECT_TRUE(kRegistryOps.count(std::string(e.op)));
    EXPECT_FALSE(e.justification.empty());
    EXPECT_EQ(e.justification.find('\n'), std::string_view::npos);  // one line
    EXPECT_TRUE(seen.insert({std::string(e.op), std::string(e.output)}).second) << "duplicate";
  }
}

// An entry for one output names an output the op has (on its first built-in case): a structural
// check instead of a hand-kept count of entries.
TEST(PolicyTable, EveryPerOutputEntryNamesAnOutputOfItsOp) {
  const std::vector<Case> cases = load_case_dir(builtin_cases_dir());
  for (const PolicyEntry& e : policy_table()) {
    if (e.output.empty()) continue;
    SCOPED_TRACE(std::string(e.op) + "/" + std::string(e.output));
    const auto c = std::find_if(cases.begin(), cases.end(),
                                [&](const Case& x) { return x.op == e.op; });
    ASSERT_NE(c, cases.end());
    bool found = false;
    for (const OutputDecl& d : make_op(*c)->outputs()) found = found || d.name == e.output;
    EXPECT_TRUE(found);
  }
}

// Every op of the registry has a built-in case (verify, golden and the kernel backends run it).
TEST(PolicyTable, EveryRegistryOpHasABuiltinCase) {
  std::set<std::string> with_case;
  for (const Case& c : load_case_dir(builtin_cases_dir())) with_case.insert(c.op);
  for (const std::string& op : kRegistryOps) EXPECT_TRUE(with_case.count(op)) << op;
}

TEST(PolicyTable, EveryRegistryOpHasAPolicy) {
  for (const std::string& op : kRegistryOps) {
    bool found = false;
    for (const PolicyEntry& e : policy_table()) found = found || e.op == op;
    EXPECT_TRUE(found) << op;
  }
}

// The table holds each record's policies, in registry order, viewing the records' strings.
TEST(PolicyTable, IsTheRecordsPolicies) {
  size_t k = 0;
  const std::span<const PolicyEntry> table = policy_table();
  for (const OpInfo& o : op_registry()) {
    for (const OutputPolicy& p : o.policies) {
      ASSERT_LT(k, table.size());
      EXPECT_EQ(table[k].op, o.name);
      EXPECT_EQ(table[k].output, p.output);
      EXPECT_EQ(table[k].justification, p.justification);
      EXPECT_EQ(&policy_entry(o.name, p.output).policy, &table[k].policy);
      ++k;
    }
  }
  EXPECT_EQ(k, table.size());
}

// The DESIGN rule: an output computed from a few input values per element is judged in ulps
// (policy (1)), a reduction or composition against the naive run (2), a discrete selection as
// sets (4). The structure is stated in the record beside the policy; this keeps the two in step.
TEST(PolicyTable, EachOutputsStructureDecidesItsPolicyKind) {
  for (const OpInfo& o : op_registry()) {
    for (const OutputPolicy& p : o.policies) {
      SCOPED_TRACE(o.name + "/" + p.output);
      switch (p.structure) {
        case OutputStructure::kElementwise:
          EXPECT_EQ(p.policy.kind, PolicyKind::kUlp);
          break;
        case OutputStructure::kReduction:
          EXPECT_EQ(p.policy.kind, PolicyKind::kNaiveRelative);
          break;
        case OutputStructure::kSelection:
          EXPECT_EQ(p.policy.kind, PolicyKind::kTopKSet);
          break;
      }
    }
  }
}

TEST(PolicyTable, ConstantsFitTheirPolicy) {
  for (const PolicyEntry& e : policy_table()) {
    SCOPED_TRACE(std::string(e.op) + "/" + std::string(e.output));
    const Policy& p = e.policy;
    switch (p.kind) {
      case PolicyKind::kUlp:
        EXPECT_GE(p.ulps_wide, 0);
        EXPECT_LE(p.ulps_wide, 8);    // "small k"
        EXPECT_EQ(p.ulps_narrow, 0);  // so that a rounding bug in a narrow store is caught
        EXPECT_GE(p.midpoint_margin, 0.0);
        EXPECT_LE(p.midpoint_margin, 1.0 / 64);  // "a small margin"
        EXPECT_GE(p.arg_error, 0.0);
        EXPECT_LE(p.arg_error, 8.0);  // a few roundings in forming the argument
        break;
      case PolicyKind::kNaiveRelative:
        EXPECT_EQ(p.naive_factor, 2.0);  // the FlashAttention rule
        EXPECT_EQ(p.output_ulps, 0.5);   // plus half an ulp of the output
        EXPECT_EQ(p.compute_ulps, 2.0);  // FlashAttention 3's floor: twice the working rounding
        // An error scale is a few standard deviations of a correct kernel's error (u·S/√3), no
        // more; the op must supply S (ErrorScaleOnlyWhereTheOpSuppliesOne).
        if (p.error_scale != 0) {
          EXPECT_GE(p.error_scale, 2.0);
          EXPECT_LE(p.error_scale, 8.0);
        }
        break;
      case PolicyKind::kTopKSet:
        EXPECT_GT(p.tie_margin, 0.0);
        EXPECT_LT(p.tie_margin, 0.05);
        break;
    }
  }
}

TEST(PolicyTable, OpsWithSeveralOutputs) {
  EXPECT_EQ(policy_for("moe_router", "gates").kind, PolicyKind::kNaiveRelative);
  EXPECT_EQ(policy_for("moe_router", "experts").kind, PolicyKind::kTopKSet);
  for (const char* out : {"loss", "logz", "grad"}) {
    EXPECT_EQ(policy_for("cross_entropy", out).kind, PolicyKind::kNaiveRelative) << out;
  }
  try {
    policy_for("moe_router");
    ADD_FAILURE() << "moe_router needs its output named";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("gates"), std::string::npos) << msg;
    EXPECT_NE(msg.find("experts"), std::string::npos) << msg;
  }
  EXPECT_THROW(policy_for("cross_entropy", "logits"), std::invalid_argument);
  // An op judged alike in every output answers for any output name.
  EXPECT_EQ(&policy_for("attention", "lse"), &policy_for("attention"));
  EXPECT_EQ(policy_entry("gelu").op, "gelu");
}

TEST(PolicyTable, UnknownOpThrowsNamingTheKnownOps) {
  try {
    policy_for("nope");
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'nope'"), std::string::npos) << msg;
    for (const std::string& op : kRegistryOps) {
      EXPECT_NE(msg.find(op), std::string::npos) << op << " missing from: " << msg;
    }
  }
}

TEST(PolicyTable, NarrowAndWideK) {
  const Policy& g = policy_for("gelu");
  EXPECT_EQ(g.max_ulps(ref::Format::f32), g.ulps_wide);
  EXPECT_EQ(g.max_ulps(ref::Format::f64), g.ulps_wide);
  for (ref::Format f : {ref::Format::tf32, ref::Format::bf16, ref::Format::f16, ref::Format::e4m3,
                        ref::Format::e5m2}) {
    EXPECT_TRUE(is_narrow(f));
    EXPECT_EQ(g.max_ulps(f), 0);
  }
  EXPECT_EQ(policy_kind_name(PolicyKind::kNaiveRelative), "naive_relative");
}

// A policy with an error scale judges each element against the S_i of the exact run: the op must
// supply one, finite, per element, on every built-in case of the op.
TEST(PolicyTable, ErrorScaleOnlyWhereTheOpSuppliesOne) {
  int checked = 0;
  for (const Case& c : load_case_dir(builtin_cases_dir())) {
    const std::unique_ptr<Op> op = make_op(c);
    const std::vector<OutputDecl> decls = op->outputs();
    bool scaled = false;
    for (const OutputDecl& d : decls) scaled |= policy_for(c.op, d.name).error_scale > 0;
    if (!scaled) continue;
    const Outputs<ref::mp> exact = op->exact(reference_inputs(c, c.formats.front()));
    for (size_t k = 0; k < decls.size(); ++k) {
      SCOPED_TRACE(c.id + " " + decls[k].name);
      if (policy_for(c.op, decls[k].name).error_scale == 0) continue;
      ASSERT_EQ(exact[k].error_scale.size(), exact[k].values.size());
      for (double s : exact[k].error_scale) EXPECT_TRUE(std::isfinite(s) && s >= 0) << s;
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace lmo::oracle
