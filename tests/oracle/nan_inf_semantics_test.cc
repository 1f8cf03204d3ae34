// Every row of docs/nan-inf.md on every backend of this build (available_backends(): ref,
// ref-f64, ref-f32, the naive ref-bf16 on bf16 storage, each fast-<target>, and gpu when it joins),
// in f32 and bf16 storage. Each row gives an op inputs holding NaN, ±inf, masked (−inf) logits,
// a zero vector or a constant row, and states the class of every output element as the table
// does: NaN, +inf, −inf, +0, −0, an exact value, or finite. Every backend that runs the op must
// produce exactly those classes, and every backend of the default run must also pass the oracle's
// own judging against the exact reference (NaN parity, same-signed infinities, then the policy).
//
// The expectations are written from the formulas (IEEE-754 evaluation of the catalog formula,
// the rule docs/nan-inf.md states), not read from the reference: the ref backend is tested
// against them like any other.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "oracle/backends/backend.h"
#include "oracle/cases/case.h"
#include "oracle/verify/verify.h"
#include "reference/attention.h"
#include "reference/formats.h"
#include "reference/number_types.h"

namespace lmo::oracle {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// The class the table states for one output element.
enum class Want : uint8_t { kNaN, kPosInf, kNegInf, kPosZero, kNegZero, kFinite, kValue };
struct Expect {
  Want want;
  double value = 0;  // kValue: exactly this (a value every storage format holds)
};
const Expect NaN{Want::kNaN}, PosInf{Want::kPosInf}, NegInf{Want::kNegInf}, PosZero{Want::kPosZero},
    NegZero{Want::kNegZero}, Finite{Want::kFinite};
Expect Value(double v) { return {Want::kValue, v}; }

std::string describe(const Expect& e) {
  switch (e.want) {
    case Want::kNaN:
      return "NaN";
    case Want::kPosInf:
      return "+inf";
    case Want::kNegInf:
      return "-inf";
    case Want::kPosZero:
      return "+0";
    case Want::kNegZero:
      return "-0";
    case Want::kFinite:
      return "finite";
    case Want::kValue:
      return std::to_string(e.value);
  }
  return "?";
}

bool matches(const Expect& e, double y) {
  switch (e.want) {
    case Want::kNaN:
      return std::isnan(y);
    case Want::kPosInf:
      return y == kInf;
    case Want::kNegInf:
      return y == -kInf;
    case Want::kPosZero:
      return y == 0 && !std::signbit(y);
    case Want::kNegZero:
      return y == 0 && std::signbit(y);
    case Want::kFinite:
      return std::isfinite(y);
    case Want::kValue:
      return y == e.value;
  }
  return false;
}

std::vector<Expect> repeat(size_t n, Expect e) { return std::vector<Expect>(n, e); }
std::vector<double> filled(size_t n, double v) { return std::vector<double>(n, v); }
template <class T>
std::vector<T> join(std::vector<std::vector<T>> parts) {
  std::vector<T> out;
  for (auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

struct Row {
  std::string id;  // the table's row
  std::string op;
  nlohmann::json params;
  std::map<std::string, std::vector<double>> reals;  // every real input, row-major
  std::map<std::string, std::vector<int64_t>> ints;  // every integer input
  std::vector<std::vector<Expect>> outputs;          // per OutputDecl, in order
};

// The elementwise ops on x = [NaN, +inf, −inf, −0, +0, 1]; the GELUs and SiLU give NaN at −inf
// (−inf·0: the formula's invalid operation, kept, docs/nan-inf.md says why).
const std::vector<double> kSpecials = {kNaN, kInf, -kInf, -0.0, 0.0, 1.0};

std::vector<Row> elementwise_rows() {
  const nlohmann::json n6 = {{"n", 6}};
  std::vector<Row> rows;
  rows.push_back({"relu",
                  "relu",
                  n6,
                  {{"x", kSpecials}},
                  {},
                  {{NaN, PosInf, PosZero, PosZero, PosZero, Value(1)}}});
  for (const char* op : {"gelu", "gelu_tanh", "silu"}) {
    rows.push_back(
        {op, op, n6, {{"x", kSpecials}}, {}, {{NaN, PosInf, NaN, NegZero, PosZero, Finite}}});
  }
  rows.push_back({"softcap",
                  "softcap",
                  {{"n", 6}, {"cap", 30}},
                  {{"z", kSpecials}},
                  {},
                  {{NaN, Value(30), Value(-30), NegZero, PosZero, Finite}}});
  // GLU gates act(a)·b: a NaN gate or value, act(±inf)·1, and 0·inf.
  const std::vector<double> a = {kNaN, 1, kInf, -kInf, 0, 1};
  const std::vector<double> b = {1, kNaN, 1, 1, kInf, -kInf};
  rows.push_back({"reglu_gate",
                  "reglu_gate",
                  n6,
                  {{"a", a}, {"b", b}},
                  {},
                  {{NaN, NaN, PosInf, PosZero, NaN, NegInf}}});
  for (const char* op : {"geglu_gate", "geglu_tanh_gate", "swiglu_gate"}) {
    rows.push_back({op, op, n6, {{"a", a}, {"b", b}}, {}, {{NaN, NaN, PosInf, NaN, NaN, NegInf}}});
  }
  return rows;
}

// Norms over rows of d = 4 with γ = 1 (β = 0): a NaN row, an infinite element (x_i/rms with
// rms = inf: 0 with the sign of x_i, NaN at the infinite element), a finite row; with ε = 0 a
// zero row (RMSNorm: 0/0) and a constant row (LayerNorm: 0/0).
std::vector<Row> norm_rows() {
  std::vector<Row> rows;
  const std::vector<double> nan_row = {1, kNaN, -2, 3};
  const std::vector<double> inf_row = {1, kInf, -2, 3};
  const std::vector<double> ninf_row = {-1, -kInf, 2, 0};
  const std::vector<double> finite = {1, -2, 3, 0.5};
  const std::vector<Expect> inf_rms = {PosZero, NaN, NegZero, PosZero};
  const std::vector<Expect> ninf_rms = {NegZero, NaN, PosZero, PosZero};
  for (const char* op : {"rmsnorm", "rmsnorm_gemma"}) {
    // rmsnorm_gemma scales by (1 + γ): γ = 0 keeps the unit scale.
    const double g = std::string(op) == "rmsnorm" ? 1 : 0;
    rows.push_back(
        {std::string(op) + " eps=1e-6",
         op,
         {{"rows", 4}, {"d", 4}, {"eps", 1e-6}},
         {{"x", join<double>({nan_row, inf_row, ninf_row, finite})}, {"gamma", filled(4, g)}},
         {},
         {join<Expect>({repeat(4, NaN), inf_rms, ninf_rms, repeat(4, Finite)})}});
    rows.push_back({std::string(op) + " eps=0",
                    op,
                    {{"rows", 2}, {"d", 4}, {"eps", 0}},
                    {{"x", join<double>({filled(4, 0.0), finite})}, {"gamma", filled(4, g)}},
                    {},
                    {join<Expect>({repeat(4, NaN), repeat(4, Finite)})}});
  }
  // LayerNorm: an infinite element makes μ infinite and every x − μ NaN or infinite, σ² NaN.
  rows.push_back({"layernorm eps=1e-6",
                  "layernorm",
                  {{"rows", 4}, {"d", 4}, {"eps", 1e-6}},
                  {{"x", join<double>({nan_row, inf_row, ninf_row, finite})},
                   {"gamma", filled(4, 1)},
                   {"beta", filled(4, 0)}},
                  {},
                  {join<Expect>({repeat(12, NaN), repeat(4, Finite)})}});
  // A constant row whose mean every backend forms exactly (4 × 2 = 8, 8/4 = 2): x − μ = 0, σ = 0.
  rows.push_back({"layernorm eps=0",
                  "layernorm",
                  {{"rows", 2}, {"d", 4}, {"eps", 0}},
                  {{"x", join<double>({filled(4, 2.0), finite})},
                   {"gamma", filled(4, 1)},
                   {"beta", filled(4, 0)}},
                  {},
                  {join<Expect>({repeat(4, NaN), repeat(4, Finite)})}});
  return rows;
}

// Rows of n = 4 logits: all −inf, two masked (−inf) entries, one +inf, one NaN, +inf with −inf.
std::vector<double> logit_rows() {
  return join<double>({filled(4, -kInf),
                       {-kInf, 1, -kInf, 2},
                       {0, kInf, 1, 2},
                       {0, 1, kNaN, 2},
                       {-kInf, kInf, -kInf, 1}});
}

std::vector<Row> softmax_rows() {
  std::vector<Row> rows;
  const nlohmann::json p = {{"rows", 5}, {"n", 4}};
  for (const char* op : {"softmax", "online_softmax"}) {
    nlohmann::json q = p;
    if (std::string(op) == "online_softmax") q["tile"] = 2;
    rows.push_back({op,
                    op,
                    q,
                    {{"z", logit_rows()}},
                    {},
                    {join<Expect>({repeat(4, NaN),
                                   {PosZero, Finite, PosZero, Finite},
                                   repeat(4, NaN),
                                   repeat(4, NaN),
                                   repeat(4, NaN)})}});
  }
  rows.push_back({"logsumexp",
                  "logsumexp",
                  p,
                  {{"z", logit_rows()}},
                  {},
                  {{NegInf, Finite, PosInf, NaN, PosInf}}});
  // The fused loss −z_t + log Z + λ·(log Z)² (λ = 0 here), log Z, and the gradient
  // p − onehot(t) + 2λ·log Z·p: all −inf (∞ − ∞); a masked target (+inf loss, finite gradient:
  // p_t = 0); +inf off the target (log Z = +inf, so λ·(log Z)² = 0·∞ is NaN even at λ = 0, and
  // p is NaN); +inf at the target (∞ − ∞); NaN.
  rows.push_back({"cross_entropy",
                  "cross_entropy",
                  {{"rows", 5}, {"vocab", 4}},
                  {{"z", join<double>({filled(4, -kInf),
                                       {-kInf, 1, -kInf, 2},
                                       {0, kInf, 1, 2},
                                       {0, 1, kNaN, 2},
                                       {-kInf, kInf, -kInf, 1}})}},
                  {{"target", {0, 0, 0, 0, 1}}},
                  {{NaN, PosInf, NaN, NaN, NaN},
                   {NegInf, Finite, PosInf, NaN, PosInf},
                   join<Expect>({repeat(4, NaN),
                                 {Value(-1), Finite, PosZero, Finite},
                                 repeat(4, NaN),
                                 repeat(4, NaN),
                                 repeat(4, NaN)})}});
  return rows;
}

// Causal attention over 3 tokens (h = g = 1, d = 2): a NaN in the last key's value reaches only
// the last query (the only one that sees it); a masked key never enters a row, so its NaN does
// not leak through 0·NaN.
std::vector<Row> attention_rows() {
  std::vector<Row> rows;
  const nlohmann::json p = {{"h", 1}, {"g", 1}, {"d", 2}, {"tokens", 3}, {"mask", "causal"}};
  const std::vector<double> q = {0.5, -1, 1, 0.25, -0.5, 2};
  const std::vector<double> k = {1, 0, 0, 1, 1, 1};
  rows.push_back({"attention masked NaN value",
                  "attention",
                  p,
                  {{"q", q}, {"k", k}, {"v", {1, 2, 3, 4, kNaN, 6}}},
                  {},
                  {join<Expect>({repeat(4, Finite), {NaN, Finite}})}});
  rows.push_back({"attention masked NaN key",
                  "attention",
                  p,
                  {{"q", q}, {"k", {1, 0, 0, 1, kNaN, 1}}, {"v", {1, 2, 3, 4, 5, 6}}},
                  {},
                  {join<Expect>({repeat(4, Finite), repeat(2, NaN)})}});
  // Decoding with a window of 2 over a cache of 3: the query sees keys 1 and 2, so NaN in the
  // oldest key and value (outside the window) leaves its output finite; NaN in key 2 does not.
  const nlohmann::json w = {{"h", 1}, {"g", 1}, {"d", 2}, {"cache_len", 3}, {"window", 2}};
  rows.push_back(
      {"attention_decode NaN outside the window",
       "attention_decode",
       w,
       {{"q", {0.5, -1}}, {"k", {kNaN, kNaN, 0, 1, 1, 1}}, {"v", {kNaN, kNaN, 3, 4, 5, 6}}},
       {},
       {{Finite, Finite}}});
  rows.push_back({"attention_decode NaN inside the window",
                  "attention_decode",
                  w,
                  {{"q", {0.5, -1}}, {"k", {1, 0, 0, 1, kNaN, 1}}, {"v", {1, 2, 3, 4, 5, 6}}},
                  {},
                  {{NaN, NaN}}});
  return rows;
}

// fp8: a NaN in a group makes its amax and scale NaN and every q of it NaN; an infinite amax
// makes the scale +∞ and x/∞ = ±0 (∞/∞ = NaN). Dequantization is one product: NaN·s, 0·∞, q·∞.
std::vector<Row> fp8_rows() {
  std::vector<Row> rows;
  rows.push_back({"fp8_quantize NaN and -inf groups",
                  "fp8_quantize",
                  {{"rows", 1}, {"cols", 8}, {"scaling", "group"}, {"group", 4}},
                  {{"x", {1, kNaN, 2, 3, 4, -5, 6, -kInf}}},
                  {},
                  {{NaN, NaN, NaN, NaN, PosZero, NegZero, PosZero, NaN}, {NaN, PosInf}}});
  rows.push_back({"fp8_dequantize NaN and an infinite scale",
                  "fp8_dequantize",
                  {{"rows", 2}, {"cols", 2}, {"scaling", "token"}},
                  {{"q", {kNaN, 1, -2, 0}}, {"scales", {2, kInf}}},
                  {},
                  {{NaN, Value(2), NegInf, NaN}}});
  return rows;
}

std::vector<Row> all_rows() {
  return join<Row>({elementwise_rows(), norm_rows(), softmax_rows(), attention_rows(), fp8_rows()});
}

// One case per storage format: an op whose outputs have formats of their own (fp8_quantize)
// takes one format per case.
Case make_case(const Row& row, ref::Format storage) {
  const nlohmann::json j = {{"id", "nan-inf/x"},
                            {"op", row.op},
                            {"seed", 0},
                            {"formats", {std::string(ref::format_name(storage))}},
                            {"params", row.params}};
  return parse_case(j, "nan_inf_semantics_test", row.id);
}

InputSet make_inputs(const Row& row, const Op& op, ref::Format storage) {
  InputSet in;
  for (const InputDecl& d : op.inputs()) {
    ref::Tensor t(d.dtype ? *d.dtype : ref::format_dtype(storage), d.shape);
    if (ref::is_float(t.dtype())) {
      const std::vector<double>& v = row.reals.at(d.name);
      EXPECT_EQ(static_cast<int64_t>(v.size()), t.numel()) << row.id << " " << d.name;
      for (int64_t i = 0; i < t.numel(); ++i) t.set(i, v[static_cast<size_t>(i)]);
    } else {
      const std::vector<int64_t>& v = row.ints.at(d.name);
      EXPECT_EQ(static_cast<int64_t>(v.size()), t.numel()) << row.id << " " << d.name;
      for (int64_t i = 0; i < t.numel(); ++i)
        t.set(i, static_cast<double>(v[static_cast<size_t>(i)]));
    }
    in.add(d.name, std::move(t));
  }
  return in;
}

TEST(NanInfSemantics, EveryRowOnEveryBackend) {
  const std::vector<std::unique_ptr<Backend>> backends = available_backends();
  ASSERT_GE(backends.size(), 3u);
  int64_t checked = 0;
  for (const Row& row : all_rows()) {
    SCOPED_TRACE(row.id);
    for (ref::Format storage : {ref::Format::f32, ref::Format::bf16}) {
      const Case c = make_case(row, storage);
      const std::unique_ptr<Op> op = make_op(c);
      const std::vector<OutputDecl> decls = op->outputs();
      ASSERT_EQ(decls.size(), row.outputs.size());
      const InputSet in = make_inputs(row, *op, storage);
      std::optional<Outputs<ref::mp>> exact;
      std::map<ref::Format, Outputs<double>> simulated;
      const RunContext ctx{c,
                           *op,
                           storage,
                           in,
                           [&]() -> const Outputs<ref::mp>& {
                             if (!exact) exact = op->exact(in);
                             return *exact;
                           },
                           [&](ref::Format f) -> const Outputs<double>& {
                             auto it = simulated.find(f);
                             if (it == simulated.end()) {
                               it = simulated.emplace(f, op->simulated(f, in)).first;
                             }
                             return it->second;
                           }};
      for (const auto& b : backends) {
        const std::string why = b->unsupported(c, *op, storage);
        if (!why.empty()) {
          // Only a backend without a kernel for the op ("no fast kernel for <op>"; the GPU
          // backend says the same of its missing ones) or a naive backend's other format may
          // skip a row: a kernel that exists must face the table.
          EXPECT_TRUE(why.find("kernel for " + row.op) != std::string::npos ||
                      why.rfind("a naive ", 0) == 0)
              << b->name() << ": " << why;
          continue;
        }
        const std::string where = b->name() + " on " + std::string(ref::format_name(storage));
        std::vector<GuardedBuffer> bufs;
        for (const OutputDecl& d : decls) {
          bufs.emplace_back(ref::format_dtype(output_format(d, storage)), d.shape);
          bufs.back().arm();
        }
        b->run(ctx, bufs);
        for (size_t k = 0; k < decls.size(); ++k) {
          const ref::Tensor& t = bufs[k].tensor();
          ASSERT_EQ(static_cast<size_t>(t.numel()), row.outputs[k].size()) << decls[k].name;
          for (int64_t i = 0; i < t.numel(); ++i) {
            const Expect& e = row.outputs[k][static_cast<size_t>(i)];
            EXPECT_TRUE(matches(e, t.get(i)))
                << where << ": " << decls[k].name << "[" << i << "] = " << t.get(i)
                << ", the table says " << describe(e);
          }
        }
        ++checked;
        // And the oracle's own verdict against the exact reference (the naive ref-<narrow>
        // backends are expected to fail policies, so only the default run is judged).
        if (b->in_default_run()) {
          const VerifyRow v = run_and_judge(c, *op, storage, *b, ctx);
          EXPECT_TRUE(v.pass) << where << ": " << v.detail;
        }
      }
    }
  }
  // Every row ran at least on ref, ref-f64 and ref-f32 in both formats.
  EXPECT_GE(checked, static_cast<int64_t>(all_rows().size()) * 2 * 3);
}

// A fully masked attention row (no visible key) is 0/0: NaN in every component. No op of the
// oracle makes one (every query sees at least itself), so the row is checked on the reference
// functions behind ref (mp), ref-f64 (double) and ref-f32 (the f32 simulation): causal attention
// with T_q = 3 queries over T_k = 2 keys puts query 0 at position −1, before every key.
template <class T>
void expect_fully_masked_row_is_nan() {
  ref::AttentionConfig cfg;
  cfg.heads = 1;
  cfg.kv_heads = 1;
  cfg.head_dim = 2;
  cfg.mask = ref::MaskKind::kCausal;
  const ref::Mat<T> q(3, 2, std::vector<T>{T(1), T(0), T(0), T(1), T(1), T(1)});
  const ref::Mat<T> k(2, 2, std::vector<T>{T(1), T(0), T(0), T(1)});
  const ref::Mat<T> v(2, 2, std::vector<T>{T(1), T(2), T(3), T(4)});
  const ref::Mat<T> o = ref::attention<T>(q, k, v, cfg);
  for (int64_t c = 0; c < 2; ++c) {
    EXPECT_TRUE(std::isnan(ref::to_double(o(0, c)))) << c;  // query 0 sees no key
    EXPECT_TRUE(std::isfinite(ref::to_double(o(1, c)))) << c;
    EXPECT_TRUE(std::isfinite(ref::to_double(o(2, c)))) << c;
  }
  const std::vector<ref::Mat<T>> p = ref::attention_probs<T>(q, k, cfg);
  for (int64_t j = 0; j < 2; ++j) EXPECT_TRUE(std::isnan(ref::to_double(p[0](0, j)))) << j;
}

TEST(NanInfSemantics, FullyMaskedAttentionRowIsNanInTheReference) {
  expect_fully_masked_row_is_nan<ref::mp>();
  expect_fully_masked_row_is_nan<double>();
  expect_fully_masked_row_is_nan<ref::Sim<ref::Format::f32>>();
}

}  // namespace
}  // namespace lmo::oracle
