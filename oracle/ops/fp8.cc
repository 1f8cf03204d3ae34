#include "oracle/ops/fp8.h"

#include <span>

#include "oracle/ops/families.h"
#include "oracle/ops/limits.h"
#include "reference/fp8_linear_enclosure.h"

namespace lmo::oracle {
namespace {

// The quantized values a kernel reads: the whole fp8 range, uniformly.
InputDecl fp8_values(std::string name, std::vector<int64_t> shape, ref::Format f) {
  const double m = ref::fp8_max(f);
  return {std::move(name), std::move(shape), Dist::kUniform, -m, m, ref::format_dtype(f)};
}

// Scales of a quantized tensor: amax/M for amax of order 1 (E4M3: about 2^-9 … 2^-6).
InputDecl fp8_scales(std::string name, const ref::ScaleTiling& t, double lo, double hi) {
  return {std::move(name), {t.tiles_down(), t.tiles_across()}, Dist::kUniform, lo, hi,
          ref::DType::f32};
}

OutputDecl fixed(std::string name, std::vector<int64_t> shape, ref::Format f) {
  OutputDecl d(std::move(name), std::move(shape));
  d.format = f;
  return d;
}

ref::Format read_fp8(ParamReader& r) {
  return r.choice("fp8", {"e4m3", "e5m2"}, "e4m3") == "e5m2" ? ref::Format::e5m2
                                                             : ref::Format::e4m3;
}

// rows, cols and the tiling: shared by quantize and dequantize.
Fp8Params read_tiled(ParamReader& r) {
  Fp8Params p;
  p.rows = r.integer("rows", 1, kMaxRows);
  p.cols = r.integer("cols", 1, kMaxWidth);
  const std::string g = r.choice("scaling", {"tensor", "token", "group", "block"}, "group");
  p.granularity = g == "tensor"  ? Fp8Granularity::kTensor
                  : g == "token" ? Fp8Granularity::kToken
                  : g == "group" ? Fp8Granularity::kGroup
                                 : Fp8Granularity::kBlock;
  p.group = r.integer("group", 1, kMaxWidth, 128);
  p.scaling.fp8 = read_fp8(r);
  return p;
}

}  // namespace

ref::ScaleTiling Fp8Params::tiling() const {
  switch (granularity) {
    case Fp8Granularity::kTensor:
      return {rows, cols, rows, cols};
    case Fp8Granularity::kToken:
      return {rows, cols, 1, cols};
    case Fp8Granularity::kGroup:
      return {rows, cols, 1, group};
    case Fp8Granularity::kBlock:
      return {rows, cols, group, group};
  }
  return {rows, cols, rows, cols};
}

std::vector<InputDecl> Fp8QuantizeOp::inputs() const {
  return {{"x", {p_.rows, p_.cols}, Dist::kNormal, 0, 1}};
}

std::vector<OutputDecl> Fp8QuantizeOp::outputs() const {
  const ref::ScaleTiling t = p_.tiling();
  return {fixed("q", {p_.rows, p_.cols}, p_.scaling.fp8),
          fixed("scales", {t.tiles_down(), t.tiles_across()}, ref::Format::f32)};
}

template <class T>
Outputs<T> Fp8QuantizeOp::compute(const InputSet& in) const {
  const std::vector<T> x = in.values<T>("x");
  // q unrounded: its store to the fp8 output rounds it (reference/fp8_scaling.h).
  ref::Fp8Tensor<T> r =
      ref::fp8_quantize<T>(std::span<const T>(x), p_.tiling(), p_.scaling, /*round_q=*/false);
  Outputs<T> out(2);
  out[0].values = std::move(r.q);
  out[1].values = std::move(r.scales);
  return out;
}

std::vector<InputDecl> Fp8DequantizeOp::inputs() const {
  const double m = ref::fp8_max(p_.scaling.fp8);
  return {fp8_values("q", {p_.rows, p_.cols}, p_.scaling.fp8),
          fp8_scales("scales", p_.tiling(), 0.25 / m, 8 / m)};
}

std::vector<OutputDecl> Fp8DequantizeOp::outputs() const { return {{"x", {p_.rows, p_.cols}}}; }

template <class T>
Outputs<T> Fp8DequantizeOp::compute(const InputSet& in) const {
  const std::vector<T> q = in.values<T>("q"), s = in.values<T>("scales");
  Outputs<T> out(1);
  out[0].values = ref::fp8_dequantize<T>(std::span<const T>(q), std::span<const T>(s), p_.tiling());
  return out;
}

std::vector<InputDecl> Fp8LinearOp::inputs() const {
  const double m = ref::fp8_max(p_.fp8);
  // Activations of order 1 and weights of order 1/√k once dequantized.
  const double w_scale = 1 / (m * std::sqrt(static_cast<double>(p_.k)));
  return {fp8_values("a", {p_.m, p_.k}, p_.fp8),
          fp8_scales("a_scales", p_.a_tiling(), 0.5 / m, 4 / m),
          fp8_values("w", {p_.n, p_.k}, p_.fp8),
          fp8_scales("w_scales", p_.w_tiling(), 0.5 * w_scale, 2 * w_scale)};
}

std::vector<OutputDecl> Fp8LinearOp::outputs() const { return {{"y", {p_.m, p_.n}}}; }

template <class T>
Outputs<T> Fp8LinearOp::compute(const InputSet& in) const {
  const std::vector<T> a = in.values<T>("a"), as = in.values<T>("a_scales"), w = in.values<T>("w"),
                       ws = in.values<T>("w_scales");
  Outputs<T> out(1);
  out[0].values = ref::fp8_linear<T>(std::span<const T>(a), std::span<const T>(as), p_.a_tiling(),
                                     std::span<const T>(w), std::span<const T>(ws), p_.w_tiling())
                      .data;
  return out;
}

std::optional<Outputs<ref::Ball>> Fp8LinearOp::enclosure(const InputSet& in) const {
  std::optional<std::vector<ref::Ball>> y = ref::fp8_linear_enclosure(
      in.values<double>("a"), in.values<double>("a_scales"), p_.a_tiling(), in.values<double>("w"),
      in.values<double>("w_scales"), p_.w_tiling());
  if (!y) return GenericOp<Fp8LinearOp>::enclosure(in);
  Outputs<ref::Ball> out(1);
  out[0].values = std::move(*y);
  return out;
}

namespace {

// The bench shape: DeepSeek-V3's activation quantization, rows of 7168 in 1×128 groups to E4M3
// and f32 scales, and back.
BenchShape fp8_bench(std::string name) {
  return {
      std::move(name), 7168, [](int64_t rows) {
        return nlohmann::json{{"rows", rows}, {"cols", 7168}, {"scaling", "group"}, {"group", 128}};
      }};
}

}  // namespace

void add_fp8_ops(std::vector<OpInfo>& ops) {
  ops.push_back({"fp8_quantize",
                 "fp8",
                 "s = f32(max(amax, floor)/M) (or ue8m0: 2^⌈log2⌉) per tensor | token | 1×g "
                 "group | g×g block, q = fp8(clamp(x/s, ±M)); outputs q (e4m3|e5m2) and s (f32)",
                 [](ParamReader& r) {
                   Fp8Params p = read_tiled(r);
                   p.scaling.form = r.choice("scale", {"f32", "ue8m0"}, "f32") == "ue8m0"
                                        ? ref::ScaleForm::kPow2
                                        : ref::ScaleForm::kF32;
                   // SGLang's and vLLM's per_token_group_quant_fp8 default (eps).
                   p.scaling.amax_floor = r.real("amax_floor", 0, 1, 1e-10);
                   return std::make_unique<Fp8QuantizeOp>(p);
                 },
                 KernelEntry::kFp8Quantize,
                 // Elementwise: a max over a tile is exact, each scale one division, each q one
                 // division (or product).
                 {per_element_output("scales", ulp_policy(0, 0),
                                     "amax/M is one division, correctly rounded to f32 (ue8m0: a "
                                     "power of two); dequantization reads this very value, so it "
                                     "must be the reference's"),
                  per_element_output("q", ulp_policy(0, 0, kRoundingMargin),
                                     "x/s rounded once to fp8 (saturating); margin: a kernel "
                                     "multiplying by an f32 reciprocal (2^-23 relative) crosses a "
                                     "midpoint only within 2^-20 of an fp8 ulp")},
                 {},
                 {fp8_bench("fp8_quantize")}});
  ops.push_back({"fp8_dequantize",
                 "fp8",
                 "x = q·s with q fp8 (e4m3|e5m2) and one f32 scale per tensor | token | 1×g "
                 "group | g×g block",
                 [](ParamReader& r) { return std::make_unique<Fp8DequantizeOp>(read_tiled(r)); },
                 KernelEntry::kFp8Dequantize,
                 {per_element_output(ulp_policy(0, 0, kRoundingMargin),
                                     "q·s is one product, correctly rounded in f32; margin: the "
                                     "second rounding to narrow")},
                 {},
                 {fp8_bench("fp8_dequantize")}});
  ops.push_back({"fp8_linear",
                 "fp8",
                 "y = (A ⊙ s_A)(W ⊙ s_W)ᵀ, A m×k and W n×k fp8, s_A per 1×b group, s_W per b×b "
                 "block (DeepSeek-V3), exact product of the dequantized operands",
                 [](ParamReader& r) {
                   Fp8LinearParams p;
                   p.m = r.integer("m", 1, kMaxRows);
                   p.n = r.integer("n", 1, kMaxWidth);
                   p.k = r.integer("k", 1, kMaxWidth);
                   p.block = r.integer("block", 1, kMaxWidth, 128);
                   p.fp8 = read_fp8(r);
                   return std::make_unique<Fp8LinearOp>(p);
                 },
                 KernelEntry::kFp8Linear,
                 {reduction_output(naive_policy(),
                                   "a GEMM of dequantized operands (per-block partial sums scaled "
                                   "in f32): a reduction over k")}});
}

}  // namespace lmo::oracle
