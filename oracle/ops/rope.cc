#include "oracle/ops/rope.h"

#include "oracle/ops/families.h"
#include "oracle/ops/limits.h"
#include "oracle/core/op_generic.h"

namespace lmo::oracle {
namespace {

// The cos_sin input of rope_table (rope.h): the exact table of the case's positions, rounded
// once to the tensor's format.
void write_exact_table(const RopeParams& p, const InputSet& earlier, ref::Tensor& t) {
  std::vector<ref::mp> pos;
  for (int64_t q : earlier.ints("positions")) pos.push_back(ref::mp(q));
  const ref::RopeTable<ref::mp> tab = rope_angles_table<ref::mp>(p, pos);
  const ref::Format f = ref::dtype_format(t.dtype());
  const int64_t half = p.rotary_dims / 2;
  for (int64_t row = 0; row < p.tokens; ++row) {
    for (int64_t k = 0; k < half; ++k) {
      t.set_bits(row * p.rotary_dims + k, ref::encode(f, tab.cos(row, k)));
      t.set_bits(row * p.rotary_dims + half + k, ref::encode(f, tab.sin(row, k)));
    }
  }
}

}  // namespace

std::vector<InputDecl> RopeOp::inputs() const {
  std::vector<InputDecl> v = {{"x", {p_.tokens, width()}, Dist::kNormal, 0, 1},
                              positions_input(p_.tokens, p_.positions)};
  if (!p_.cu_seqlens.empty()) {
    // Positions from the packing (RopeParams::cu_seqlens), not drawn.
    v[1].computed = [p = p_](const InputSet&, ref::Tensor& t) {
      for (size_t s = 0; s + 1 < p.cu_seqlens.size(); ++s) {
        for (int64_t i = p.cu_seqlens[s]; i < p.cu_seqlens[s + 1]; ++i) {
          t.set(i, static_cast<double>(p.position_offsets[s] + i - p.cu_seqlens[s]));
        }
      }
    };
  }
  if (p_.from_table) {
    InputDecl table("cos_sin", {p_.tokens, p_.rotary_dims}, Dist::kUniform, 0, 1,
                    p_.table_in_storage ? std::nullopt : std::optional(ref::DType::f32));
    table.computed = [p = p_](const InputSet& earlier, ref::Tensor& t) {
      write_exact_table(p, earlier, t);
    };
    v.push_back(std::move(table));
  }
  return v;
}

double RopeOp::cost() const {
  const auto tokens = static_cast<double>(p_.tokens);
  // Six operations per rotated pair element; a cos and a sin (tens of operations each) per
  // token and pair, for the angles or for the table.
  return 6.0 * tokens * static_cast<double>(width()) +
         60.0 * tokens * static_cast<double>(p_.rotary_dims / 2);
}

template <class T>
Outputs<T> RopeOp::compute(const InputSet& in) const {
  const ref::Mat<T> x(p_.tokens, width(), in.values<T>("x"));
  ref::RopeTable<T> table;
  if (p_.from_table) {
    // The stored table read into T (a rounding where T is narrower than the table).
    const std::vector<T> cs = in.values<T>("cos_sin");
    const int64_t half = p_.rotary_dims / 2;
    table = {ref::Mat<T>(p_.tokens, half), ref::Mat<T>(p_.tokens, half)};
    for (int64_t t = 0; t < p_.tokens; ++t) {
      for (int64_t k = 0; k < half; ++k) {
        table.cos(t, k) = cs[static_cast<size_t>(t * p_.rotary_dims + k)];
        table.sin(t, k) = cs[static_cast<size_t>(t * p_.rotary_dims + half + k)];
      }
    }
  } else {
    std::vector<T> pos;
    for (int64_t q : in.ints("positions")) pos.push_back(ref::rope_position<T>(q));
    table = rope_angles_table<T>(p_, std::span<const T>(pos));
  }
  Outputs<T> out(1);
  out[0].values = ref::rope_sequence(x, p_.heads, table, p_.layout).data;
  return out;
}

std::vector<RoundingPoint> RopeOp::rounding_points() const {
  if (p_.from_table) return {};
  return {{"angle", {"f32", "f64"}, "f32",
           "θ_k and p·θ_k (and their cos/sin) computed in f32 or in f64"},
          {"table", {}, "f32", "the cos/sin table entries"},
          {"products", {}, "f32", "x·cos, x·sin and their sum or difference"}};
}

template <class T>
Outputs<T> RopeOp::compute(const InputSet& in, const BoundRecipe& recipe) const {
  if (p_.from_table) return compute<T>(in);  // no points: only +ftz applies
  const std::vector<int64_t> positions = in.ints("positions");
  ref::RopeTable<T> table;
  if (recipe.choice("angle") == "f64") {
    // The angles, cos and sin in double, rounded into T once (a table a kernel precomputes in
    // double and keeps in f32).
    std::vector<double> pos;
    for (int64_t q : positions) pos.push_back(ref::rope_position<double>(q));
    const ref::RopeTable<double> t64 = rope_angles_table<double>(p_, std::span<const double>(pos));
    table = {ref::Mat<T>(t64.cos.rows, t64.cos.cols), ref::Mat<T>(t64.sin.rows, t64.sin.cols)};
    for (size_t i = 0; i < t64.cos.data.size(); ++i) {
      table.cos.data[i] = T(t64.cos.data[i]);
      table.sin.data[i] = T(t64.sin.data[i]);
    }
  } else {
    std::vector<T> pos;
    for (int64_t q : positions) pos.push_back(ref::rope_position<T>(q));
    table = rope_angles_table<T>(p_, std::span<const T>(pos));
  }
  if (const auto round = point_rounding<T>(recipe, "table")) {
    for (T& c : table.cos.data) c = round(c);
    for (T& s : table.sin.data) s = round(s);
  }
  const ref::Mat<T> x(p_.tokens, width(), in.values<T>("x"));
  Outputs<T> out(1);
  const std::optional<ref::Format> products = recipe.format("products");
  if (!products) {
    out[0].values = ref::rope_sequence(x, p_.heads, table, p_.layout).data;
    return out;
  }
  // The rotation's products and sums in the products' format: the reference's rotation run on
  // that simulated type (the inputs and the table are already values of it where the recipe
  // says so; otherwise they are rounded into it, as a kernel loading them would).
  out[0].values = with_sim_type(*products, [&]<class U>() {
    auto to_u = [](const ref::Mat<T>& m) {
      ref::Mat<U> r(m.rows, m.cols);
      for (size_t i = 0; i < m.data.size(); ++i) r.data[i] = U(ref::to_double(m.data[i]));
      return r;
    };
    const ref::RopeTable<U> tu{to_u(table.cos), to_u(table.sin)};
    const ref::Mat<U> y = ref::rope_sequence(to_u(x), p_.heads, tu, p_.layout);
    std::vector<T> v;
    v.reserve(y.data.size());
    for (const U& e : y.data) v.push_back(T(round_point(ref::to_double(e), std::nullopt, recipe.ftz())));
    return v;
  });
  return out;
}

void read_rope_scaling(ParamReader& r, RopeParams& p, const std::vector<std::string>& rules,
                       bool attention_factor) {
  const std::string s = r.choice("scaling", rules, "none");
  if (s == "none") return;
  p.factor = r.real("factor", 1e-3, 1e6);
  if (s == "pi") {
    p.scaling = RopeScalingRule::kPi;
  } else if (s == "ntk") {
    p.scaling = RopeScalingRule::kNtk;
    if (p.rotary_dims <= 2) r.fail("rotary_dims", "expected more than 2 for NTK scaling (r/(r−2))");
  } else if (s == "yarn") {
    p.scaling = RopeScalingRule::kYarn;
    p.original_context = r.integer("original_context", 1, kMaxPosition);
    p.beta_fast = r.real("beta_fast", 1e-6, 1e6, 32.0);
    p.beta_slow = r.real("beta_slow", 1e-6, 1e6, 1.0);
    if (attention_factor) p.attention_factor = r.flag("attention_factor", false);
  } else {
    // Meta's published constants as defaults (factor is required: it is the point of the rule).
    p.scaling = RopeScalingRule::kLlama31;
    p.original_context = r.integer("original_context", 1, kMaxPosition, 8192);
    p.low_freq_factor = r.real("low_freq_factor", 1e-6, 1e6, 1.0);
    p.high_freq_factor = r.real("high_freq_factor", 1e-6, 1e6, 4.0);
    if (!(p.low_freq_factor < p.high_freq_factor)) {
      r.fail("high_freq_factor", "expected high_freq_factor > low_freq_factor");
    }
  }
}

namespace {

// cu_seqlens (ParamReader::cumulative_lengths) and position_offsets (one per sequence, default
// 0), each sequence's last position within the position range.
void read_packing(ParamReader& r, RopeParams& p) {
  p.cu_seqlens = r.cumulative_lengths("cu_seqlens", p.tokens);
  const auto n = static_cast<int64_t>(p.cu_seqlens.size());
  p.position_offsets = r.has("position_offsets")
                           ? r.integers("position_offsets", 0, kMaxPosition)
                           : std::vector<int64_t>(static_cast<size_t>(n - 1), 0);
  if (static_cast<int64_t>(p.position_offsets.size()) != n - 1) {
    r.fail("position_offsets", "expected one offset per sequence (" + std::to_string(n - 1) + ")");
  }
  for (int64_t s = 0; s + 1 < n; ++s) {
    const int64_t first = p.position_offsets[static_cast<size_t>(s)];
    const int64_t last = first + p.cu_seqlens[static_cast<size_t>(s + 1)] -
                         p.cu_seqlens[static_cast<size_t>(s)] - 1;
    if (first < p.positions.min || last >= p.positions.max) {
      r.fail("position_offsets", "sequence " + std::to_string(s) + " spans positions " +
                                     std::to_string(first) + " … " + std::to_string(last) +
                                     ", expected them in [" + std::to_string(p.positions.min) +
                                     ", " + std::to_string(p.positions.max) + ")");
    }
  }
}

std::unique_ptr<Op> make_rope(ParamReader& r, bool from_table) {
  RopeParams p;
  p.from_table = from_table;
  p.tokens = r.integer("tokens", 1, kMaxRows);
  p.heads = r.integer("heads", 1, kMaxHeads);
  p.head_dim = r.integer("head_dim", 2, int64_t{1} << 16);
  p.rotary_dims = r.integer("rotary_dims", 2, p.head_dim, p.head_dim);
  if (p.rotary_dims % 2 != 0) {
    r.fail("rotary_dims",
           "expected an even number of rotated dimensions, got " + std::to_string(p.rotary_dims));
  }
  p.layout = r.choice("layout", {"half_split", "interleaved"}) == "interleaved"
                 ? ref::RopeLayout::kInterleaved
                 : ref::RopeLayout::kHalfSplit;
  p.base = r.real("base", 1.0 + 1e-9, 1e12, 10000.0);
  // Without max_position, any position the reference takes (up to 2^40): positions given in a
  // file (lmoracle ref) need none, and a given max_position bounds them.
  p.positions = read_position_range(r, "max_position", kMaxPosition);
  read_rope_scaling(r, p, {"none", "pi", "ntk", "yarn", "llama31"}, true);
  if (r.has("cu_seqlens")) read_packing(r, p);
  if (from_table) p.table_in_storage = r.choice("table", {"f32", "storage"}, "f32") == "storage";
  if (static_cast<double>(p.tokens) * static_cast<double>(p.heads * p.head_dim) >
      static_cast<double>(int64_t{1} << 28)) {
    r.fail("tokens", "expected tokens × heads × head_dim ≤ 2^28");
  }
  return std::make_unique<RopeOp>(p);
}

}  // namespace

namespace {

// The bench shape: Llama 3.1 8B's query heads (32 × 128, half-split pairs) per token; rope with
// base 500000 and the Llama 3.1 rule at positions below its 128K context (one cos and sin per
// token and pair, shared by the 32 heads), rope_table reading an f32 cos/sin row per token.
BenchShape rope_bench(std::string name, bool from_table) {
  BenchShape b{
      std::move(name), 32 * 128, [from_table](int64_t tokens) {
        nlohmann::json p = {
            {"tokens", tokens}, {"heads", 32}, {"head_dim", 128}, {"layout", "half_split"}};
        if (!from_table) {
          p.update({{"base", 500000.0},
                    {"scaling", "llama31"},
                    {"factor", 8.0},
                    {"original_context", 8192},
                    {"max_position", 131072}});
        }
        return p;
      }};
  if (from_table) b.unread = {"positions"};
  return b;
}

}  // namespace

void add_rope_ops(std::vector<OpInfo>& ops) {
  ops.push_back({"rope",
                 "F10, F11",
                 "rotate pairs by p·θ_k (interleaved | half_split, partial; none | pi | ntk | "
                 "yarn | llama31), angles from integer positions (or packed: cu_seqlens, "
                 "position_offsets)",
                 [](ParamReader& r) { return make_rope(r, false); },
                 KernelEntry::kRope,
                 {reduction_output(naive_policy(),
                                   "x·cos − y·sin with a rounded phase: "
                                   "cancellation, absolute error")},
                 {"hf-rope"},
                 {rope_bench("rope", false)}});
  ops.push_back({"rope_table",
                 "F10, F11",
                 "the same rotation from a precomputed cos/sin table input (f32 or storage)",
                 [](ParamReader& r) { return make_rope(r, true); },
                 KernelEntry::kRope,
                 // No phase: the cos/sin table is an input, so what it computes is the rotation.
                 {reduction_output(naive_policy(),
                                   "x_a·c − x_b·s from the given table: products and a "
                                   "difference, cancellation: absolute")},
                 {},
                 {rope_bench("rope_table", true)}});
}

}  // namespace lmo::oracle
