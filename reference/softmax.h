// F12 softmax and log-sum-exp over one row of logits (cross-entropy, z-loss and soft-capping
// build on these).
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <vector>

#include "reference/numeric.h"

namespace lmo::ref {

// max_i z_i (−inf for an empty row). NaN propagates.
template <class T>
T row_max(std::span<const T> z) {
  using std::isnan;
  T m = -std::numeric_limits<T>::infinity();
  for (const T& v : z) {
    if (isnan(v)) return v;
    if (v > m) m = v;
  }
  return m;
}

// log Z = log Σ_i e^{z_i}. With subtract_max (the default, and what every real kernel does)
// it is evaluated as m + log Σ e^{z_i − m}, m = max z: equal in exact arithmetic, and the only
// form that does not overflow in a narrow format. The sum accumulates in Acc.
template <class T, class Acc = T>
T logsumexp(std::span<const T> z, bool subtract_max = true) {
  using std::exp;
  using std::isinf;
  using std::log;
  if (z.empty()) throw std::invalid_argument("logsumexp: empty row");
  const T m = subtract_max ? row_max(z) : T(0);
  if (subtract_max && isinf(m)) return m;  // all −inf: log 0 = −inf; any +inf: +inf
  Acc s(0);
  for (const T& v : z) s = s + convert<Acc>(T(exp(T(v - m))));
  return T(m + T(log(convert<T>(s))));
}

// P(y = i) = e^{z_i} / Z, evaluated as e^{z_i − m} / Σ_j e^{z_j − m} (see logsumexp).
template <class T, class Acc = T>
std::vector<T> softmax(std::span<const T> z, bool subtract_max = true) {
  using std::exp;
  if (z.empty()) throw std::invalid_argument("softmax: empty row");
  const T m = subtract_max ? row_max(z) : T(0);
  std::vector<T> e(z.size());
  Acc s(0);
  for (size_t i = 0; i < z.size(); ++i) {
    e[i] = exp(T(z[i] - m));
    s = s + convert<Acc>(e[i]);
  }
  const T total = convert<T>(s);
  for (T& v : e) v = v / total;
  return e;
}

}  // namespace lmo::ref
