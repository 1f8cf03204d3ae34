// GenericOp: implements Op::exact and Op::simulated from ONE generic function, so the exact
// reference and every naive simulated kernel are the same formula code on different number
// types. Derived defines
//   template <class T> Outputs<T> compute(const InputSet& in) const;
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "oracle/core/op.h"
#include "reference/contraction.h"
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
    d[k].condition = o[k].condition;
    d[k].error_scale = o[k].error_scale;
  }
  return d;
}

// Runs f.template operator()<T>() with T the simulated type of format c (f64: double).
template <class F>
decltype(auto) with_sim_type(ref::Format c, F&& f) {
  using ref::Format;
  switch (c) {
    case Format::f64:
      return f.template operator()<double>();
    case Format::f32:
      return f.template operator()<ref::Sim<Format::f32>>();
    case Format::tf32:
      return f.template operator()<ref::tf32>();
    case Format::bf16:
      return f.template operator()<ref::bfloat16>();
    case Format::f16:
      return f.template operator()<ref::float16>();
    case Format::e4m3:
      return f.template operator()<ref::fp8_e4m3>();
    case Format::e5m2:
      return f.template operator()<ref::fp8_e5m2>();
  }
  throw std::invalid_argument("simulated: unknown compute format");
}

// A recipe's rounding point as a function on T (empty where the point keeps the compute
// format and ftz is off): what the reference's rounding hooks take.
template <class T>
std::function<T(const T&)> point_rounding(const BoundRecipe& r, std::string_view point) {
  const std::optional<ref::Format> f = r.format(point);
  if (!f && !r.ftz()) return {};
  const bool ftz = r.ftz();
  return [f, ftz](const T& x) { return T(round_point(ref::to_double(x), f, ftz)); };
}

// With ftz, outputs subnormal in the storage format stored as ±0 (the store of a kernel that
// flushes; top-k indices untouched).
void flush_outputs(Outputs<double>& o, const BoundRecipe& r);

template <class Derived>
class GenericOp : public Op {
 public:
  Outputs<ref::mp> exact(const InputSet& in) const override {
    Outputs<ref::mp> out = self().template compute<ref::mp>(in);
    annotate_exact(in, out);
    return out;
  }
  std::optional<Outputs<ref::Ball>> enclosure(const InputSet& in) const override {
    return self().template compute<ref::Ball>(in);
  }
  Outputs<double> simulated(ref::Format compute, const InputSet& in) const override {
    return with_sim_type(compute, [&]<class T>() {
      if constexpr (std::is_same_v<T, double>) {
        return self().template compute<double>(in);
      } else {
        return outputs_as_double(self().template compute<T>(in));
      }
    });
  }
  // Ops with rounding points define compute<T>(in, recipe); the others only take +ftz.
  Outputs<double> simulated(ref::Format compute, const InputSet& in,
                            const BoundRecipe& recipe) const override {
    if (recipe.is_strict()) return simulated(compute, in);
    const ref::FmaContraction contract(recipe.fma());
    Outputs<double> o;
    if constexpr (requires { self().template compute<double>(in, recipe); }) {
      o = with_sim_type(compute, [&]<class T>() {
        if constexpr (std::is_same_v<T, double>) {
          return self().template compute<double>(in, recipe);
        } else {
          return outputs_as_double(self().template compute<T>(in, recipe));
        }
      });
    } else {
      o = simulated(compute, in);
    }
    flush_outputs(o, recipe);
    return o;
  }

 private:
  const Derived& self() const { return static_cast<const Derived&>(*this); }
};

}  // namespace lmo::oracle
