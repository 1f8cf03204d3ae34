// A tensor's values as floats, and floats stored in a tensor of a format (each rounded once to
// nearest-even by Tensor::set): how the plain-float kernels of the recipe and workload tests
// read their inputs and hand back their outputs.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "reference/formats.h"
#include "reference/tensor.h"

namespace lmo::testing {

inline std::vector<float> floats(const ref::Tensor& t) {
  std::vector<float> v;
  v.reserve(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(static_cast<float>(t.get(i)));
  return v;
}

// n stored values of dtype dt at p (a kernel's raw buffer), widened exactly to floats.
inline std::vector<float> floats_at(ref::DType dt, const void* p, int64_t n) {
  ref::Tensor t(dt, {n});
  std::memcpy(t.bytes().data(), p, t.bytes().size());
  return floats(t);
}

// v stored at p in dtype dt, each value rounded once to nearest-even.
inline void store_floats(ref::DType dt, const std::vector<float>& v, void* p) {
  ref::Tensor t(dt, {static_cast<int64_t>(v.size())});
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, v[static_cast<size_t>(i)]);
  std::memcpy(p, t.bytes().data(), t.bytes().size());
}

inline ref::Tensor float_tensor(ref::Format f, std::vector<int64_t> shape,
                                const std::vector<float>& v) {
  ref::Tensor t(ref::format_dtype(f), std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, v[static_cast<size_t>(i)]);
  return t;
}

}  // namespace lmo::testing
