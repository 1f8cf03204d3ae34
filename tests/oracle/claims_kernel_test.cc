// Claims on kernel backends (oracle/claims/kernel.h): every fast-<target> of this CPU is a claim
// backend, the claims whose ops have fast kernels run there and hold, a kernel with a
// deliberate error (a dropped soft-cap, a wrong epsilon) makes the affected claims FAIL, and a
// backend without the claim's op reports it not applicable, naming the op.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>

#include "oracle/backends/backend.h"
#include "oracle/claims/claims.h"
#include "oracle/claims/report.h"
#include "oracle/ops/activations.h"
#include "oracle/ops/norms.h"

namespace lmo::oracle {
namespace {

// Claims whose ops all have fast kernels on this branch: norms, softmax, logsumexp,
// cross_entropy, online_softmax, softcap, gelu, gelu_tanh.
const std::set<std::string> kFastClaims = {"C09", "C10", "C11", "C12", "C17", "C26"};

std::vector<ClaimBackend> fast_backends() {
  std::vector<ClaimBackend> out;
  for (ClaimBackend& b : claim_backends()) {
    if (b.name.rfind("fast-", 0) == 0) out.push_back(std::move(b));
  }
  return out;
}

// A backend of available_backends() by name, as a kernel claim backend under `label`.
ClaimBackend as_kernel(const std::string& name, const std::string& label) {
  for (std::unique_ptr<Backend>& b : available_backends()) {
    if (b->name() == name) return {label, std::nullopt, std::shared_ptr<Backend>(std::move(b))};
  }
  throw std::logic_error("no backend " + name);
}

const BackendEvidence* row(const ClaimEvidence& ev, const std::string& backend) {
  for (const BackendEvidence& b : ev.backends) {
    if (b.backend == backend) return &b;
  }
  return nullptr;
}

TEST(ClaimsKernel, EveryFastTargetIsAClaimBackendAndFastNamesThemAll) {
  std::vector<std::string> fast;
  for (const std::unique_ptr<Backend>& b : available_backends()) {
    if (b->name().rfind("fast-", 0) == 0) fast.push_back(b->name());
  }
  ASSERT_FALSE(fast.empty()) << "this build has no fast target for this CPU";
  std::vector<std::string> resolved;
  for (const ClaimBackend& b : resolve_claim_backends("fast")) {
    EXPECT_TRUE(b.kernel);
    EXPECT_FALSE(b.format);
    resolved.push_back(b.name);
  }
  EXPECT_EQ(resolved, fast);
  for (const std::string& n : fast) {
    const auto one = resolve_claim_backends(n);
    ASSERT_EQ(one.size(), 1u) << n;
    EXPECT_EQ(one[0].kernel->name(), n);
  }
  // The reference backends stay number types, not kernels.
  const auto ref_f32 = resolve_claim_backends("ref-f32");
  ASSERT_EQ(ref_f32.size(), 1u);
  EXPECT_FALSE(ref_f32[0].kernel);
  EXPECT_EQ(ref_f32[0].format, ref::Format::f32);
  // gpu resolves exactly when available_backends() has it (no device backend in this build).
  bool has_gpu = false;
  for (const std::unique_ptr<Backend>& b : available_backends()) has_gpu |= b->name() == "gpu";
  EXPECT_EQ(resolve_claim_backends("gpu").size(), has_gpu ? 1u : 0u);
  EXPECT_TRUE(resolve_claim_backends("fast-avx9").empty());
}

class OnEveryFastTarget : public ::testing::TestWithParam<std::string> {};

// The claims with fast kernels run on each target (every trial evaluated, nothing skipped) and
// hold; no claim FAILS on any target, whether it ran there or not.
TEST_P(OnEveryFastTarget, ClaimsWithKernelsRunAndHoldAndNoneFails) {
  const auto backends = resolve_claim_backends(GetParam());
  ASSERT_EQ(backends.size(), 1u);
  ClaimContext ctx;
  ctx.backends = backends;
  for (const Claim& c : claims_registry()) {
    const ClaimEvidence ev = c.evaluate(ctx);
    EXPECT_NE(ev.status, ClaimStatus::kFails) << claim_json(c, ev).dump(2);
    if (!kFastClaims.count(c.id)) continue;
    const BackendEvidence* b = row(ev, GetParam());
    ASSERT_NE(b, nullptr) << c.id;
    EXPECT_TRUE(b->applicable) << c.id << ": " << b->note;
    EXPECT_TRUE(b->ok) << claim_json(c, ev).dump(2);
    EXPECT_EQ(b->trials, ev.trials) << c.id << ": " << b->note;
    EXPECT_NE(b->note.find("kernels run: "), std::string::npos) << b->note;
    EXPECT_LE(b->ratio, 1.0) << c.id;
    EXPECT_GT(b->residual + b->bound, 0.0) << c.id << ": nothing was compared";
  }
}

std::vector<std::string> fast_names() {
  std::vector<std::string> n;
  for (const ClaimBackend& b : fast_backends()) n.push_back(b.name);
  return n;
}

INSTANTIATE_TEST_SUITE_P(Fast, OnEveryFastTarget, ::testing::ValuesIn(fast_names()),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& ch : s) ch = ch == '-' ? '_' : ch;
                           return s;
                         });

// A kernel backend with a deliberate error: the fast kernels, but rmsnorm and layernorm run with
// eps + 1e-2 and softcap with its cap raised to 1e6 (so that it caps nothing). Every other op is
// the fast kernel unchanged.
class WrongKernels : public Backend {
 public:
  explicit WrongKernels(std::unique_ptr<Backend> fast) : fast_(std::move(fast)) {}
  std::string name() const override { return "wrong-" + fast_->name(); }
  std::string description() const override { return "fast kernels with deliberate errors"; }
  std::string unsupported(const Case& c, const Op& op, ref::Format f) const override {
    return fast_->unsupported(c, op, f);
  }
  void run(const RunContext& ctx, std::vector<GuardedBuffer>& outputs) override {
    std::unique_ptr<Op> changed;
    if (const auto* n = dynamic_cast<const NormOp*>(&ctx.op)) {
      NormParams p = n->params();
      p.eps += 1e-2;
      changed = std::make_unique<NormOp>(p);
    } else if (const auto* e = dynamic_cast<const ElementwiseOp*>(&ctx.op);
               e && e->params().kind == ElementwiseKind::kSoftcap) {
      ElementwiseParams p = e->params();
      p.cap = 1e6;
      changed = std::make_unique<ElementwiseOp>(p);
    }
    if (!changed) return fast_->run(ctx, outputs);
    const RunContext wrong{ctx.c, *changed, ctx.storage, ctx.in, ctx.exact, ctx.simulated};
    fast_->run(wrong, outputs);
  }

 private:
  std::unique_ptr<Backend> fast_;
};

TEST(ClaimsKernel, ADroppedSoftcapOrAWrongEpsilonFailsTheAffectedClaims) {
  const auto fast = fast_backends();
  ASSERT_FALSE(fast.empty());
  std::unique_ptr<Backend> base;
  for (std::unique_ptr<Backend>& b : available_backends()) {
    if (b->name() == fast[0].name) base = std::move(b);
  }
  ASSERT_TRUE(base);
  ClaimContext ctx;
  ctx.backends = {{"wrong", std::nullopt, std::make_shared<WrongKernels>(std::move(base))}};
  for (const char* id : {"C09", "C12"}) {
    const Claim* c = find_claim(id);
    const ClaimEvidence ev = c->evaluate(ctx);
    EXPECT_EQ(ev.status, ClaimStatus::kFails) << claim_json(*c, ev).dump(2);
    ASSERT_EQ(ev.backends.size(), 1u);
    EXPECT_TRUE(ev.backends[0].applicable);
    EXPECT_GT(ev.backends[0].ratio, 1.0) << id;
  }
  // The ops it leaves alone still hold.
  for (const char* id : {"C10", "C11", "C26"}) {
    const Claim* c = find_claim(id);
    EXPECT_EQ(c->evaluate(ctx).status, ClaimStatus::kHolds) << id;
  }
}

// The ref-f32 backend (the reference formula in f32, every operation rounded once) taken as a
// kernel backend: every kernel trial runs its ops through Backend::run, whichever ops it uses,
// and must hold: their allowances come from the same naive f32 run.
TEST(ClaimsKernel, EveryKernelTrialHoldsOnTheNaiveF32KernelAndRunsItsOps) {
  ClaimContext ctx;
  ctx.backends = {as_kernel("ref-f32", "naive-f32")};
  int ran = 0;
  for (const Claim& c : claims_registry()) {
    const ClaimEvidence ev = c.evaluate(ctx);
    EXPECT_NE(ev.status, ClaimStatus::kFails) << claim_json(c, ev).dump(2);
    const BackendEvidence* b = row(ev, "naive-f32");
    if (!b || !b->applicable) continue;
    ++ran;
    EXPECT_TRUE(b->ok) << c.id;
    EXPECT_EQ(b->trials, ev.trials) << c.id << ": " << b->note;
  }
  // C01, C02, C05, C06, C08–C17, C24, C26: everything with a kernel trial.
  EXPECT_EQ(ran, 16);
}

// A kernel backend without the claim's op: the row is not applicable and names the op.
TEST(ClaimsKernel, AMissingKernelIsNotApplicableAndNamed) {
  class OnlySoftmax : public Backend {
   public:
    explicit OnlySoftmax(std::unique_ptr<Backend> inner) : inner_(std::move(inner)) {}
    std::string name() const override { return "only-softmax"; }
    std::string description() const override { return "softmax only"; }
    std::string unsupported(const Case& c, const Op&, ref::Format) const override {
      return c.op == "softmax" ? "" : "no only-softmax kernel for op " + c.op;
    }
    void run(const RunContext& ctx, std::vector<GuardedBuffer>& outputs) override {
      inner_->run(ctx, outputs);
    }

   private:
    std::unique_ptr<Backend> inner_;
  };
  std::unique_ptr<Backend> ref_f32;
  for (std::unique_ptr<Backend>& b : available_backends()) {
    if (b->name() == "ref-f32") ref_f32 = std::move(b);
  }
  ClaimContext ctx;
  ctx.backends = {
      {"only-softmax", std::nullopt, std::make_shared<OnlySoftmax>(std::move(ref_f32))}};
  const Claim* c13 = find_claim("C13");
  const ClaimEvidence ev = c13->evaluate(ctx);
  ASSERT_EQ(ev.backends.size(), 1u);
  EXPECT_FALSE(ev.backends[0].applicable);
  EXPECT_EQ(ev.backends[0].note,
            "n/a: no only-softmax kernel for op attention (the claim needs it)");
  // C17 runs softmax first, then online_softmax, which this backend lacks: n/a as a whole, not
  // a partial pass.
  const ClaimEvidence ev17 = find_claim("C17")->evaluate(ctx);
  EXPECT_FALSE(ev17.backends[0].applicable);
  EXPECT_NE(ev17.backends[0].note.find("online_softmax"), std::string::npos);
}

// The table names which claims ran on the kernel backend; counterexamples say reference only.
TEST(ClaimsKernel, ReportShowsWhichClaimsRanOnTheKernels) {
  const auto fast = fast_backends();
  ASSERT_FALSE(fast.empty());
  std::ostringstream out;
  ClaimsOptions o;
  o.backend = fast[0].name;
  EXPECT_EQ(run_claims(o, out), 0) << out.str();
  const std::string s = out.str();
  EXPECT_NE(s.find(fast[0].name + ": ok"), std::string::npos) << s;
  EXPECT_NE(s.find(fast[0].name + " ran "), std::string::npos) << s;
  EXPECT_NE(s.find("C09, C10, C11, C12"), std::string::npos) << s;
  EXPECT_NE(s.find(fast[0].name + ": n/a: reference only (a counterexample in exact arithmetic)"),
            std::string::npos)
      << s;
  EXPECT_EQ(s.find("FAILS"), std::string::npos) << s;
}

// verify's claims summary (summarize_claims): the kernel backends are among its backends, and a
// line per kernel backend says how many claims ran on its kernels.
TEST(ClaimsKernel, VerifySummaryIncludesTheKernelBackendsAndWhatRanThere) {
  const ClaimsSummary s = summarize_claims();
  const std::string text = to_text(s);
  EXPECT_EQ(s.fails, 0) << text;
  EXPECT_EQ(text.rfind("claims: 35 evaluated on ref, ref-f64, ", 0), 0u) << text;
  for (const ClaimBackend& b : fast_backends()) {
    EXPECT_NE(std::find(s.backends.begin(), s.backends.end(), b.name), s.backends.end()) << b.name;
    EXPECT_NE(text.find("\n  " + b.name + " ran "), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace lmo::oracle
