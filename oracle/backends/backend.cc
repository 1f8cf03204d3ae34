#include "oracle/backends/backend.h"

#include <algorithm>
#include <stdexcept>

#include "oracle/backends/registry.h"

namespace lmo::oracle {
namespace {

template <class T>
void store(const Outputs<T>& values, std::vector<GuardedBuffer>& outputs) {
  if (values.size() != outputs.size()) {
    throw std::logic_error("store_outputs: " + std::to_string(values.size()) + " outputs for " +
                           std::to_string(outputs.size()) + " buffers");
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    GuardedBuffer& b = outputs[k];
    ref::Tensor t(b.dtype(), b.shape());
    const bool index = !ref::is_float(b.dtype());
    if (index) {
      for (int64_t i = 0; i < t.numel(); ++i) {
        t.set(i, static_cast<double>(values[k].indices.at(static_cast<size_t>(i))));
      }
    } else {
      const ref::Format f = ref::dtype_format(b.dtype());
      for (int64_t i = 0; i < t.numel(); ++i) {
        t.set_bits(i, ref::encode(f, values[k].values.at(static_cast<size_t>(i))));
      }
    }
    std::copy(t.bytes().begin(), t.bytes().end(), static_cast<uint8_t*>(b.data()));
  }
}

}  // namespace

void store_outputs(const Outputs<double>& values, std::vector<GuardedBuffer>& outputs) {
  store(values, outputs);
}
void store_outputs(const Outputs<ref::mp>& values, std::vector<GuardedBuffer>& outputs) {
  store(values, outputs);
}

std::vector<std::unique_ptr<Backend>> available_backends() {
  std::vector<std::unique_ptr<Backend>> out;
  add_reference_backends(out);
  add_fast_backends(out);
#ifdef LMO_HAVE_CUDA
  add_gpu_backends(out);
#endif
  return out;
}

}  // namespace lmo::oracle
