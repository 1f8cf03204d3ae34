#include "bench_gpu.h"

#include <string>

#include "oracle/core/case_error.h"
#ifdef LMO_HAVE_CUDA
#include "bench/gpu/memory_workloads.h"
#include "gpu/api.h"
#endif

namespace lmo::tools {

nlohmann::json gpu_bench_rows(const std::vector<fast::Storage>& formats, int64_t size,
                              int repetitions, const std::regex& filter) {
#ifdef LMO_HAVE_CUDA
  const gpu::DeviceInfo dev = gpu::query_device();
  if (!dev.present) {
    throw oracle::InputError("command line", "--backend",
                             "gpu needs a usable CUDA device; none found (" + dev.reason +
                                 "): run tools/gpu-check on a machine with one");
  }
  nlohmann::json rows = nlohmann::json::array();
  for (fast::Storage s : formats) {
    const gpu::Storage gs = s == fast::Storage::f32    ? gpu::Storage::f32
                            : s == fast::Storage::bf16 ? gpu::Storage::bf16
                                                       : gpu::Storage::f16;
    for (const std::string& op : gpu::bench_ops()) {
      if (!std::regex_search(op, filter)) continue;
      const gpu::BenchRow m = gpu::bench(op, gs, size, repetitions);
      rows.push_back({{"op", m.op},
                      {"backend", "gpu"},
                      {"format", fast::storage_name(s)},
                      {"size", m.elements},
                      {"shape", m.shape},
                      {"bytes", m.bytes},
                      {"device", dev.name},
                      {"repetitions", m.repetitions},
                      {"seconds", m.seconds},
                      {"bytes_per_s", m.bytes_per_s},
                      {"memcpy_bytes_per_s", m.memcpy_bytes_per_s},
                      {"ratio", m.ratio}});
    }
  }
  return rows;
#else
  (void)formats, (void)size, (void)repetitions, (void)filter;
  throw oracle::InputError("command line", "--backend",
                           "gpu needs a build with CUDA; this lmoracle was built without nvcc (run "
                           "tools/gpu-check on a machine with a GPU and the CUDA toolkit)");
#endif
}

}  // namespace lmo::tools
