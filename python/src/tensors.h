// Tensors across the C ABI (capi.h): the package (python/lmoracle/_arrays.py) hands each tensor
// as a descriptor {"group", "name", "dtype", "shape"} and the bytes of a C-contiguous
// little-endian array in one of the project's dtypes, and gets outputs back the same way. The
// arrays of NumPy, PyTorch and JAX all convert to that losslessly in Python (bf16 and fp8
// through ml_dtypes), so the library needs no per-library code and no DLPack dtype that NumPy
// lacks.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reference/tensor.h"

namespace lmo::python {

// The bytes the request's tensors point at, in descriptor order.
struct RawTensors {
  const void* const* data = nullptr;
  const uint64_t* sizes = nullptr;
  uint64_t count = 0;
};

// The tensors of one group ("inputs", "outputs") by name. InputError (ValueError in Python) for
// a malformed descriptor, an unknown dtype, a byte count that does not match the shape, a
// repeated name; `group` names the argument in messages.
std::map<std::string, ref::Tensor> tensors_of_group(const nlohmann::json& descriptors,
                                                    const RawTensors& raw,
                                                    const std::string& group);
// Whether the request has a tensor group of that name (a None argument has none).
bool has_group(const nlohmann::json& args, const std::string& group);

// Tensors by name as descriptors (appended to `descriptors`) and their bytes (moved into
// `bytes`), in name order.
void tensors_to_result(const std::map<std::string, ref::Tensor>& tensors,
                       nlohmann::json& descriptors, std::vector<std::vector<uint8_t>>& bytes);

}  // namespace lmo::python
