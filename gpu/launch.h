// Launchers of the GPU kernels on device pointers, for callers that keep their data on the
// device (gpu/api.cc, the benchmarks). Each enqueues its kernel on `stream` and returns the
// launch's cudaError_t (cudaSuccess for an empty problem, which launches nothing); arguments are
// not validated here (gpu/api.cc does that). Same semantics as the functions of gpu/api.h.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/api.h"

namespace lmo::gpu {

cudaError_t launch_rmsnorm(Storage s, const void* x, const void* gamma, void* y, int64_t rows,
                           int64_t d, float eps, bool one_plus_gamma, cudaStream_t stream);
cudaError_t launch_layernorm(Storage s, const void* x, const void* gamma, const void* beta, void* y,
                             int64_t rows, int64_t d, float eps, cudaStream_t stream);
// residual_out may alias residual (each element is read before it is written).
cudaError_t launch_fused_add_rmsnorm(Storage s, const void* x, const void* residual,
                                     const void* gamma, void* residual_out, void* y, int64_t rows,
                                     int64_t d, float eps, cudaStream_t stream);

// scratch (softmax, logsumexp, cross_entropy): 3 · rows · softmax_math::row_parts(n) floats on the
// device (gpu/softmax_math.h: the parts' maxima, flags and sums).
cudaError_t launch_softmax(Storage s, const void* z, void* p, int64_t rows, int64_t n,
                           float* scratch, cudaStream_t stream);
cudaError_t launch_logsumexp(Storage s, const void* z, float* logz, int64_t rows, int64_t n,
                             float* scratch, cudaStream_t stream);
// target: rows int64 on the device, each in [0, vocab); grad may be null.
cudaError_t launch_cross_entropy(Storage s, const void* z, const int64_t* target, int64_t rows,
                                 int64_t vocab, float lambda, float cap, float* loss, float* logz,
                                 void* grad, float* scratch, cudaStream_t stream);

cudaError_t launch_softcap(Storage s, const void* z, void* y, int64_t n, float cap,
                           cudaStream_t stream);
cudaError_t launch_activation(Activation act, Storage s, const void* x, void* y, int64_t n,
                              cudaStream_t stream);
cudaError_t launch_glu_gate(Activation act, Storage s, const void* gate, const void* up, void* h,
                            int64_t n, cudaStream_t stream);

// turns_hi, turns_lo: the rotary_dims/2 frequencies in turns (kernels/api/turns.h), doubles on
// the device; positions: tokens int64 on the device.
cudaError_t launch_rope(Storage s, const void* x, const int64_t* positions, const double* turns_hi,
                        const double* turns_lo, double cos_sin_factor, void* y,
                        const RopeShape& shape, cudaStream_t stream);
cudaError_t launch_rope_table(Storage s, const void* x, Storage table, const void* cos_sin, void* y,
                              const RopeShape& shape, cudaStream_t stream);

}  // namespace lmo::gpu
