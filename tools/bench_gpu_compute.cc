#include "bench_gpu_compute.h"

#include <cstdio>
#include <string>

#include "oracle/core/case_error.h"
#ifdef LMO_HAVE_CUDA
#include "bench/gpu/attention_workloads.h"
#include "gpu/api.h"
#endif

namespace lmo::tools {

nlohmann::json gpu_compute_bench_rows(const std::vector<fast::Storage>& formats, int64_t tokens,
                                      int repetitions, const std::regex& filter) {
#ifdef LMO_HAVE_CUDA
  const std::string device = gpu::query_device().name;
  nlohmann::json rows = nlohmann::json::array();
  for (fast::Storage s : formats) {
    const gpu::Storage gs = s == fast::Storage::f32    ? gpu::Storage::f32
                            : s == fast::Storage::bf16 ? gpu::Storage::bf16
                                                       : gpu::Storage::f16;
    for (const std::string& op : gpu::compute_bench_ops()) {
      if (!std::regex_search(op, filter)) continue;
      const gpu::ComputeBenchRow m = gpu::bench_compute(op, gs, tokens, repetitions);
      const std::string gemm_shape = std::to_string(m.gemm_m) + "x" + std::to_string(m.gemm_n) +
                                     "x" + std::to_string(m.gemm_k);
      rows.push_back({{"op", m.op},
                      {"backend", "gpu"},
                      {"format", fast::storage_name(s)},
                      {"size", m.size},
                      {"shape", m.shape},
                      {"flops", m.flops},
                      {"device", device},
                      {"repetitions", m.repetitions},
                      {"seconds", m.seconds},
                      {"flops_per_s", m.flops_per_s},
                      {"sgemm_shape", gemm_shape},
                      {"sgemm", "cuBLAS cublasSgemm (f32, default math mode)"},
                      {"sgemm_flops_per_s", m.gemm_flops_per_s},
                      {"ratio", m.ratio}});
    }
  }
  return rows;
#else
  (void)formats, (void)tokens, (void)repetitions, (void)filter;
  throw oracle::InputError("command line", "--backend",
                           "gpu needs a build with CUDA; this lmoracle was built without nvcc (run "
                           "tools/gpu-check on a machine with a GPU and the CUDA toolkit)");
#endif
}

void print_gpu_compute_rows(const nlohmann::json& rows, int repetitions) {
  if (rows.empty()) return;
  std::printf("%-16s %-12s %-6s %-36s %9s %12s %7s\n", "op", "backend", "format", "shape",
              "GFLOP/s", "sgemm GFLOP/s", "ratio");
  for (const nlohmann::json& r : rows) {
    std::printf("%-16s %-12s %-6s %-36s %9.2f %12.2f %7.3f\n", r["op"].get<std::string>().c_str(),
                r["backend"].get<std::string>().c_str(), r["format"].get<std::string>().c_str(),
                r["shape"].get<std::string>().c_str(), r["flops_per_s"].get<double>() / 1e9,
                r["sgemm_flops_per_s"].get<double>() / 1e9, r["ratio"].get<double>());
  }
  std::printf(
      "GFLOP/s: 4d per visible (query, key) pair and query head (MLA: the absorption and "
      "q·k over d_c + d_r, p·v over d_c); ratio: over cuBLAS SGEMM (f32) of the shape "
      "m x n x k shown in the JSON rows, in this run (cudaEvent timing), median of %d; "
      "the kernels compute in double\n",
      repetitions);
}

}  // namespace lmo::tools
