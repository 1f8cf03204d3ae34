// Soft-capping on balls (softcap_balls.h): ball arithmetic throughout, one batched exponential.
#include "reference/softcap_balls.h"

#include <cmath>
#include <stdexcept>
#include <vector>

namespace lmo::ref {

void softcap_balls(std::span<const double> z, double cap, std::span<Ball> capped,
                   std::span<Ball> grad) {
  if (capped.size() != z.size() || (!grad.empty() && grad.size() != z.size())) {
    throw std::invalid_argument("softcap_balls: outputs must be as long as z");
  }
  thread_local std::vector<Ball> e;
  e.resize(z.size());
  const Ball c(cap), one(1.0), four(4.0);
  for (size_t j = 0; j < z.size(); ++j) e[j] = ldexp(abs(Ball(z[j]) / c), 1) * Ball(-1.0);
  exp_many(e);
  for (size_t j = 0; j < z.size(); ++j) {
    const Ball one_e = one + e[j];
    const Ball th = (one - e[j]) / one_e;
    capped[j] = c * (std::signbit(z[j]) ? -th : th);
    if (!grad.empty()) grad[j] = (four * e[j]) / (one_e * one_e);
  }
}

}  // namespace lmo::ref
