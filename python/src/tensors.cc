#include "tensors.h"

#include <cstring>

#include "oracle/core/case_error.h"

namespace lmo::python {

using nlohmann::json;

bool has_group(const json& args, const std::string& group) {
  const auto it = args.find(group);
  return it != args.end() && !it->is_null();
}

std::map<std::string, ref::Tensor> tensors_of_group(const json& descriptors, const RawTensors& raw,
                                                    const std::string& group) {
  if (!descriptors.is_array() || descriptors.size() != raw.count) {
    throw oracle::InputError(group, "", "expected one descriptor per tensor buffer");
  }
  std::map<std::string, ref::Tensor> out;
  for (uint64_t i = 0; i < raw.count; ++i) {
    const json& d = descriptors[i];
    if (!d.is_object() || d.value("group", "") != group) continue;
    if (!d.contains("name") || !d["name"].is_string() || !d.contains("dtype") ||
        !d["dtype"].is_string() || !d.contains("shape") || !d["shape"].is_array()) {
      throw oracle::InputError(group, "", "expected (name, dtype, shape, bytes) for each tensor");
    }
    const std::string name = d["name"];
    const std::string dtype_name = d["dtype"];
    const auto dtype = ref::parse_dtype(dtype_name);
    if (!dtype) {
      throw oracle::InputError(group, name,
                               "expected a dtype of f64, f32, bf16, f16, e4m3, e5m2, i64, i32, u8; "
                               "got " + dtype_name);
    }
    std::vector<int64_t> shape;
    for (const json& e : d["shape"]) {
      if (!e.is_number_integer()) {
        throw oracle::InputError(group, name, "expected a shape of integers, got " + e.dump());
      }
      shape.push_back(e.get<int64_t>());
    }
    ref::Tensor tensor;
    try {
      tensor = ref::Tensor(*dtype, shape);
    } catch (const std::invalid_argument& e) {
      throw oracle::InputError(group, name, std::string("expected a valid shape: ") + e.what());
    }
    if (raw.sizes[i] != tensor.nbytes()) {
      throw oracle::InputError(group, name,
                               "expected " + std::to_string(tensor.nbytes()) + " bytes for its " +
                                   "shape and dtype, got " + std::to_string(raw.sizes[i]));
    }
    if (raw.sizes[i] > 0) std::memcpy(tensor.bytes().data(), raw.data[i], raw.sizes[i]);
    if (!out.emplace(name, std::move(tensor)).second) {
      throw oracle::InputError(group, name, "expected each tensor once, got it twice");
    }
  }
  return out;
}

void tensors_to_result(const std::map<std::string, ref::Tensor>& tensors, json& descriptors,
                       std::vector<std::vector<uint8_t>>& bytes) {
  for (const auto& [name, t] : tensors) {
    descriptors.push_back(
        {{"name", name}, {"dtype", std::string(ref::dtype_name(t.dtype()))}, {"shape", t.shape()}});
    const auto b = t.bytes();
    bytes.emplace_back(b.begin(), b.end());
  }
}

}  // namespace lmo::python
