// bench/gpu/attention_workloads.h: the attention workloads on device arrays (values from a hash
// of the index, as bench/gpu/memory_workloads.cu fills them) and cudaEvent timing
// (bench/gpu/timing.cuh) against cublasSgemm.
#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/gpu/attention_workloads.h"
#include "bench/gpu/timing.cuh"
#include "gpu/common.cuh"
#include "gpu/launch_attention.h"

namespace lmo::gpu {
namespace {

void check(const std::string& what, cudaError_t e) {
  bench_timing::check("gpu::bench_compute", what, e);
}

void check_blas(const std::string& what, cublasStatus_t e) {
  if (e == CUBLAS_STATUS_SUCCESS) return;
  throw std::runtime_error("gpu::bench_compute: " + what + " failed: cuBLAS status " +
                           std::to_string(static_cast<int>(e)));
}

// Values in [-1, 1) from a multiplicative hash of the index: ordinary numbers whose logits stay
// a few units wide (bench/attention_workloads.cc's pattern).
template <class T>
__global__ void fill_kernel(T* p, int64_t n, uint32_t salt) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += step) {
    const uint32_t h = (static_cast<uint32_t>(i) + salt) * 2654435761u;
    p[i] = narrow<T>(static_cast<double>(h >> 20) / 2048.0 - 1.0);
  }
}

// Device arrays of one workload, freed on scope exit (cudaFree's result is not reportable from
// a destructor; a failing free would also fail the next checked call).
class Arrays {
 public:
  Arrays() = default;
  Arrays(const Arrays&) = delete;
  Arrays& operator=(const Arrays&) = delete;
  ~Arrays() {
    for (void* p : owned_) (void)cudaFree(p);
  }
  void* alloc(size_t bytes) {
    void* p = nullptr;
    check("cudaMalloc", cudaMalloc(&p, bytes));
    owned_.push_back(p);
    return p;
  }
  // n values of storage s from the pattern.
  void* filled(Storage s, int64_t n, uint32_t salt) {
    void* p = alloc(static_cast<size_t>(n) * (s == Storage::f32 ? 4 : 2));
    check("fill", with_storage(s, [&](auto tag) {
            using T = decltype(tag);
            fill_kernel<T><<<element_grid(n), kThreads>>>(static_cast<T*>(p), n, salt);
            return cudaGetLastError();
          }));
    return p;
  }

 private:
  std::vector<void*> owned_;
};

// A cuBLAS handle, released on scope exit.
struct Blas {
  cublasHandle_t handle = nullptr;
  Blas() { check_blas("cublasCreate", cublasCreate(&handle)); }
  Blas(const Blas&) = delete;
  Blas& operator=(const Blas&) = delete;
  ~Blas() {
    if (handle) (void)cublasDestroy(handle);
  }
};

std::string shape_of(const char* fmt, std::initializer_list<long long> v) {
  std::vector<long long> a(v);
  a.resize(6, 0);
  char buf[128];
  std::snprintf(buf, sizeof buf, fmt, a[0], a[1], a[2], a[3], a[4], a[5]);
  return buf;
}

}  // namespace

const std::vector<std::string>& compute_bench_ops() {
  static const std::vector<std::string> ops = {"attention", "attention_decode", "mla_decode"};
  return ops;
}

ComputeBenchRow bench_compute(const std::string& op, Storage s, int64_t tokens, int repetitions) {
  if (tokens < 1 || repetitions < 1) {
    throw std::invalid_argument("gpu::bench_compute: tokens and repetitions must be >= 1, got " +
                                std::to_string(tokens) + " and " + std::to_string(repetitions));
  }
  Arrays mem;
  ComputeBenchRow row;
  row.op = op;
  std::function<cudaError_t()> kernel;
  if (op == "attention" || op == "attention_decode") {
    // Prefill: Llama-3-8B-like heads (bench/attention_workloads.cc); decode: a Llama-3-70B-like
    // step (64 query heads on 8 KV heads) over a cache of 16·tokens.
    const bool decode = op == "attention_decode";
    AttentionArgs a;
    a.heads = decode ? 64 : 8;
    a.kv_heads = decode ? 8 : 2;
    a.head_dim = 128;
    a.kv_len = decode ? 16 * tokens : tokens;
    a.q_len = decode ? 1 : tokens;
    a.mask = AttentionMask::causal;
    const int64_t hd = a.heads * a.head_dim, gd = a.kv_heads * a.head_dim;
    void* q = mem.filled(s, a.q_len * hd, 1);
    void* k = mem.filled(s, a.kv_len * gd, 2);
    void* v = mem.filled(s, a.kv_len * gd, 3);
    void* o = mem.filled(s, a.q_len * hd, 4);
    const float scale = static_cast<float>(1.0 / std::sqrt(128.0));
    row.shape = shape_of(decode ? "h%lld g%lld d%lld cache %lld" : "h%lld g%lld d%lld T%lld causal",
                         {a.heads, a.kv_heads, a.head_dim, a.kv_len});
    row.size = decode ? a.kv_len : tokens * (tokens + 1) / 2;
    row.flops = 4.0 * 128.0 * static_cast<double>(a.heads) * static_cast<double>(row.size);
    // One head's Q Kᵀ (prefill), or the step's Q Kᵀ of one KV group's query heads (decode).
    row.gemm_m = decode ? a.heads / a.kv_heads : tokens;
    row.gemm_n = a.kv_len;
    row.gemm_k = a.head_dim;
    kernel = [=] { return launch_attention(s, q, k, v, o, a, scale, nullptr); };
  } else if (op == "mla_decode") {
    // DeepSeek-V2's widths: 128 heads, d_h 128, d_h^R 64, d_c 512; a cache of 16·tokens.
    MlaDecodeArgs a;
    a.heads = 128;
    a.head_dim = 128;
    a.rope_dim = 64;
    a.latent_dim = 512;
    a.cache_len = 16 * tokens;
    const int64_t h = a.heads, t = a.cache_len, dc = a.latent_dim, dr = a.rope_dim;
    void* q_c = mem.filled(s, h * a.head_dim, 5);
    void* q_r = mem.filled(s, h * dr, 6);
    void* c_kv = mem.filled(s, t * dc, 7);
    void* k_r = mem.filled(s, t * dr, 8);
    void* w_uk = mem.filled(s, dc * h * a.head_dim, 9);
    void* o = mem.filled(s, h * dc, 10);
    auto* cos_sin = static_cast<double*>(mem.alloc(static_cast<size_t>(dr) * sizeof(double)));
    check("cudaMemset", cudaMemset(cos_sin, 0, static_cast<size_t>(dr) * sizeof(double)));
    auto* work =
        static_cast<double*>(mem.alloc(static_cast<size_t>(h * (dc + dr)) * sizeof(double)));
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(a.head_dim + dr)));
    row.shape = shape_of("h%lld d_h%lld d_r%lld d_c%lld cache %lld", {h, a.head_dim, dr, dc, t});
    row.size = t;
    // The absorption (2·d_c·d_h per head) and, per head and key, q·k over d_c + d_r and p·v
    // over d_c.
    row.flops =
        static_cast<double>(h) * (2.0 * static_cast<double>(dc * a.head_dim) +
                                  static_cast<double>(t) * 2.0 * static_cast<double>(2 * dc + dr));
    row.gemm_m = h;
    row.gemm_n = t;
    row.gemm_k = dc + dr;
    kernel = [=] {
      return launch_mla_decode(s, q_c, q_r, c_kv, k_r, w_uk, cos_sin, work, o, a, scale, nullptr);
    };
  } else {
    throw std::invalid_argument("gpu::bench_compute: unknown op \"" + op + "\"");
  }
  // The SGEMM in f32, column-major: C[m×n] = A[m×k]·B[k×n].
  const int64_t m = row.gemm_m, n = row.gemm_n, kk = row.gemm_k;
  auto* ga = static_cast<float*>(mem.filled(Storage::f32, m * kk, 11));
  auto* gb = static_cast<float*>(mem.filled(Storage::f32, kk * n, 12));
  auto* gc = static_cast<float*>(mem.alloc(static_cast<size_t>(m * n) * sizeof(float)));
  Blas blas;
  const float one = 1.0f, zero = 0.0f;
  const auto gemm = [&] {
    const cublasStatus_t st =
        cublasSgemm(blas.handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(m), static_cast<int>(n),
                    static_cast<int>(kk), &one, ga, static_cast<int>(m), gb, static_cast<int>(kk),
                    &zero, gc, static_cast<int>(m));
    check_blas("cublasSgemm", st);
    return cudaGetLastError();
  };
  const bench_timing::Medians t = bench_timing::alternating_medians(
      "gpu::bench_compute", {"kernel", kernel}, {"SGEMM", gemm}, repetitions);
  row.repetitions = repetitions;
  row.seconds = t.kernel;
  row.gemm_seconds = t.yardstick;
  row.flops_per_s = row.flops / row.seconds;
  row.gemm_flops_per_s = 2.0 * static_cast<double>(m) * static_cast<double>(n) *
                         static_cast<double>(kk) / row.gemm_seconds;
  row.ratio = row.flops_per_s / row.gemm_flops_per_s;
  return row;
}

}  // namespace lmo::gpu
