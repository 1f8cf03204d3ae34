// bench/gpu/memory_workloads.h: the workloads (device arrays filled on the device with ordinary
// values) and the cudaEvent timing (bench/gpu/timing.cuh) against a device-to-device cudaMemcpy
// of the same traffic.
#include <algorithm>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/gpu/memory_workloads.h"
#include "bench/gpu/timing.cuh"
#include "gpu/common.cuh"
#include "gpu/launch.h"
#include "gpu/launch_positional.h"
#include "kernels/api/turns.h"

namespace lmo::gpu {
namespace {

void check(const std::string& what, cudaError_t e) { bench_timing::check("gpu::bench", what, e); }

// Values in [-2, 2) from a multiplicative hash of the index:
// ordinary numbers, no subnormals, infinities or NaN; the values do not change the traffic.
template <class T>
__global__ void fill_kernel(T* p, int64_t n, uint32_t salt) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += step) {
    const uint32_t h = (static_cast<uint32_t>(i) + salt) * 2654435761u;
    p[i] = narrow<T>(static_cast<double>(h >> 20) / 1024.0 - 2.0);
  }
}

// Device memory freed on scope exit (cudaFree's result cannot be reported from a destructor; a
// failing free would also fail the next checked call).
class DeviceArray {
 public:
  explicit DeviceArray(size_t bytes) { check("cudaMalloc", cudaMalloc(&p_, bytes)); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { (void)cudaFree(p_); }
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
};

size_t width(Storage s) { return s == Storage::f32 ? 4 : 2; }

DeviceArray* filled(std::vector<std::unique_ptr<DeviceArray>>& keep, Storage s, int64_t n,
                    uint32_t salt) {
  keep.push_back(std::make_unique<DeviceArray>(static_cast<size_t>(n) * width(s)));
  void* p = keep.back()->get();
  check("fill", with_storage(s, [&](auto tag) {
          using T = decltype(tag);
          fill_kernel<T><<<element_grid(n), kThreads>>>(static_cast<T*>(p), n, salt);
          return cudaGetLastError();
        }));
  return keep.back().get();
}

}  // namespace

const std::vector<std::string>& bench_ops() {
  static const std::vector<std::string> ops = {"rmsnorm",       "layernorm",    "softmax",
                                               "cross_entropy", "swiglu_gate",  "geglu_gate",
                                               "softcap",       "sinusoidal_pe"};
  return ops;
}

BenchRow bench(const std::string& op, Storage s, int64_t elements, int repetitions) {
  if (elements < 1 || repetitions < 1) {
    throw std::invalid_argument("gpu::bench: elements and repetitions must be >= 1, got " +
                                std::to_string(elements) + " and " + std::to_string(repetitions));
  }
  const int64_t w = static_cast<int64_t>(width(s));
  std::vector<std::unique_ptr<DeviceArray>> keep;
  BenchRow row;
  row.op = op;
  std::function<cudaError_t()> kernel;
  if (op == "rmsnorm" || op == "layernorm") {
    const bool layer = op == "layernorm";
    const int64_t d = 4096, rows = std::max<int64_t>(1, elements / d);
    void* x = filled(keep, s, rows * d, 1)->get();
    void* g = filled(keep, s, d, 2)->get();
    void* b = filled(keep, s, d, 3)->get();
    void* y = filled(keep, s, rows * d, 4)->get();
    row.shape = std::to_string(rows) + "x" + std::to_string(d);
    row.elements = rows * d;
    row.bytes = (2 * rows * d + (layer ? 2 : 1) * d) * w;
    kernel = [=] {
      return layer ? launch_layernorm(s, x, g, b, y, rows, d, 1e-5f, nullptr)
                   : launch_rmsnorm(s, x, g, y, rows, d, 1e-5f, false, nullptr);
    };
  } else if (op == "softmax") {
    const int64_t n = 32768, rows = std::max<int64_t>(1, elements / n);
    void* z = filled(keep, s, rows * n, 5)->get();
    void* p = filled(keep, s, rows * n, 6)->get();
    row.shape = std::to_string(rows) + "x" + std::to_string(n);
    row.elements = rows * n;
    row.bytes = 2 * rows * n * w;
    kernel = [=] { return launch_softmax(s, z, p, rows, n, nullptr); };
  } else if (op == "cross_entropy") {
    const int64_t vocab = 128256, rows = std::max<int64_t>(1, elements / vocab);
    void* z = filled(keep, s, rows * vocab, 7)->get();
    void* g = filled(keep, s, rows * vocab, 8)->get();
    std::vector<int64_t> targets;
    for (int64_t r = 0; r < rows; ++r) targets.push_back((r * 7919) % vocab);
    keep.push_back(std::make_unique<DeviceArray>(targets.size() * sizeof(int64_t)));
    auto* t = static_cast<int64_t*>(keep.back()->get());
    check("cudaMemcpy (targets)",
          cudaMemcpy(t, targets.data(), targets.size() * sizeof(int64_t), cudaMemcpyHostToDevice));
    keep.push_back(std::make_unique<DeviceArray>(2 * static_cast<size_t>(rows) * sizeof(float)));
    auto* loss = static_cast<float*>(keep.back()->get());
    float* logz = loss + rows;
    row.shape = std::to_string(rows) + "x" + std::to_string(vocab);
    row.elements = rows * vocab;
    row.bytes = 2 * rows * vocab * w + rows * (8 + 4 + 4);
    kernel = [=] {
      return launch_cross_entropy(s, z, t, rows, vocab, 1e-4f, 30.0f, loss, logz, g, nullptr);
    };
  } else if (op == "swiglu_gate" || op == "geglu_gate") {
    const Activation act = op == "swiglu_gate" ? Activation::silu : Activation::gelu;
    void* a = filled(keep, s, elements, 9)->get();
    void* b = filled(keep, s, elements, 10)->get();
    void* h = filled(keep, s, elements, 11)->get();
    row.shape = std::to_string(elements);
    row.elements = elements;
    row.bytes = 3 * elements * w;
    kernel = [=] { return launch_glu_gate(act, s, a, b, h, elements, nullptr); };
  } else if (op == "softcap") {
    void* z = filled(keep, s, elements, 12)->get();
    void* y = filled(keep, s, elements, 13)->get();
    row.shape = std::to_string(elements);
    row.elements = elements;
    row.bytes = 2 * elements * w;
    kernel = [=] { return launch_softcap(s, z, y, elements, 30.0f, nullptr); };
  } else if (op == "sinusoidal_pe") {
    // The encoding is written, not read: its traffic is the output (and 8 bytes of position per
    // row, the frequencies once). Positions up to 2^20, d of a 1024-wide model.
    const int64_t d = 1024, rows = std::max<int64_t>(1, elements / d);
    std::vector<int64_t> positions;
    for (int64_t r = 0; r < rows; ++r) positions.push_back((r * 7919) % (int64_t{1} << 20));
    const kernels::Turns turns = kernels::turns_of(kernels::inverse_powers(10000.0L, d / 2, d));
    keep.push_back(std::make_unique<DeviceArray>(positions.size() * sizeof(int64_t)));
    auto* pos = static_cast<int64_t*>(keep.back()->get());
    check("cudaMemcpy (positions)",
          cudaMemcpy(pos, positions.data(), positions.size() * sizeof(int64_t),
                     cudaMemcpyHostToDevice));
    const size_t turn_bytes = static_cast<size_t>(d / 2) * sizeof(double);
    keep.push_back(std::make_unique<DeviceArray>(2 * turn_bytes));
    auto* hi = static_cast<double*>(keep.back()->get());
    double* lo = hi + d / 2;
    check("cudaMemcpy (turns)",
          cudaMemcpy(hi, turns.hi.data(), turn_bytes, cudaMemcpyHostToDevice));
    check("cudaMemcpy (turns)",
          cudaMemcpy(lo, turns.lo.data(), turn_bytes, cudaMemcpyHostToDevice));
    void* pe = filled(keep, s, rows * d, 14)->get();
    row.shape = std::to_string(rows) + "x" + std::to_string(d);
    row.elements = rows * d;
    row.bytes = rows * d * w + rows * 8 + 2 * static_cast<int64_t>(turn_bytes);
    kernel = [=] { return launch_sinusoidal_pe(s, pos, hi, lo, pe, rows, d, nullptr); };
  } else {
    throw std::invalid_argument("gpu::bench: unknown op \"" + op + "\"");
  }
  // The copy moves the same traffic: bytes/2 read and bytes/2 written.
  const size_t half = static_cast<size_t>(row.bytes / 2);
  DeviceArray src(half), dst(half);
  check("cudaMemset", cudaMemset(src.get(), 0, half));
  const auto copy = [&] {
    return cudaMemcpyAsync(dst.get(), src.get(), half, cudaMemcpyDeviceToDevice, nullptr);
  };
  const bench_timing::Medians m = bench_timing::alternating_medians(
      "gpu::bench", {"kernel", kernel}, {"copy", copy}, repetitions);
  row.repetitions = repetitions;
  row.seconds = m.kernel;
  row.memcpy_seconds = m.yardstick;
  row.bytes_per_s = static_cast<double>(row.bytes) / row.seconds;
  row.memcpy_bytes_per_s = static_cast<double>(row.bytes) / row.memcpy_seconds;
  row.ratio = row.bytes_per_s / row.memcpy_bytes_per_s;
  return row;
}

}  // namespace lmo::gpu
