// Adapters of the fp8 ops (oracle/ops/fp8.h) shared by the fast and gpu backends: fast/fp8.h and
// gpu/api_fp8.h take the same arguments (kernels/api/fp8_args.h's tiling and format), so one
// template per op serves both. K names the library: using Storage, and pointers to fp8_quantize,
// fp8_dequantize and fp8_linear with fast/fp8.h's signatures. q and the scales are written
// straight into their e4m3/e5m2 and f32 output buffers.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/api/fp8_args.h"
#include "oracle/backends/adapters.h"
#include "oracle/ops/fp8.h"

namespace lmo::oracle::op_adapters {

inline kernels::Fp8Tiling fp8_tiling(const ref::ScaleTiling& t) {
  return {t.rows, t.cols, t.tile_rows, t.tile_cols};
}

inline kernels::Fp8Format fp8_format(ref::Format f) {
  return f == ref::Format::e5m2 ? kernels::Fp8Format::e5m2 : kernels::Fp8Format::e4m3;
}

template <class K>
void run_fp8_quantize(const Op& op, typename K::Storage s, const InputSet& in,
                      std::vector<GuardedBuffer>& out) {
  const Fp8Params& p = op_as<Fp8QuantizeOp>(op).params();
  K::fp8_quantize(s, input_ptr(in, "x"), static_cast<uint8_t*>(out[0].data()),
                  static_cast<float*>(out[1].data()), fp8_tiling(p.tiling()),
                  fp8_format(p.scaling.fp8), p.scaling.form == ref::ScaleForm::kPow2,
                  p.scaling.amax_floor);
}

template <class K>
void run_fp8_dequantize(const Op& op, typename K::Storage s, const InputSet& in,
                        std::vector<GuardedBuffer>& out) {
  const Fp8Params& p = op_as<Fp8DequantizeOp>(op).params();
  K::fp8_dequantize(s, static_cast<const uint8_t*>(input_ptr(in, "q")),
                    static_cast<const float*>(input_ptr(in, "scales")), out[0].data(),
                    fp8_tiling(p.tiling()), fp8_format(p.scaling.fp8));
}

template <class K>
void run_fp8_linear(const Op& op, typename K::Storage s, const InputSet& in,
                    std::vector<GuardedBuffer>& out) {
  const Fp8LinearParams& p = op_as<Fp8LinearOp>(op).params();
  K::fp8_linear(s, static_cast<const uint8_t*>(input_ptr(in, "a")),
                static_cast<const float*>(input_ptr(in, "a_scales")),
                static_cast<const uint8_t*>(input_ptr(in, "w")),
                static_cast<const float*>(input_ptr(in, "w_scales")), out[0].data(), p.m, p.n, p.k,
                p.block, fp8_format(p.fp8));
}

}  // namespace lmo::oracle::op_adapters
