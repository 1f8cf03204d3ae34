// The stable sigmoid on balls (sigmoid_balls.h).
#include "reference/sigmoid_balls.h"

#include <cmath>
#include <vector>

namespace lmo::ref {

void sigmoid_balls(std::span<Ball> s) {
  // e = e^(−|s|) for each: e^(−s) on the side s ≥ 0, e^s below.
  thread_local std::vector<Ball> e;
  e.resize(s.size());
  for (size_t j = 0; j < s.size(); ++j) e[j] = std::signbit(s[j].hi()) ? s[j] : -s[j];
  exp_many(e);
  const Ball one(1.0);
  for (size_t j = 0; j < s.size(); ++j) {
    const Ball d = one + e[j];
    s[j] = std::signbit(s[j].hi()) ? e[j] / d : one / d;
  }
}

}  // namespace lmo::ref
