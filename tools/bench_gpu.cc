#include "bench_gpu.h"

#include <memory>
#include <stdexcept>
#include <string>

#include "oracle/core/case_error.h"
// LMO_NO_GPU_BENCH: the Python package's build (tools/CMakeLists.txt), which links no cuBLAS.
#if defined(LMO_HAVE_CUDA) && !defined(LMO_NO_GPU_BENCH)
#define LMO_GPU_BENCH 1
#include "bench/attention_workloads.h"
#include "bench/flop_rate.h"
#include "bench/gpu/device_timing.h"
#include "bench/memory_workloads.h"
#include "bench_rows.h"
#include "gpu/api.h"
#include "oracle/backends/backend.h"
#endif

namespace lmo::tools {

#ifdef LMO_GPU_BENCH
namespace {

std::unique_ptr<oracle::Backend> gpu_backend(const gpu::DeviceInfo& dev) {
  if (dev.present) {
    for (std::unique_ptr<oracle::Backend>& b : oracle::available_backends()) {
      if (b->name() == "gpu") return std::move(b);
    }
  }
  throw oracle::InputError("command line", "--backend",
                           "gpu needs a usable CUDA device; none found (" + dev.reason +
                               "): run tools/gpu-check on a machine with one");
}

// The workload, or null with a not_measured entry where the gpu backend does not run it (the
// workload's refusal names the reason; nothing is drawn or allocated before it).
template <class W, class Make>
std::unique_ptr<W> workload_or_skip(const std::string& name, ref::Format f, GpuBenchRows& out,
                                    Make make) {
  try {
    return std::make_unique<W>(make());
  } catch (const std::invalid_argument& e) {
    out.not_measured.push_back(
        {{"op", name}, {"format", std::string(ref::format_name(f))}, {"reason", e.what()}});
    return nullptr;
  }
}

// The fields of a row that say where and how it was timed: the device, the api calls of one run,
// the repetitions and the seconds of one run (its kernels' medians summed; device_timing.h).
nlohmann::json timing_fields(const gpu::DeviceInfo& dev, const bench::gpu::DeviceTiming& t) {
  return {{"device", dev.name},
          {"calls", t.calls},
          {"repetitions", t.repetitions},
          {"seconds", t.seconds}};
}

}  // namespace
#endif

GpuBenchRows gpu_bench_rows(const std::vector<ref::Format>& formats, int64_t size, int64_t tokens,
                            int repetitions, const std::regex& filter) {
#ifdef LMO_GPU_BENCH
  const gpu::DeviceInfo dev = gpu::query_device();
  const std::unique_ptr<oracle::Backend> backend = gpu_backend(dev);
  GpuBenchRows out;
  for (ref::Format f : formats) {
    for (const std::string& name : bench::memory_workload_names()) {
      if (!std::regex_search(name, filter)) continue;
      const auto w = workload_or_skip<bench::Workload>(
          name, f, out, [&] { return bench::memory_workload(name, *backend, f, size); });
      if (!w) continue;
      const bench::gpu::DeviceTiming t =
          bench::gpu::time_against_copy(w->run, w->bytes, repetitions);
      // The first run (the one the replays repeat) wrote its whole output and nothing beyond.
      w->check_written();
      const double rate = static_cast<double>(w->bytes) / t.seconds;
      const double copy_rate = static_cast<double>(w->bytes) / t.yardstick_seconds;
      nlohmann::json row = memory_row(*w, "gpu", f);
      row.update(timing_fields(dev, t));
      row.update(
          {{"bytes_per_s", rate}, {"memcpy_bytes_per_s", copy_rate}, {"ratio", rate / copy_rate}});
      out.memory.push_back(std::move(row));
    }
    for (const std::string& name : bench::compute_workload_names()) {
      if (!std::regex_search(name, filter)) continue;
      const auto w = workload_or_skip<bench::ComputeWorkload>(
          name, f, out, [&] { return bench::compute_workload(name, *backend, f, tokens); });
      if (!w) continue;
      const bench::gpu::DeviceTiming t =
          bench::gpu::time_against_sgemm(w->run, w->gemm_m, w->gemm_n, w->gemm_k, repetitions);
      w->check_written();
      const double rate = w->flops / t.seconds;
      const double gemm_rate =
          bench::sgemm_flops(w->gemm_m, w->gemm_n, w->gemm_k) / t.yardstick_seconds;
      nlohmann::json row = compute_row(*w, "gpu", f);
      row.update(timing_fields(dev, t));
      row.update({{"flops_per_s", rate},
                  {"sgemm", "cuBLAS cublasSgemm (f32, default math mode)"},
                  {"sgemm_flops_per_s", gemm_rate},
                  {"ratio", rate / gemm_rate}});
      out.compute.push_back(std::move(row));
    }
  }
  return out;
#elif defined(LMO_NO_GPU_BENCH)
  (void)formats, (void)size, (void)tokens, (void)repetitions, (void)filter;
  throw oracle::InputError("command line", "--backend",
                           "gpu: the Python package's lmoracle has no GPU bench (it links no "
                           "cuBLAS, the bench's yardstick); run build/lmoracle bench --backend gpu "
                           "or the GPU bundle (tools/gpu-bundle)");
#else
  (void)formats, (void)size, (void)tokens, (void)repetitions, (void)filter;
  throw oracle::InputError("command line", "--backend",
                           "gpu needs a build with CUDA; this lmoracle was built without nvcc (run "
                           "tools/gpu-check on a machine with a GPU and the CUDA toolkit)");
#endif
}

}  // namespace lmo::tools
