// CUDA-free host interface to the GPU path: the oracle, the CLI and the tests include only this
// header (plain C++17 or later; no CUDA header). The functions mirror fast/*.h: the same
// arguments on host pointers, the same validation (std::invalid_argument naming the function,
// the parameter and the expectation, before any CUDA call), and each call copies its inputs to
// the device, runs the kernel, checks every CUDA call and copies the outputs back. A CUDA
// failure (no driver, no device, a launch error) throws std::runtime_error naming the CUDA call
// and its error string. Kernels and launchers on device pointers: gpu/<family>.cuh, gpu/launch.h.
//
// Numerics (every family but the f32 kernels of fused_add_rmsnorm, gpu/api_fp8.h and
// moe_layer, which compute in f32 in the fast kernels' rounding order: gpu/f32_ops.h): inputs in
// storage s are widened exactly; per-row sums and the elementwise functions are evaluated in
// double, and each output is rounded to f32 and then to s, nearest-even. By construction (double's
// 2^-53 against f32's 2^-24) each f32 result is then within a small fraction of an f32 ulp of the
// exact value, inside the oracle's f32 policies, and the reference's special values (NaN, ±inf)
// follow from IEEE double arithmetic in the reference's order of operations. The cost: the
// datacenter GPUs targeted (sm_80, sm_90) run FP64 at half the FP32 rate; whether a kernel with
// double exp/erfc stays memory-bound is for `lmoracle bench --backend gpu` to show. Reductions use
// one block per row and a fixed-shape tree in shared memory, no atomics: results are identical
// run to run.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/api/activation.h"
#include "kernels/api/rope_frequencies.h"
#include "kernels/api/rope_shape.h"
#include "kernels/api/storage.h"

namespace lmo::gpu {

// The kernel contract's types (kernels/api/), the same types fast/ takes: bf16 and f16 as
// uint16_t patterns.
using kernels::Activation;
using kernels::RopeFrequencies;
using kernels::RopeLayout;
using kernels::RopeScaling;
using kernels::RopeShape;
using kernels::Storage;

struct DeviceInfo {
  bool present = false;  // a usable CUDA device was found
  std::string name;      // device name, when present
  int compute_major = 0;
  int compute_minor = 0;
  std::string reason;  // why no device is usable, when !present (the CUDA error string)
};

// Query device 0 through the CUDA runtime. Never throws: a missing driver or device is
// reported in `reason`.
DeviceInfo query_device();

// F01/F02 norms over the rows of a (rows × d) array (fast/norms.h):
//   rmsnorm   y = x / sqrt(mean(x²) + ε) · w, w = γ or (1 + γ) when one_plus_gamma;
//   layernorm y = (x − μ) / sqrt(σ² + ε) · γ + β (two-pass population variance).
void rmsnorm(Storage s, const void* x, const void* gamma, void* y, int64_t rows, int64_t d,
             float eps, bool one_plus_gamma = false);
void layernorm(Storage s, const void* x, const void* gamma, const void* beta, void* y, int64_t rows,
               int64_t d, float eps);
// Residual add fused with RMSNorm (fast/norms.h's fused_add_rmsnorm, in f32: gpu/norm_math.h):
// h = x + residual in f32, stored rounded to residual_out (which may alias residual); y = h /
// sqrt(mean(h²) + ε) · γ from the f32 h. Same errors as rmsnorm.
void fused_add_rmsnorm(Storage s, const void* x, const void* residual, const void* gamma,
                       void* residual_out, void* y, int64_t rows, int64_t d, float eps);

// F12 softmax and log-sum-exp over the rows of a (rows × n) array (fast/softmax.h); log Z is one
// f32 per row.
void softmax(Storage s, const void* z, void* p, int64_t rows, int64_t n);
void logsumexp(Storage s, const void* z, float* logz, int64_t rows, int64_t n);

// Fused F14 + F12 + F13 loss with gradient (fast/cross_entropy.h): loss and log Z per row (f32),
// grad (rows × vocab in s, or null to skip). cap 0: no soft-cap.
void cross_entropy(Storage s, const void* z, const int64_t* target, int64_t rows, int64_t vocab,
                   float lambda, float cap, float* loss, float* logz, void* grad);

// F14 soft-cap, elementwise: y = cap·tanh(z/cap) (fast/softcap.h).
void softcap(Storage s, const void* z, void* y, int64_t n, float cap);

// F06 activations and F05 GLU gates, elementwise (fast/activations.h, fast/glu.h).
void activation(Activation act, Storage s, const void* x, void* y, int64_t n);
void glu_gate(Activation act, Storage s, const void* gate, const void* up, void* h, int64_t n);

// F10 RoPE with F11's frequency rules over x [tokens, heads · head_dim] (gpu/rope.cuh), with
// fast/rope.h's arguments and checks: the first rotary_dims dimensions of every head rotated in the
// pairs of the layout, the rest copied. The frequencies θ_k are kernels/api's rope_inv_freq (long
// double, on the host, as serving stacks compute inv_freq once), each rounded to double; the
// angles p·θ_k, their cos and sin, times rope_cos_sin_factor, are formed in double on the device.
void rope(Storage s, const void* x, const int64_t* positions, void* y, const RopeShape& shape,
          const RopeFrequencies& freq);
// From a table cos_sin [tokens, rotary_dims] in storage `table`: row t holds the r/2 cosines,
// then the r/2 sines, of token t.
void rope_table(Storage s, const void* x, Storage table, const void* cos_sin, void* y,
                const RopeShape& shape);

}  // namespace lmo::gpu

// Attention, its decode step and absorbed MLA decode (F15, F16, F19).
#include "gpu/api_attention.h"  // IWYU pragma: export
// The feed-forward family (F03–F05, F18), the position family (F07–F09) and MoE (F20–F22).
#include "gpu/api_ffn.h"         // IWYU pragma: export
// fp8 scaling: quantization, dequantization, the block-scaled linear layer.
#include "gpu/api_fp8.h"         // IWYU pragma: export
#include "gpu/api_moe.h"         // IWYU pragma: export
#include "gpu/api_positional.h"  // IWYU pragma: export
