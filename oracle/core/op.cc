#include "oracle/core/op.h"

#include <cmath>

#include "oracle/core/op_generic.h"

namespace lmo::oracle {

void InputSet::add(std::string name, ref::Tensor t) {
  for (const auto& [n, _] : tensors_) {
    if (n == name) throw std::invalid_argument("input '" + name + "' added twice");
  }
  tensors_.emplace_back(std::move(name), std::move(t));
}

const ref::Tensor& InputSet::at(std::string_view name) const {
  for (const auto& [n, t] : tensors_) {
    if (n == name) return t;
  }
  throw std::invalid_argument("no input named '" + std::string(name) + "'");
}

std::vector<int64_t> InputSet::ints(std::string_view name) const {
  const ref::Tensor& t = at(name);
  if (ref::is_float(t.dtype())) {
    throw std::invalid_argument("input '" + std::string(name) + "' is not an integer tensor");
  }
  std::vector<int64_t> v;
  v.reserve(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(static_cast<int64_t>(t.get(i)));
  return v;
}

bool outputs_fix_their_formats(const std::vector<OutputDecl>& decls) {
  bool any = false;
  for (const OutputDecl& d : decls) {
    if (d.topk) continue;
    if (!d.format) return false;
    any = true;
  }
  return any;
}

void flush_outputs(Outputs<double>& o, const BoundRecipe& r) {
  if (!r.ftz()) return;
  for (OutputValues<double>& out : o) {
    // Only the flush: the values stay unrounded (the judge's bound is on the error before the
    // store).
    for (double& v : out.values) {
      if (round_point(v, r.storage(), true) == 0) v = std::copysign(0.0, v);
    }
  }
}

}  // namespace lmo::oracle
