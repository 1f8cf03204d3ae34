// Drift audits (oracle/drift/drift.h) in quick mode: every row well formed, and the trend each audit
// exists to show, judged against bounds that come from outside the code (error analysis of the
// formats, their ranges, exact scaling identities) rather than from a previous run.
#include "oracle/drift/drift.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>

#include "oracle/core/case_error.h"
#include "oracle/drift/kernels.h"

namespace lmo::oracle {
namespace {

DriftResult quick(const std::string& name) {
  DriftOptions o;
  o.quick = true;
  return run_drift_audit(find_drift_audit(name), o, [](int64_t, int64_t, const std::string&) {});
}

double rel(const DriftResult& r, const std::string& panel, const std::string& policy, double x) {
  return drift_row(r, panel, policy, x).stats.norm_rel;
}

// Rows name declared panels and policies, each (panel, policy, x) once, and their figures agree:
// mean ≤ max ulps, significant bits = −log2(max relative error) within the format's [0, p], a
// non-finite output makes the relative errors infinite.
void expect_well_formed(const DriftResult& r) {
  ASSERT_FALSE(r.rows.empty());
  std::set<std::tuple<std::string, std::string, double>> seen;
  for (const DriftRow& row : r.rows) {
    SCOPED_TRACE(row.panel + " / " + row.policy + " / " + std::to_string(row.x));
    EXPECT_NE(std::find(r.panels.begin(), r.panels.end(), row.panel), r.panels.end());
    EXPECT_TRUE(std::any_of(r.policies.begin(), r.policies.end(),
                            [&](const DriftPolicy& p) { return p.name == row.policy; }));
    EXPECT_TRUE(seen.insert({row.panel, row.policy, row.x}).second);
    const DriftStats& s = row.stats;
    EXPECT_GT(s.compared + s.nonfinite, 0);
    EXPECT_LE(s.mean_ulps, s.max_ulps);
    EXPECT_GE(s.sig_bits, 0);
    EXPECT_LE(s.sig_bits, 53);
    if (s.nonfinite > 0) {
      EXPECT_TRUE(std::isinf(s.max_rel));
      EXPECT_TRUE(std::isinf(s.norm_rel));
      EXPECT_EQ(s.sig_bits, 0);
    } else if (s.max_rel >= 1) {
      EXPECT_EQ(s.sig_bits, 0);
    } else if (s.max_rel > 0) {
      // −log2(max_rel), clamped to at most the format's precision p; every format has p ≥ 3
      // (e5m2), so below 3 bits there is no clamp.
      EXPECT_LE(s.sig_bits, -std::log2(s.max_rel) + 1e-9);
      if (s.sig_bits < 3) EXPECT_NEAR(s.sig_bits, -std::log2(s.max_rel), 1e-9);
    }
  }
  // Every point of the sweep has every policy of a panel (a policy either runs on a panel or not).
  for (const std::string& panel : r.panels) {
    std::vector<double> xs;
    for (const DriftPolicy& p : r.policies) {
      const std::vector<double> v = drift_xs(r, panel, p.name);
      if (v.empty()) continue;
      if (xs.empty()) xs = v;
      EXPECT_EQ(v, xs) << panel << " / " << p.name;
    }
  }
}

TEST(Drift, RegistryNamesEveryAuditAndRejectsUnknownNames) {
  std::vector<std::string> names;
  for (const DriftAudit& a : drift_audits()) names.push_back(a.name);
  EXPECT_EQ(names, (std::vector<std::string>{"rope-position", "softmax-vocab", "norm-width",
                                             "gelu-bf16", "sinusoidal-identity", "fp8-activations",
                                             "attention-length", "mla-absorption"}));
  try {
    find_drift_audit("rope");
    FAIL() << "no error for an unknown audit";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--audit");
    EXPECT_NE(e.expectation().find("rope-position"), std::string::npos);
  }
}

// Every built-in audit's full sweep fits the default --max-cost (2e9, as verify's and golden's),
// so the default refuses none of them, and its quick sweep is cheaper than the full one.
TEST(Drift, CostEstimatesFitTheDefaultLimitAndQuickIsCheaper) {
  for (const DriftAudit& a : drift_audits()) {
    DriftOptions full, quick;
    quick.quick = true;
    EXPECT_GT(a.cost(quick), 0) << a.name;
    EXPECT_LT(a.cost(quick), a.cost(full)) << a.name;
    EXPECT_LE(a.cost(full), 2e9) << a.name;
    EXPECT_NO_THROW(check_drift_cost(a, full, 2e9)) << a.name;
    try {
      check_drift_cost(a, quick, a.cost(quick) / 2);
      ADD_FAILURE() << a.name << ": no error above the limit";
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), "--max-cost");
      EXPECT_NE(e.expectation().find("audit " + a.name + " (quick)"), std::string::npos)
          << e.expectation();
    }
  }
}

TEST(Drift, AccumulatorAgainstHandComputedErrors) {
  // bf16 outputs: 1 + 2^-7 is one ulp above 1; exact 1 + 2^-9 rounds to 1.
  DriftAccumulator a(ref::Format::bf16);
  a.add(ref::mp(1), 1.0 + 0x1p-7);           // 1 ulp, relative 2^-7
  a.add(ref::mp(1) + ref::mp(0x1p-9), 1.0);  // 0 ulps (correctly rounded), rel 2^-9/(1+2^-9)
  a.add(ref::mp(4), 4.0);                    // exact
  const DriftStats s = a.result();
  EXPECT_EQ(s.compared, 3);
  EXPECT_EQ(s.max_ulps, 1);
  EXPECT_DOUBLE_EQ(s.mean_ulps, 1.0 / 3);
  EXPECT_DOUBLE_EQ(s.max_rel, 0x1p-7);
  EXPECT_DOUBLE_EQ(s.sig_bits, 7);
  // Σ err² = 2^-14 + 2^-18 over Σ x² = 1 + (1 + 2^-9)² + 16.
  const double num = 0x1p-14 + 0x1p-18, den = 1 + (1 + 0x1p-9) * (1 + 0x1p-9) + 16;
  EXPECT_NEAR(s.norm_rel, std::sqrt(num / den), 1e-15);
  DriftAccumulator b(ref::Format::f16);
  b.add(ref::mp(1), 1e6);  // overflows f16: a non-finite output
  EXPECT_EQ(b.result().nonfinite, 1);
  EXPECT_TRUE(std::isinf(b.result().max_rel));
  EXPECT_EQ(b.result().sig_bits, 0);
}

TEST(Drift, RopePositionF32AnglesDegradeWithPositionF64AnglesDoNot) {
  const DriftResult r = quick("rope-position");
  expect_well_formed(r);
  const double u32 = 0x1p-24, u16 = 0x1p-11, ubf = 0x1p-8;
  for (const std::string& panel : r.panels) {
    SCOPED_TRACE(panel);
    const std::vector<double> xs = drift_xs(r, panel, "f32 angle");
    ASSERT_EQ(xs.front(), 1);
    ASSERT_EQ(xs.back(), 524288);
    // f32 angles: p·θ carries an absolute error ~p·2^-24, so the error at p ≈ 2^19 is orders of
    // magnitude above that at p < 2.
    EXPECT_GT(rel(r, panel, "f32 angle", xs.back()), 1000 * rel(r, panel, "f32 angle", 1));
    for (double x : xs) {
      SCOPED_TRACE(x);
      // f64 angles: cos/sin correctly rounded to f32 (u each), one product and one sum in f32
      // per output: a normwise error below 4u at every position.
      EXPECT_LT(rel(r, panel, "f64 angle", x), 4 * u32);
      // Tables stored in bf16/f16: bounded by the storage's rounding (cos, sin each within u of
      // the table's format, 2u together), at every position: flat, not growing.
      EXPECT_LT(rel(r, panel, "bf16 table", x), 2 * ubf);
      EXPECT_LT(rel(r, panel, "f16 table", x), 2 * u16);
    }
    // Positions below 256 are bf16 integers: a bf16 position is then the f32 angle policy.
    for (double x : xs) {
      if (x < 256) EXPECT_EQ(rel(r, panel, "bf16 position", x), rel(r, panel, "f32 angle", x));
    }
    // From 2^16 on a bf16 position is off by up to 2^8 − 1, i.e. ≥ 1 radian at θ_0 = 1.
    EXPECT_GT(rel(r, panel, "bf16 position", 524288), 0.1);
  }
}

TEST(Drift, SoftmaxVocabLowPrecisionSumsDegradeWithVocabulary) {
  const DriftResult r = quick("softmax-vocab");
  expect_well_formed(r);
  for (const char* scale : {", scale 1", ", scale 16"}) {
    const std::string sm = std::string("softmax") + scale;
    SCOPED_TRACE(sm);
    const std::vector<double> vs = drift_xs(r, sm, "bf16/bf16/bf16");
    ASSERT_EQ(vs.front(), 1024);
    ASSERT_EQ(vs.back(), 8192);
    // bf16 sums stagnate: error grows with the vocabulary (×8 here) ...
    EXPECT_GT(rel(r, sm, "bf16/bf16/bf16", 8192), 8 * rel(r, sm, "bf16/bf16/bf16", 1024));
    // ... and f32 sums stay ≥ 100× more accurate at the largest vocabulary.
    EXPECT_LT(100 * rel(r, sm, "f32/f32/f32", 8192), rel(r, sm, "bf16/bf16/bf16", 8192));
    for (double v : vs) {
      // With max-subtraction nothing overflows.
      for (const DriftPolicy& p : r.policies) {
        if (p.name.find("no max-sub") == std::string::npos) {
          EXPECT_EQ(drift_row(r, sm, p.name, v).stats.nonfinite, 0) << p.name;
        }
      }
      // Without it, e^z overflows f16 (max 65504 < e^11.1) for logits up to 16, not at scale 1.
      const int64_t overflowed = drift_row(r, sm, "f16/f16/f32 no max-sub", v).stats.nonfinite;
      if (std::string(scale) == ", scale 16") {
        EXPECT_GT(overflowed, 0);
      } else {
        EXPECT_EQ(overflowed, 0);
      }
    }
  }
  // The loss's log Z inherits the stagnating sum: the bf16 cross-entropy error grows too.
  EXPECT_GT(rel(r, "cross-entropy, scale 1", "bf16/bf16/bf16", 8192),
            2 * rel(r, "cross-entropy, scale 1", "bf16/bf16/bf16", 1024));
}

TEST(Drift, NormWidthAccumulationAndOnePassVariance) {
  const DriftResult r = quick("norm-width");
  expect_well_formed(r);
  const std::vector<double> ws = drift_xs(r, "RMSNorm, offset 0", "f32/f32/f32");
  ASSERT_EQ(ws.front(), 64);
  ASSERT_EQ(ws.back(), 4096);
  for (const std::string& panel : r.panels) {
    SCOPED_TRACE(panel);
    // bf16 sums of d terms stagnate: ×100 from width 64 to 4096 at offset 0; at offset 64
    // LayerNorm's bf16 deviations x − μ are already coarse at width 64, and still grow ×10.
    const double growth = panel == "LayerNorm, offset 64" ? 10 : 100;
    EXPECT_GT(rel(r, panel, "bf16/bf16/bf16", 4096), growth * rel(r, panel, "bf16/bf16/bf16", 64));
    for (double d : ws) {
      // Recursive f32 summation of d terms: relative error ≤ (d − 1)u (Higham, §4.2); the other
      // steps add a few u. Normwise error ≤ (d + 8)u at every width.
      EXPECT_LT(rel(r, panel, "f32/f32/f32", d), (d + 8) * 0x1p-24) << d;
    }
  }
  // f16 sums of squares at offset 64: 63² · 64 > 65504 overflows, 1/sqrt(inf) = 0, every output
  // is 0: normwise error exactly 1 at every width.
  for (double d : ws) EXPECT_EQ(rel(r, "RMSNorm, offset 64", "f16/f16/f16", d), 1) << d;
  // One-pass variance at offset 64 (μ²/σ² ≈ 1.2·10^4) against the two-pass definition.
  EXPECT_GT(rel(r, "LayerNorm, offset 64", "f32 one-pass", 4096),
            100 * rel(r, "LayerNorm, offset 64", "f32/f32/f32", 4096));
  // The one-pass policy exists only for LayerNorm.
  EXPECT_TRUE(drift_xs(r, "RMSNorm, offset 0", "f32 one-pass").empty());
}

TEST(Drift, GeluBf16TanhApproximationFailsForNegativeInputs) {
  const DriftResult r = quick("gelu-bf16");
  expect_well_formed(r);
  for (const std::string& panel : r.panels) {
    for (double x : drift_xs(r, panel, "gelu f32")) {
      // Exact GELU in f32 (erfc within a few f32 ulps), rounded to bf16: at most one bf16 ulp
      // from the correctly rounded value (a double rounding).
      EXPECT_LE(drift_row(r, panel, "gelu f32", x).stats.max_ulps, 1) << panel << " " << x;
    }
  }
  // x in [-8, -4): GELU(x) = xΦ(x) ≈ 10^-5 … 10^-15, GELU-tanh decays as e^{-0.14|x|³}: the
  // approximation has no correct significant bit left and is thousands of bf16 ulps away.
  const DriftStats& t = drift_row(r, "x < 0", "gelu-tanh f32", 4).stats;
  EXPECT_LT(t.sig_bits, 1);
  EXPECT_GT(t.max_ulps, 100);
  // x ≤ −32: exact GELU (< 10^-200) underflows every format to 0, so every output is 0 and its
  // relative error is exactly 1, even where the exact value underflows double too.
  for (const DriftPolicy& p : r.policies) {
    EXPECT_EQ(drift_row(r, "x < 0", p.name, 32).stats.norm_rel, 1) << p.name;
    EXPECT_EQ(drift_row(r, "x < 0", p.name, 32).stats.sig_bits, 0) << p.name;
  }
  // For x > 0 the approximation error (< 2·10^-4 absolute, C26) stays within a bf16 ulp.
  for (double x : drift_xs(r, "x > 0", "gelu-tanh f32")) {
    EXPECT_LE(drift_row(r, "x > 0", "gelu-tanh f32", x).stats.max_ulps, 1) << x;
  }
}

TEST(Drift, SinusoidalIdentityF32LeftSideDriftsRightSideDoesNot) {
  const DriftResult r = quick("sinusoidal-identity");
  expect_well_formed(r);
  const std::string& panel = r.panels.at(0);
  const std::vector<double> ps = drift_xs(r, panel, "PE·PE f32");
  ASSERT_EQ(ps.back(), 524288);
  // f32 angles near 2^19 carry ~2^-5 absolute error: the left side loses > 10 bits.
  EXPECT_GT(drift_row(r, panel, "PE·PE f32", 1).stats.sig_bits, 20);
  EXPECT_LT(drift_row(r, panel, "PE·PE f32", ps.back()).stats.sig_bits, 12);
  for (double p : ps) {
    // The right side depends on Δ < 64 only: accurate at every position, and so is the left
    // side from a table of f64 angles (d/2 terms of error ≤ 2u each).
    EXPECT_GT(drift_row(r, panel, "Σcos f32", p).stats.sig_bits, 20) << p;
    EXPECT_GT(drift_row(r, panel, "PE·PE f64 table", p).stats.sig_bits, 20) << p;
  }
}

TEST(Drift, Fp8ScaledStorageIsScaleInvariantUnscaledIsNot) {
  const DriftResult r = quick("fp8-activations");
  expect_well_formed(r);
  for (const std::string& panel : r.panels) {
    SCOPED_TRACE(panel);
    const std::vector<double> ss = drift_xs(r, panel, "e4m3 scaled");
    ASSERT_EQ(ss.front(), 0x1p-16);
    ASSERT_EQ(ss.back(), 0x1p16);
    // Power-of-two scales commute with f32 arithmetic and with rounding to fp8: the scaled
    // policies' figures are identical at every scale, and the store is one rounding (≤ 1 ulp
    // after the f32 computation's own rounding).
    for (const char* p : {"e4m3 scaled", "e5m2 scaled"}) {
      const DriftStats& first = drift_row(r, panel, p, ss.front()).stats;
      EXPECT_LE(first.max_ulps, 1) << p;
      for (double s : ss) {
        const DriftStats& st = drift_row(r, panel, p, s).stats;
        EXPECT_EQ(st.max_ulps, first.max_ulps) << p << " " << s;
        EXPECT_EQ(st.mean_ulps, first.mean_ulps) << p << " " << s;
        EXPECT_EQ(st.norm_rel, first.norm_rel) << p << " " << s;
      }
    }
    // Unscaled e4m3: activations ≤ 2^-16·3 lie below half its smallest subnormal 2^-9 and
    // flush to zero (normwise error 1); at 2^16 they saturate at 448 (error > 0.9).
    EXPECT_EQ(rel(r, panel, "e4m3 unscaled", 0x1p-16), 1);
    EXPECT_GT(rel(r, panel, "e4m3 unscaled", 0x1p16), 0.9);
    // In range (scale 1), unscaled and scaled storage are equally accurate to within 2×.
    EXPECT_LT(rel(r, panel, "e4m3 unscaled", 1), 2 * rel(r, panel, "e4m3 scaled", 1));
  }
}

TEST(Drift, AttentionLengthLowPrecisionSumsDegradeWithKeys) {
  const DriftResult r = quick("attention-length");
  expect_well_formed(r);
  const std::string& panel = r.panels.at(0);
  const std::vector<double> ts = drift_xs(r, panel, "naive bf16/bf16/bf16");
  ASSERT_EQ(ts.front(), 128);
  ASSERT_EQ(ts.back(), 1024);
  // bf16 sums over the keys stagnate: ×4 from 128 to 1024 keys, naive and online alike.
  for (const char* p : {"naive bf16/bf16/bf16", "online bf16/bf16/bf16"}) {
    EXPECT_GT(rel(r, panel, p, 1024), 4 * rel(r, panel, p, 128)) << p;
  }
  for (double t : ts) {
    // f32 sums: the outputs (near 1) keep the bf16 store's rounding, normwise below u = 2^-8,
    // whether the softmax is naive or online.
    EXPECT_LT(rel(r, panel, "naive bf16/bf16/f32", t), 0x1p-8) << t;
    EXPECT_LT(rel(r, panel, "online bf16/bf16/f32", t), 0x1p-8) << t;
  }
}

TEST(Drift, MlaAbsorptionBothFormsAtTheirFormatsPrecision) {
  const DriftResult r = quick("mla-absorption");
  expect_well_formed(r);
  const std::string& panel = r.panels.at(0);
  const std::vector<double> ts = drift_xs(r, panel, "naive f32");
  ASSERT_EQ(ts.front(), 16);
  ASSERT_EQ(ts.back(), 64);
  for (double t : ts) {
    SCOPED_TRACE(t);
    // Both forms equal the exact value (C21) up to their arithmetic: in f32 every stage is a dot
    // product of at most 64 terms (relative error ≤ 64u each), normwise far below 2^-18 …
    EXPECT_LT(rel(r, panel, "naive f32", t), 0x1p-18);
    EXPECT_LT(rel(r, panel, "absorbed f32", t), 0x1p-18);
    // … and in bf16 the error is of the order of bf16's unit roundoff 2^-8 (between 2^-10 and
    // 2^-4), in either form: absorption does not turn bf16 MLA into something else.
    for (const char* p : {"naive bf16/bf16/f32", "absorbed bf16/bf16/f32", "naive bf16/bf16/bf16",
                          "absorbed bf16/bf16/bf16"}) {
      EXPECT_GT(rel(r, panel, p, t), 0x1p-10) << p;
      EXPECT_LT(rel(r, panel, p, t), 0x1p-4) << p;
    }
  }
}

// The kernel policies (oracle/drift/kernels.h): every kernel backend of the build that runs here
// is audited through the Backend interface, its outputs follow the ops' own accuracy (error
// analysis, not a previous run), and a kernel that writes out of bounds or leaves an element
// unwritten is an error, not a figure.
std::vector<std::string> kernel_labels() {
  std::vector<std::string> out;
  for (const drift::KernelBackend& k : drift::kernel_backends()) out.push_back(k.label);
  return out;
}

bool has_policy(const DriftResult& r, const std::string& name) {
  for (const DriftPolicy& p : r.policies) {
    if (p.name == name) return true;
  }
  return false;
}

TEST(DriftKernels, FastAlwaysGpuWhenPresent) {
  const std::vector<std::string> labels = kernel_labels();
  ASSERT_FALSE(labels.empty());
  EXPECT_EQ(labels.front(), "fast");
  bool gpu_backend = false;
  for (const auto& b : available_backends()) gpu_backend |= b->name() == "gpu";
  EXPECT_EQ(labels.size(), gpu_backend ? 2u : 1u);
  if (gpu_backend) {
    EXPECT_EQ(labels.back(), "gpu");
  }
}

// f32 compute stored to bf16: the kernels' f32 error (a few u = 2^-24 per reduction step, rows
// up to 4096 wide: well under 2^-12 relative) is far below half a bf16 ulp (2^-9 relative), so
// every stored output is within one bf16 ulp of the exact value.
TEST(DriftKernels, NormsAndSoftmaxWithinOneBf16UlpOnEveryKernelBackend) {
  const DriftResult norms = quick("norm-width");
  const DriftResult sm = quick("softmax-vocab");
  for (const std::string& k : kernel_labels()) {
    SCOPED_TRACE(k);
    ASSERT_TRUE(has_policy(norms, k + " f32"));
    ASSERT_TRUE(has_policy(norms, k + " bf16"));
    ASSERT_TRUE(has_policy(sm, k + " bf16"));
    int rows = 0;
    for (const DriftRow& row : norms.rows) {
      if (row.policy != k + " bf16") continue;
      EXPECT_LE(row.stats.max_ulps, 1.0) << row.panel << " " << row.x;
      EXPECT_EQ(row.stats.nonfinite, 0);
      ++rows;
    }
    for (const DriftRow& row : sm.rows) {
      if (row.policy != k + " bf16" || row.panel.rfind("softmax", 0) != 0) continue;
      EXPECT_LE(row.stats.max_ulps, 1.0) << row.panel << " " << row.x;
      ++rows;
    }
    EXPECT_GT(rows, 0);
  }
}

// A deliberately wrong kernel library: writes past its output, or skips an element.
class BrokenBackend : public Backend {
 public:
  explicit BrokenBackend(bool overrun) : overrun_(overrun) {}
  std::string name() const override { return overrun_ ? "overrun" : "skip"; }
  std::string description() const override { return "a broken kernel"; }
  std::string unsupported(const Case&, const Op&, ref::Format) const override { return ""; }
  void run(const RunContext&, std::vector<GuardedBuffer>& out) override {
    auto* y = static_cast<float*>(out[0].data());
    const int64_t n = out[0].numel();
    for (int64_t i = 0; i < n; ++i) y[i] = 1.0f;
    if (overrun_) {
      y[n] = 2.0f;  // inside the back guard: the buffer owns those bytes
    } else {
      out[0].arm();  // every element poisoned again: none written
      y[0] = 1.0f;
    }
  }

 private:
  bool overrun_;
};

void expect_error(Backend& b, const std::string& what) {
  const std::vector<double> x(64, 1.0), g(64, 1.0);
  try {
    drift::run_kernel(b, "rmsnorm", {{"rows", 1}, {"d", 64}, {"eps", 1e-6}}, ref::Format::f32,
                      {{"x", x, {}}, {"gamma", g, {}}});
    ADD_FAILURE() << "no error for " << b.name();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(b.name()), std::string::npos) << e.what();
  }
}

TEST(DriftKernels, OutOfBoundsWriteAndUnwrittenElementAreErrors) {
  BrokenBackend overrun(true), skip(false);
  expect_error(overrun, "wrote past output 'y'");
  expect_error(skip, "left element 1 of output 'y'");
}

TEST(DriftKernels, CorrectKernelOutputsAreReturnedAsStored) {
  std::vector<drift::KernelBackend> ks = drift::kernel_backends();
  // RMSNorm of a constant row: x / sqrt(x² + ε) with ε = 0 is exactly 1 · γ.
  const std::vector<double> x(64, 3.0), g(64, 0.5);
  const std::vector<ref::Tensor> y =
      drift::run_kernel(*ks.front().backend, "rmsnorm", {{"rows", 1}, {"d", 64}, {"eps", 0.0}},
                        ref::Format::bf16, {{"x", x, {}}, {"gamma", g, {}}});
  ASSERT_EQ(y.size(), 1u);
  ASSERT_EQ(y[0].numel(), 64);
  for (int64_t i = 0; i < 64; ++i) EXPECT_EQ(y[0].get(i), 0.5) << i;
}

}  // namespace
}  // namespace lmo::oracle
