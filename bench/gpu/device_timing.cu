// bench/gpu/device_timing.h: an observer (gpu/launch_observer.h) that times each observed call's
// replay against the yardstick with bench/gpu/timing.cuh's alternating loop.
#include <cublas_v2.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/gpu/device_timing.h"
#include "bench/gpu/timing.cuh"
#include "gpu/launch_observer.h"

namespace lmo::bench::gpu {
namespace {

namespace timing = lmo::gpu::bench_timing;
constexpr const char* kWho = "bench --backend gpu";

void check(const std::string& what, cudaError_t e) { timing::check(kWho, what, e); }

void check_blas(const std::string& what, cublasStatus_t e) {
  if (e == CUBLAS_STATUS_SUCCESS) return;
  throw std::runtime_error(std::string(kWho) + ": " + what + " failed: cuBLAS status " +
                           std::to_string(static_cast<int>(e)));
}

void check_counts(int repetitions) {
  if (repetitions < 1) {
    throw std::invalid_argument(std::string(kWho) + ": repetitions must be >= 1, got " +
                                std::to_string(repetitions));
  }
}

// Values in [-1, 1) from a multiplicative hash of the index: a GPU's power draw, and so its
// clock under load, depends on the bits its units toggle, so the yardstick is not timed on zeros.
__global__ void fill_kernel(float* p, int64_t n, uint32_t salt) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const uint32_t h = (static_cast<uint32_t>(i) + salt) * 2654435761u;
    p[i] = static_cast<float>(h >> 20) / 2048.0f - 1.0f;
  }
}

// Device memory freed on scope exit (cudaFree's result is not reportable from a destructor; a
// failing free would also fail the next checked call).
class DeviceArray {
 public:
  explicit DeviceArray(size_t bytes) { check("cudaMalloc", cudaMalloc(&p_, bytes)); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { (void)cudaFree(p_); }
  void* get() const { return p_; }
  // Its first n floats from the pattern.
  void fill(int64_t n, uint32_t salt) {
    if (n < 1) return;  // a grid of no blocks is a launch error
    fill_kernel<<<static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 4096)), 256>>>(
        static_cast<float*>(p_), n, salt);
    check("fill", cudaGetLastError());
  }

 private:
  void* p_ = nullptr;
};

// Times each observed call's replay against the yardstick, and sums.
class Timer : public lmo::gpu::LaunchObserver {
 public:
  Timer(timing::Enqueue yardstick, int repetitions)
      : yardstick_(std::move(yardstick)), repetitions_(repetitions) {}
  void on_call(const char* fn, const std::function<void()>& replay) override {
    const timing::Enqueue kernels{std::string(fn) + " (replay)", [&] {
                                    replay();
                                    return cudaGetLastError();
                                  }};
    const timing::Medians m = timing::alternating_medians(kWho, kernels, yardstick_, repetitions_);
    ++t_.calls;
    t_.seconds += m.kernel;
    yardstick_sum_ += m.yardstick;
  }
  DeviceTiming result() const {
    if (t_.calls == 0) {
      throw std::runtime_error(std::string(kWho) +
                               ": the workload made no gpu/api.h call to time (not run by the gpu "
                               "backend?)");
    }
    DeviceTiming t = t_;
    t.yardstick_seconds = yardstick_sum_ / t.calls;
    t.repetitions = repetitions_;
    return t;
  }

 private:
  timing::Enqueue yardstick_;
  int repetitions_;
  DeviceTiming t_;
  double yardstick_sum_ = 0;
};

DeviceTiming observe(const std::function<void()>& run, timing::Enqueue yardstick, int repetitions) {
  Timer timer(std::move(yardstick), repetitions);
  {
    const lmo::gpu::ObservedLaunches observed(timer);
    run();
  }
  return timer.result();
}

}  // namespace

DeviceTiming time_against_copy(const std::function<void()>& run, int64_t bytes, int repetitions) {
  check_counts(repetitions);
  if (bytes < 2) {
    throw std::invalid_argument(std::string(kWho) + ": a copy of " + std::to_string(bytes) +
                                " bytes; expected at least 2");
  }
  const size_t half = static_cast<size_t>(bytes / 2);
  DeviceArray src(half), dst(half);
  src.fill(static_cast<int64_t>(half / sizeof(float)), 1);
  return observe(run,
                 {"device-to-device cudaMemcpyAsync",
                  [&] {
                    return cudaMemcpyAsync(dst.get(), src.get(), half, cudaMemcpyDeviceToDevice,
                                           nullptr);
                  }},
                 repetitions);
}

DeviceTiming time_against_sgemm(const std::function<void()>& run, int64_t m, int64_t n, int64_t k,
                                int repetitions) {
  check_counts(repetitions);
  if (m < 1 || n < 1 || k < 1) {
    throw std::invalid_argument(std::string(kWho) + ": an SGEMM of " + std::to_string(m) + "x" +
                                std::to_string(n) + "x" + std::to_string(k) +
                                "; expected sizes >= 1");
  }
  const auto floats = [](int64_t count) { return static_cast<size_t>(count) * sizeof(float); };
  DeviceArray a(floats(m * k)), b(floats(k * n)), c(floats(m * n));
  a.fill(m * k, 2);
  b.fill(k * n, 3);
  // A cuBLAS handle, released on scope exit.
  struct Blas {
    cublasHandle_t handle = nullptr;
    ~Blas() {
      if (handle) (void)cublasDestroy(handle);
    }
  } blas;
  check_blas("cublasCreate", cublasCreate(&blas.handle));
  const float one = 1.0f, zero = 0.0f;
  // Column-major: C[m×n] = A[m×k]·B[k×n].
  const auto gemm = [&] {
    check_blas(
        "cublasSgemm",
        cublasSgemm(blas.handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(m), static_cast<int>(n),
                    static_cast<int>(k), &one, static_cast<const float*>(a.get()),
                    static_cast<int>(m), static_cast<const float*>(b.get()), static_cast<int>(k),
                    &zero, static_cast<float*>(c.get()), static_cast<int>(m)));
    return cudaGetLastError();
  };
  return observe(run, {"cublasSgemm", gemm}, repetitions);
}

}  // namespace lmo::bench::gpu
