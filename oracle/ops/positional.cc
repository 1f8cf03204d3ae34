#include "oracle/ops/positional.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "oracle/ops/dot_rounding.h"
#include "oracle/ops/families.h"
#include "oracle/ops/limits.h"
#include "reference/parallel.h"
#include "reference/positional.h"

namespace lmo::oracle {

PositionRange read_position_range(ParamReader& r, const char* max_key,
                                  std::optional<int64_t> default_max) {
  PositionRange p;
  p.max = default_max ? r.integer(max_key, 1, kMaxPosition, *default_max)
                      : r.integer(max_key, 1, kMaxPosition);
  p.min = r.integer("min_position", 0, kMaxPosition, 0);
  if (p.min >= p.max) {
    r.fail("min_position",
           "expected min_position < " + std::string(max_key) + " (" + std::to_string(p.max) + ")");
  }
  return p;
}

InputDecl token_ids_input(int64_t tokens, int64_t vocab) {
  InputDecl d("token_ids", {tokens}, Dist::kUniformInt, 0, static_cast<double>(vocab),
              ref::DType::i64);
  d.bounded = true;
  return d;
}

InputDecl positions_input(int64_t tokens, PositionRange range) {
  InputDecl d("positions", {tokens}, Dist::kUniformInt, static_cast<double>(range.min),
              static_cast<double>(range.max), ref::DType::i64);
  d.bounded = true;
  return d;
}

std::vector<InputDecl> PositionalOp::inputs() const {
  switch (p_.kind) {
    case PositionalKind::kSinusoidal:
      return {positions_input(p_.tokens, p_.positions)};
    case PositionalKind::kLearned:
      // Uniform tables (PyTorch's default initialization is uniform too): no transcendental per
      // element, so a table of 10^6 entries is generated in well under a second. Token rows are
      // wider than position rows, so the sum rounds in every format.
      return {{"token_table", {p_.vocab, p_.d}, Dist::kUniform, -0.5, 0.5},
              {"position_table", {p_.positions.max, p_.d}, Dist::kUniform, -0.1, 0.1},
              token_ids_input(p_.tokens, p_.vocab), positions_input(p_.tokens, p_.positions)};
    case PositionalKind::kShaw:
      return {{"q", {p_.n_q, p_.d}, Dist::kNormal, 0, 1},
              {"k", {p_.n_k, p_.d}, Dist::kNormal, 0, 1},
              {"rel_k", {2 * p_.max_relative + 1, p_.d}, Dist::kNormal, 0, 1}};
    case PositionalKind::kT5:
      return {{"table", {p_.num_buckets, p_.heads}, Dist::kNormal, 0, 1}};
  }
  return {};
}

std::vector<OutputDecl> PositionalOp::outputs() const {
  switch (p_.kind) {
    case PositionalKind::kSinusoidal:
      return {{"pe", {p_.tokens, p_.d}}};
    case PositionalKind::kLearned:
      return {{"h", {p_.tokens, p_.d}}};
    case PositionalKind::kShaw:
      return {{"e", {p_.n_q, p_.n_k}}};
    case PositionalKind::kT5:
      return {{"bias", {p_.heads, p_.n_q, p_.n_k}}};
  }
  return {};
}

double PositionalOp::cost() const {
  const auto n = [](int64_t v) { return static_cast<double>(v); };
  switch (p_.kind) {
    case PositionalKind::kSinusoidal:  // a power, a quotient, sin and cos per pair
      return 40.0 * n(p_.tokens) * n(p_.d);
    case PositionalKind::kLearned:  // the rows read, one addition each
      return 2.0 * n(p_.d) * n(p_.tokens);
    case PositionalKind::kShaw:
      return 3.0 * n(p_.n_q) * n(p_.n_k) * n(p_.d);
    case PositionalKind::kT5:
      return n(p_.heads) * n(p_.n_q) * n(p_.n_k) + 20.0 * n(p_.n_q + p_.n_k);
  }
  return 0;
}

namespace {

// The rows of a [rows, d] table that `index` reads, converted to T, in order of first use;
// index is rewritten to point into the result.
template <class T>
ref::Mat<T> used_rows(const ref::Tensor& table, int64_t d, std::vector<int64_t>& index) {
  std::vector<int64_t> rows;
  for (int64_t& i : index) {
    auto it = std::find(rows.begin(), rows.end(), i);
    if (it == rows.end()) it = rows.insert(rows.end(), i);
    i = it - rows.begin();
  }
  ref::Mat<T> m(static_cast<int64_t>(rows.size()), d);
  for (size_t r = 0; r < rows.size(); ++r) {
    for (int64_t c = 0; c < d; ++c) m(static_cast<int64_t>(r), c) = T(table.get(rows[r] * d + c));
  }
  return m;
}

// The error scale of e_ij = (q_i·k_j + q_i·a_r)/√d_k, r = clip(j − i) + K (policy.h, rule (2)), in
// units of the compute format's unit roundoff: a correct kernel may form q·(k + a) (the
// reference's order) or the two dot products apart and add them (fast/'s, two GEMMs), and when k_j
// and a_r nearly cancel the second's product and prefix-sum roundings are far larger than the
// first's, while the naive run, which takes the first order, samples only the small ones. S
// takes both dot products' roundings (dot_rounding.h), the sum's, the quotient's and √d_k's.
std::vector<double> shaw_error_scale(const PositionalParams& p, const InputSet& in) {
  const std::vector<double> q = in.values<double>("q"), k = in.values<double>("k"),
                            rel = in.values<double>("rel_k");
  const auto d = static_cast<std::ptrdiff_t>(p.d);
  const double root = std::sqrt(static_cast<double>(p.d));
  std::vector<double> s(static_cast<size_t>(p.n_q * p.n_k));
  for (int64_t i = 0; i < p.n_q; ++i) {
    const double* qi = q.data() + i * d;
    for (int64_t j = 0; j < p.n_k; ++j) {
      const int64_t r = ref::shaw_relative_index(i, j, p.max_relative);
      const DotRounding qk = dot_rounding(qi, 1, k.data() + j * d, 1, d, nullptr);
      const DotRounding qa = dot_rounding(qi, 1, rel.data() + r * d, 1, d, nullptr);
      const double t = qk.value + qa.value, y = t / root;
      const double e2 = (qk.squares + qa.squares + t * t) / (root * root) + 2 * y * y;
      s[static_cast<size_t>(i * p.n_k + j)] = std::sqrt(e2);
    }
  }
  return s;
}

// F07's table evaluated in U (divisors, angles, sin and cos; the integer position rounded once to
// U, as a kernel holding positions in U does) and each value stored in T: U = T is the naive
// kernel (and the exact one), U = double the recipe point angle=f64.
template <class U, class T>
std::vector<T> sinusoidal_table(const PositionalParams& p, const std::vector<int64_t>& pos) {
  const std::vector<U> divisors = ref::sinusoidal_divisors<U>(p.d, U(p.base));
  std::vector<T> y(static_cast<size_t>(p.tokens * p.d));
  ref::parallel_for(p.tokens, [&](int64_t t) {
    const std::vector<U> row = ref::sinusoidal_pe<U>(
        ref::from_mp<U>(ref::mp(pos[static_cast<size_t>(t)])), std::span<const U>(divisors));
    for (int64_t c = 0; c < p.d; ++c) y[static_cast<size_t>(t * p.d + c)] = T(row[c]);
  });
  return y;
}

}  // namespace

void PositionalOp::annotate_exact(const InputSet& in, Outputs<ref::mp>& out) const {
  if (p_.kind == PositionalKind::kShaw) out[0].error_scale = shaw_error_scale(p_, in);
}

template <class T>
Outputs<T> PositionalOp::compute(const InputSet& in) const {
  Outputs<T> out(1);
  std::vector<T>& y = out[0].values;
  switch (p_.kind) {
    case PositionalKind::kSinusoidal:
      y = sinusoidal_table<T, T>(p_, in.ints("positions"));
      break;
    case PositionalKind::kLearned: {
      // Only the rows the tokens read, in T: the reference's tables restricted to them (the sums
      // are the same; converting a whole 10^6-value table per run would dominate the case).
      std::vector<int64_t> ids = in.ints("token_ids");
      std::vector<int64_t> pos = in.ints("positions");
      const ref::Mat<T> tokens = used_rows<T>(in.at("token_table"), p_.d, ids);
      const ref::Mat<T> positions = used_rows<T>(in.at("position_table"), p_.d, pos);
      y = ref::learned_position_embed<T>(tokens, positions, ids, pos).data;
      break;
    }
    case PositionalKind::kShaw: {
      const ref::Mat<T> q(p_.n_q, p_.d, in.values<T>("q"));
      const ref::Mat<T> k(p_.n_k, p_.d, in.values<T>("k"));
      const ref::Mat<T> rel(2 * p_.max_relative + 1, p_.d, in.values<T>("rel_k"));
      y = ref::shaw_relative_logits_qk<T>(q, k, rel, p_.max_relative).data;
      break;
    }
    case PositionalKind::kT5: {
      const ref::Mat<T> table(p_.num_buckets, p_.heads, in.values<T>("table"));
      for (ref::Mat<T>& b : ref::t5_relative_position_bias<T>(
               table, p_.n_q, p_.n_k, p_.bidirectional, p_.max_distance, p_.query_offset)) {
        y.insert(y.end(), b.data.begin(), b.data.end());
      }
      break;
    }
  }
  return out;
}

std::vector<RoundingPoint> PositionalOp::rounding_points() const {
  if (p_.kind != PositionalKind::kSinusoidal) return {};
  return {{"angle", {"f32", "f64"}, "f32",
           "the divisors base^(2i/d), the angles p/divisor and their sin/cos computed in f32 "
           "or in f64 (rounded to the compute format once)"}};
}

template <class T>
Outputs<T> PositionalOp::compute(const InputSet& in, const BoundRecipe& recipe) const {
  if (p_.kind != PositionalKind::kSinusoidal || recipe.choice("angle") != "f64") {
    return compute<T>(in);
  }
  // The whole row in double, each value rounded into T once: what a kernel that precomputes its
  // table in double and stores it in T holds.
  Outputs<T> out(1);
  out[0].values = sinusoidal_table<double, T>(p_, in.ints("positions"));
  return out;
}

namespace {

std::unique_ptr<Op> make_sinusoidal(ParamReader& r) {
  PositionalParams p;
  p.kind = PositionalKind::kSinusoidal;
  p.tokens = r.integer("tokens", 1, kMaxRows);
  p.d = r.integer("d", 2, kMaxWidth);
  if (p.d % 2 != 0)
    r.fail("d", "expected an even width (sin and cos pairs), got " + std::to_string(p.d));
  p.base = r.real("base", 1.0 + 1e-9, 1e12, 10000.0);
  p.positions = read_position_range(r, "max_position");
  return std::make_unique<PositionalOp>(p);
}

std::unique_ptr<Op> make_learned(ParamReader& r) {
  PositionalParams p;
  p.kind = PositionalKind::kLearned;
  p.tokens = r.integer("tokens", 1, kMaxRows);
  p.d = r.integer("d", 1, kMaxWidth);
  p.vocab = r.integer("vocab", 1, kMaxWidth);
  // The position table's rows: the largest position is max_positions − 1.
  p.positions = read_position_range(r, "max_positions");
  const double entries = static_cast<double>(p.d) * static_cast<double>(p.vocab + p.positions.max);
  if (entries > static_cast<double>(int64_t{1} << 28)) {
    r.fail("max_positions", "expected the two tables to hold at most 2^28 values, got " +
                                std::to_string(static_cast<int64_t>(entries)));
  }
  return std::make_unique<PositionalOp>(p);
}

std::unique_ptr<Op> make_shaw(ParamReader& r) {
  PositionalParams p;
  p.kind = PositionalKind::kShaw;
  p.n_q = r.integer("n_q", 1, kMaxRows);
  p.n_k = r.integer("n_k", 1, kMaxRows);
  p.d = r.integer("d_k", 1, kMaxWidth);
  p.max_relative = r.integer("max_relative_position", 0, int64_t{1} << 16);
  return std::make_unique<PositionalOp>(p);
}

std::unique_ptr<Op> make_t5(ParamReader& r) {
  PositionalParams p;
  p.kind = PositionalKind::kT5;
  p.heads = r.integer("heads", 1, kMaxHeads);
  p.bidirectional = r.flag("bidirectional", false);
  p.num_buckets = r.integer("num_buckets", p.bidirectional ? 4 : 2, 4096, 32);
  // max_exact = num_buckets / 4 bidirectional, / 2 causal: the bucket rule needs it below
  // max_distance (reference t5_relative_position_bucket).
  const int64_t max_exact = (p.bidirectional ? p.num_buckets / 2 : p.num_buckets) / 2;
  p.max_distance =
      r.integer("max_distance", max_exact + 1, kMaxPosition, std::max<int64_t>(128, max_exact + 1));
  p.n_q = r.integer("query_len", 1, kMaxRows);
  p.n_k = r.integer("key_len", 1, kMaxRows);
  p.query_offset = r.integer("query_offset", 0, kMaxPosition, 0);
  if (static_cast<double>(p.heads) * static_cast<double>(p.n_q) * static_cast<double>(p.n_k) >
      static_cast<double>(int64_t{1} << 26)) {
    r.fail("key_len", "expected heads × query_len × key_len ≤ 2^26 outputs");
  }
  return std::make_unique<PositionalOp>(p);
}

// The bench shape: the encoding of a 1024-wide model (BERT-large's, GPT-2 medium's) at positions
// below 2^20. It is written, not read: its traffic is the encoding and 8 bytes of position a row.
BenchShape sinusoidal_bench() {
  return {
      "sinusoidal_pe", 1024, [](int64_t tokens) {
        return nlohmann::json{{"tokens", tokens}, {"d", 1024}, {"max_position", int64_t{1} << 20}};
      }};
}

}  // namespace

void add_positional_ops(std::vector<OpInfo>& ops) {
  ops.push_back({"sinusoidal_pe",
                 "F07",
                 "PE(p, 2i) = sin(p/base^(2i/d)), PE(p, 2i+1) = cos(·)",
                 make_sinusoidal,
                 KernelEntry::kSinusoidalPe,
                 {reduction_output(naive_policy(),
                                   "sin/cos of p·10000^(−2i/d), phase rounded first: only an "
                                   "absolute bound holds near zeros")},
                 {},
                 {sinusoidal_bench()}});
  ops.push_back({"learned_position",
                 "F08",
                 "h_t = V[token_t] + U[position_t]",
                 make_learned,
                 KernelEntry::kLearnedPosition,
                 {per_element_output(ulp_policy(0, 0, kRoundingMargin),
                                     "v_x + u_i is one addition, correctly rounded in f32; "
                                     "margin: the second rounding to narrow")}});
  ops.push_back({"shaw_logits",
                 "F09",
                 "e_ij = q_i·(k_j + a[clip(j − i, −K, K)]) / √d_k (Shaw et al.)",
                 make_shaw,
                 KernelEntry::kShawLogits,
                 {reduction_output(naive_policy(2, 0.5, 2, kErrorScaleMultiple),
                                   "q·(k + a_clip(j−i)) / √d_k: dot products; error scale: q·k "
                                   "+ q·a apart (two GEMMs) too")}});
  ops.push_back({"t5_bias",
                 "F09",
                 "bias[h, i, j] = table[bucket(j − i), h] (T5)",
                 make_t5,
                 KernelEntry::kT5Bias,
                 {per_element_output(ulp_policy(0, 0),
                                     "a gather from the bias table: copied, never computed; a "
                                     "changed value is a wrong bucket")}});
}

}  // namespace lmo::oracle
