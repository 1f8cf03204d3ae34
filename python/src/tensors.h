// Tensors across the Python boundary: the package (python/lmoracle/_arrays.py) hands each tensor
// to the module as (name, dtype name, shape, bytes) — the bytes of a C-contiguous little-endian
// array in one of the project's dtypes — and gets outputs back the same way. The arrays of
// NumPy, PyTorch and JAX all convert to that losslessly in Python (bf16 and fp8 through
// ml_dtypes), so the module needs no per-library code and no DLPack dtype that NumPy lacks.
#pragma once

#include <nanobind/nanobind.h>

#include <map>
#include <string>

#include "reference/tensor.h"

namespace lmo::python {

// A list of (name, dtype, shape, bytes) tuples as tensors by name. InputError (ValueError in
// Python) for an unknown dtype, a byte count that does not match the shape, a repeated name;
// `what` names the argument in messages ("inputs", "outputs").
std::map<std::string, ref::Tensor> tensors_from_python(const nanobind::list& items,
                                                       const std::string& what);
// Tensors by name as a list of (name, dtype, shape, bytes) tuples, in name order.
nanobind::list tensors_to_python(const std::map<std::string, ref::Tensor>& tensors);

}  // namespace lmo::python
