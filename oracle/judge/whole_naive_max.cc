#include "oracle/judge/whole_naive_max.h"

#include "oracle/judge/judge.h"

namespace lmo::oracle {

WholeNaiveMax block_naive_max(const ExactValues& exact, size_t k, std::span<const double> naive) {
  WholeNaiveMax w;
  w.max = exact.balls ? naive_max_error((*exact.balls)[k].values, naive, w.excluded)
                      : naive_max_error(exact.mp[k].values, naive, w.excluded);
  return w;
}

}  // namespace lmo::oracle
