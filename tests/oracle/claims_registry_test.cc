// The claims registry itself: one entry per C- and E-row of the catalog, each evaluator returns
// its expected status, counterexamples print concrete values, and a deliberately broken identity
// is reported as FAILS.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "oracle/claims/claims.h"
#include "oracle/claims/eval.h"
#include "oracle/claims/report.h"
#include "reference/rope.h"

namespace lmo::oracle {
namespace {

// The C- and E-row IDs of FORMULAS.md (../shared/ next to the repository, or shared/ inside a
// checkout that carries it): rows of the form "| C05 | …".
std::vector<std::string> catalog_ids() {
  for (const char* rel : {"/../shared/FORMULAS.md", "/shared/FORMULAS.md"}) {
    std::ifstream in(std::string(LMO_SOURCE_DIR) + rel);
    if (!in) continue;
    std::vector<std::string> ids;
    const std::regex row(R"(^\| ([CE]\d\d) \|)");
    std::string line;
    std::smatch m;
    while (std::getline(in, line)) {
      if (std::regex_search(line, m, row)) ids.push_back(m[1]);
    }
    return ids;
  }
  return {};
}

TEST(ClaimsRegistry, EveryCatalogClaimAndErratumHasExactlyOneEntry) {
  const std::vector<std::string> ids = catalog_ids();
  if (ids.empty()) GTEST_SKIP() << "FORMULAS.md not found next to " << LMO_SOURCE_DIR;
  std::map<std::string, int> entries;
  for (const Claim& c : claims_registry()) ++entries[c.id];
  for (const std::string& id : ids) EXPECT_EQ(entries[id], 1) << id;
  EXPECT_EQ(entries.size(), ids.size()) << "the registry has entries the catalog does not";
}

TEST(ClaimsRegistry, IdsAreC01ToC27AndE01ToE08InOrder) {
  std::vector<std::string> want;
  for (int i = 1; i <= 27; ++i) want.push_back((i < 10 ? "C0" : "C") + std::to_string(i));
  for (int i = 1; i <= 8; ++i) want.push_back("E0" + std::to_string(i));
  std::vector<std::string> got;
  for (const Claim& c : claims_registry()) {
    got.push_back(c.id);
    EXPECT_FALSE(c.source.empty()) << c.id;
    EXPECT_FALSE(c.statement.empty()) << c.id;
    EXPECT_FALSE(c.float_bound.empty()) << c.id;
    EXPECT_TRUE(c.evaluate) << c.id;
  }
  EXPECT_EQ(got, want);
  EXPECT_NE(find_claim("C05"), nullptr);
  EXPECT_EQ(find_claim("C99"), nullptr);
}

// Counterexample claims: C03, C04, C22 (a property fails) and every erratum.
bool is_counterexample_row(const std::string& id) {
  return id == "C03" || id == "C04" || id == "C22" || id[0] == 'E';
}

class EveryClaim : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryClaim, ReturnsItsExpectedStatusOnEveryBackend) {
  const Claim* c = find_claim(GetParam());
  ASSERT_NE(c, nullptr);
  ClaimContext ctx;
  ctx.backends = claim_backends();
  const ClaimEvidence ev = c->evaluate(ctx);
  const ClaimStatus want = c->id[0] == 'E' ? ClaimStatus::kErratumShown : ClaimStatus::kHolds;
  EXPECT_EQ(ev.status, want) << claim_json(*c, ev).dump(2);
  EXPECT_GT(ev.trials, 0);
  ASSERT_FALSE(ev.backends.empty());
  EXPECT_EQ(c->kind == ClaimKind::kCounterexample, is_counterexample_row(c->id));
  if (is_counterexample_row(c->id)) {
    ASSERT_TRUE(ev.counterexample.has_value()) << c->id;
    const Counterexample& x = *ev.counterexample;
    EXPECT_FALSE(x.inputs.empty());
    // Two concrete numbers that differ.
    const std::regex number(R"(-?\d+(\.\d+)?(e[-+]?\d+)?)");
    EXPECT_TRUE(std::regex_search(x.first, number)) << x.first;
    EXPECT_TRUE(std::regex_search(x.second, number)) << x.second;
    EXPECT_NE(x.first, x.second);
  } else if (ev.backends[0].backend != "exact") {
    // Identities and bounds: mp and all seven float formats, each judged, then one row per
    // kernel backend (claims_kernel_test.cc checks those).
    ASSERT_EQ(ev.backends.size(), ctx.backends.size()) << c->id;
    EXPECT_EQ(ev.backends[0].backend, "ref");
    EXPECT_LT(ev.backends[0].ratio, 1.0) << c->id;  // mp residual < 1e-40 · scale
    for (size_t i = 0; i < 8; ++i) EXPECT_FALSE(ctx.backends[i].kernel) << i;
    for (const BackendEvidence& b : ev.backends) EXPECT_TRUE(b.ok) << c->id << " " << b.backend;
  }
}

std::vector<std::string> all_ids() {
  std::vector<std::string> ids;
  for (const Claim& c : claims_registry()) ids.push_back(c.id);
  return ids;
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryClaim, ::testing::ValuesIn(all_ids()),
                         [](const auto& info) { return info.param; });

// C05 evaluated on a deliberately broken formula: the second pair shifted by s + 1 on one side.
ClaimEvidence broken_c05(const ClaimContext& ctx) {
  using namespace claims;
  return run_identity(ctx, 4, FloatBound::kAnalysis, [&]<class N>(int t, IdentityCheck& c) {
    const auto q = uniform<N>(ctx.seed, key("broken", "q", t), 4, -1, 1);
    const auto k = uniform<N>(ctx.seed, key("broken", "k", t), 4, -1, 1);
    const std::vector<N> th{exact_input<N>(mp(1)), exact_input<N>(mp("0.01"))};
    auto rot = [&](const std::vector<N>& x, int64_t p) {
      return ref::rope(std::span<const N>(x), ref::rope_position<N>(p), std::span<const N>(th),
                       ref::RopeLayout::kInterleaved);
    };
    auto dot = [](const std::vector<N>& a, const std::vector<N>& b) {
      return ref::dot<N>(std::span<const N>(a), std::span<const N>(b));
    };
    c.add(dot(rot(q, 3), rot(k, 1)), dot(rot(q, 3 + 5), rot(k, 1 + 5 + 1)), mp(1));
  },
      ReferenceOnly{"a test-local formula"});
}

// The reference backends of claim_backends(): ref and the seven ref-<format>.
std::vector<ClaimBackend> reference_backends() {
  std::vector<ClaimBackend> out;
  for (ClaimBackend& b : claim_backends()) {
    if (!b.kernel) out.push_back(std::move(b));
  }
  return out;
}

TEST(ClaimsRegistry, ABrokenIdentityFailsInMpAndInEveryFloatFormatWithSmallBounds) {
  ClaimContext ctx;
  ctx.backends = reference_backends();
  const ClaimEvidence ev = broken_c05(ctx);
  EXPECT_EQ(ev.status, ClaimStatus::kFails);
  ASSERT_EQ(ev.backends.size(), 8u);
  EXPECT_FALSE(ev.backends[0].ok);  // mp
  EXPECT_GT(ev.backends[0].residual, 1e-3);
  EXPECT_FALSE(ev.backends[1].ok);  // f64: the bound is ~1e-15, the error ~1e-1
  EXPECT_FALSE(ev.backends[2].ok);  // f32
}

TEST(ClaimsRegistry, ABitwiseClaimFailsOnTheSmallestDifference) {
  using namespace claims;
  ClaimContext ctx;
  ctx.backends = reference_backends();
  const ClaimEvidence ev =
      run_identity(ctx, 2, FloatBound::kBitwise, [&]<class N>(int t, IdentityCheck& c) {
        const auto x = uniform<N>(ctx.seed, key("broken", "x", t), 3, 1, 2);
        // (x0 + x1) + x2 against x0 + (x1 + x2): not the same operations, so not bitwise.
        c.add(N(N(x[0] + x[1]) + x[2]), N(x[0] + N(x[1] + x[2])), mp(1));
        c.add(N(x[0] * N(3)), N(N(x[0] + x[0]) + N(x[0] + x[0]) - x[0]), mp(1));
      },
      ReferenceOnly{"a test-local formula"});
  EXPECT_EQ(ev.status, ClaimStatus::kFails);
  EXPECT_TRUE(ev.backends[0].ok);  // exact in mp
}

TEST(ClaimsRegistry, RunClaimsPrintsJsonAndRejectsUnknownIdsAndBackends) {
  std::ostringstream out;
  ClaimsOptions o;
  o.id = "E02";
  o.json = true;
  EXPECT_EQ(run_claims(o, out), 0);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["id"], "E02");
  EXPECT_EQ(j[0]["status"], "erratum shown");
  EXPECT_TRUE(j[0].contains("evidence"));
  EXPECT_TRUE(j[0].contains("counterexample"));
  o.id = "C99";
  EXPECT_THROW(run_claims(o, out), std::invalid_argument);
  o.id = "C05";
  o.backend = "fast-avx9";
  try {
    run_claims(o, out);
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--backend"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("ref-bf16"), std::string::npos);
  }
}

TEST(ClaimsRegistry, DeterministicAcrossRuns) {
  ClaimContext ctx;
  ctx.backends = claim_backends();
  const Claim* c = find_claim("C17");
  EXPECT_EQ(claim_json(*c, c->evaluate(ctx)).dump(), claim_json(*c, c->evaluate(ctx)).dump());
}

}  // namespace
}  // namespace lmo::oracle
