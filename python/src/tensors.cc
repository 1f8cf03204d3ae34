#include "tensors.h"

#include <cstring>

#include <nanobind/stl/string.h>

#include "oracle/core/case_error.h"

namespace nb = nanobind;

namespace lmo::python {

std::map<std::string, ref::Tensor> tensors_from_python(const nb::list& items,
                                                       const std::string& what) {
  std::map<std::string, ref::Tensor> out;
  for (nb::handle item : items) {
    const nb::tuple t = nb::cast<nb::tuple>(item);
    if (t.size() != 4) {
      throw oracle::InputError(what, "", "expected (name, dtype, shape, bytes) tuples");
    }
    const std::string name = nb::cast<std::string>(t[0]);
    const std::string dtype_name = nb::cast<std::string>(t[1]);
    const auto dtype = ref::parse_dtype(dtype_name);
    if (!dtype) {
      throw oracle::InputError(what, name,
                               "expected a dtype of f64, f32, bf16, f16, e4m3, e5m2, i64, i32, u8; "
                               "got " + dtype_name);
    }
    std::vector<int64_t> shape;
    for (nb::handle e : nb::cast<nb::tuple>(t[2])) shape.push_back(nb::cast<int64_t>(e));
    const nb::bytes data = nb::cast<nb::bytes>(t[3]);
    ref::Tensor tensor;
    try {
      tensor = ref::Tensor(*dtype, shape);
    } catch (const std::invalid_argument& e) {
      throw oracle::InputError(what, name, std::string("expected a valid shape: ") + e.what());
    }
    if (data.size() != tensor.nbytes()) {
      throw oracle::InputError(what, name,
                               "expected " + std::to_string(tensor.nbytes()) + " bytes for its " +
                                   "shape and dtype, got " + std::to_string(data.size()));
    }
    if (data.size() > 0) std::memcpy(tensor.bytes().data(), data.c_str(), data.size());
    if (!out.emplace(name, std::move(tensor)).second) {
      throw oracle::InputError(what, name, "expected each tensor once, got it twice");
    }
  }
  return out;
}

nb::list tensors_to_python(const std::map<std::string, ref::Tensor>& tensors) {
  nb::list out;
  for (const auto& [name, t] : tensors) {
    nb::list shape;
    for (int64_t e : t.shape()) shape.append(e);
    const auto bytes = t.bytes();
    out.append(nb::make_tuple(name, std::string(ref::dtype_name(t.dtype())), nb::tuple(shape),
                              nb::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size())));
  }
  return out;
}

}  // namespace lmo::python
