// The functions of the C ABI (capi.h) by name, each the oracle's own C++ behind one function of
// lmoracle._core. Nothing here computes or judges anything itself: each function reads what
// Python passes, calls the oracle, and hands back tensors as bytes (tensors.h) or reports as the
// JSON and text the command line prints. Cases cross as JSON text (the case-file object,
// case.h), so the package and the case files describe a case the same way.
#pragma once

#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "reference/tensor.h"
#include "tensors.h"

namespace lmo::python {

struct Request {
  const nlohmann::json& args;
  const nlohmann::json& descriptors;  // the request's "tensors"
  RawTensors raw;
};

struct Reply {
  nlohmann::json value;                         // null when the function returns nothing
  std::map<std::string, ref::Tensor> tensors;  // handed back as bytes
};

using Call = std::function<Reply(const Request&)>;

// Every function by its _core name; InputError (ValueError) for a malformed argument.
const std::map<std::string, Call>& calls();

}  // namespace lmo::python
