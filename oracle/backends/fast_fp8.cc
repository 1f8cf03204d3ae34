// The fast backend's fp8 adapters (oracle/ops/fp8.h → fast/fp8.h): the op's tiling and format
// passed through; q and the scales are written straight into their e4m3/e5m2 and f32 buffers.
#include "fast/fp8.h"
#include "oracle/backends/fast_adapters.h"
#include "oracle/ops/fp8.h"

namespace lmo::oracle::fast_adapters {
namespace {

fast::Fp8Tiling tiling_of(const ref::ScaleTiling& t) {
  return {t.rows, t.cols, t.tile_rows, t.tile_cols};
}

fast::Fp8Format format_of(ref::Format f) {
  return f == ref::Format::e5m2 ? fast::Fp8Format::e5m2 : fast::Fp8Format::e4m3;
}

}  // namespace

void run_fp8_quantize(const Op& op, fast::Storage s, const InputSet& in,
                      std::vector<GuardedBuffer>& out) {
  const Fp8Params& p = as<Fp8QuantizeOp>(op).params();
  fast::fp8_quantize(s, ptr(in, "x"), static_cast<uint8_t*>(out[0].data()),
                     static_cast<float*>(out[1].data()), tiling_of(p.tiling()),
                     format_of(p.scaling.fp8), p.scaling.form == ref::ScaleForm::kPow2,
                     p.scaling.amax_floor);
}

void run_fp8_dequantize(const Op& op, fast::Storage s, const InputSet& in,
                        std::vector<GuardedBuffer>& out) {
  const Fp8Params& p = as<Fp8DequantizeOp>(op).params();
  fast::fp8_dequantize(s, static_cast<const uint8_t*>(ptr(in, "q")),
                       static_cast<const float*>(ptr(in, "scales")), out[0].data(),
                       tiling_of(p.tiling()), format_of(p.scaling.fp8));
}

void run_fp8_linear(const Op& op, fast::Storage s, const InputSet& in,
                    std::vector<GuardedBuffer>& out) {
  const Fp8LinearParams& p = as<Fp8LinearOp>(op).params();
  fast::fp8_linear(
      s, static_cast<const uint8_t*>(ptr(in, "a")), static_cast<const float*>(ptr(in, "a_scales")),
      static_cast<const uint8_t*>(ptr(in, "w")), static_cast<const float*>(ptr(in, "w_scales")),
      out[0].data(), p.m, p.n, p.k, p.block, format_of(p.fp8));
}

}  // namespace lmo::oracle::fast_adapters
