// GenericOp: implements Op::exact and Op::simulated from ONE generic function, so the exact
// reference and every naive simulated kernel are the same formula code on different number
// types. Derived defines
//   template <class T> Outputs<T> compute(const InputSet& in) const;
#pragma once

#include <stdexcept>
#include <string>

#include "oracle/op.h"
#include "reference/numeric.h"
#include "reference/sim_float.h"

namespace lmo::oracle {

template <class T>
Outputs<double> outputs_as_double(const Outputs<T>& o) {
  Outputs<double> d(o.size());
  for (size_t k = 0; k < o.size(); ++k) {
    d[k].values.reserve(o[k].values.size());
    for (const T& v : o[k].values) d[k].values.push_back(ref::to_double(v));
    d[k].indices = o[k].indices;
  }
  return d;
}

template <class Derived>
class GenericOp : public Op {
 public:
  Outputs<ref::mp> exact(const InputSet& in) const override {
    return self().template compute<ref::mp>(in);
  }
  Outputs<double> simulated(ref::Format compute, const InputSet& in) const override {
    using ref::Format;
    switch (compute) {
      case Format::f64:
        return self().template compute<double>(in);
      case Format::f32:
        return outputs_as_double(self().template compute<ref::Sim<Format::f32>>(in));
      case Format::tf32:
        return outputs_as_double(self().template compute<ref::tf32>(in));
      case Format::bf16:
        return outputs_as_double(self().template compute<ref::bfloat16>(in));
      case Format::f16:
        return outputs_as_double(self().template compute<ref::float16>(in));
      case Format::e4m3:
        return outputs_as_double(self().template compute<ref::fp8_e4m3>(in));
      case Format::e5m2:
        return outputs_as_double(self().template compute<ref::fp8_e5m2>(in));
    }
    throw std::invalid_argument("simulated: unknown compute format");
  }

 private:
  const Derived& self() const { return static_cast<const Derived&>(*this); }
};

}  // namespace lmo::oracle
