// What a certified exponential costs ([certified], docs/certified.md): the candidates for the
// one transcendental that dominates attention, softmax and cross-entropy, each per call on the
// same 4096 arguments in [−20, 0] (e^(s − m) of a softmax row), measured in one run:
//   ExpDouble      the C library's exp: fast, but its error is only tested (not a candidate);
//   ExpMp          the reference's mp (MPFR at 50 decimal digits, about 168 bits): today's cost;
//   ExpMpfr/p      MPFR's correctly rounded exp at p bits; `undecided` counts the arguments
//                  where that result cannot decide the rounding to double (mpfr_can_round);
//   ExpArb/p       Arb's ball exp at p bits; `undecided`: arb_can_round_arf to 53 bits fails.
//   ExpDd          the chosen one: reference/dd_exp.h, double-double with a written bound
//   ExpBall        the same inside Ball arithmetic (reference/ball.h), radius included.
// Run: build/bench/reference/certified_exp_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>
#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "reference/ball.h"
#include "reference/dd_exp.h"
#include "reference/number_types.h"

#if LMO_HAVE_ARB
#include <arb.h>
#endif

namespace {

std::vector<double> arguments() {
  std::vector<double> v(4096);
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (double& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = -20.0 * static_cast<double>(s >> 11) / 0x1p53;
  }
  return v;
}

void per_call(benchmark::State& state, size_t calls) {
  state.counters["ns_per_call"] = benchmark::Counter(
      static_cast<double>(calls),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_ExpDouble(benchmark::State& state) {
  const std::vector<double> x = arguments();
  for (auto _ : state) {
    double acc = 0;
    for (double v : x) acc += std::exp(v);
    benchmark::DoNotOptimize(acc);
  }
  per_call(state, x.size());
}
BENCHMARK(BM_ExpDouble);

void BM_ExpDd(benchmark::State& state) {
  const std::vector<double> x = arguments();
  for (auto _ : state) {
    double acc = 0;
    for (double v : x) acc += lmo::ref::dd::exp({v, 0}).lo;
    benchmark::DoNotOptimize(acc);
  }
  per_call(state, x.size());
}
BENCHMARK(BM_ExpDd);

void BM_ExpBall(benchmark::State& state) {
  const std::vector<double> x = arguments();
  for (auto _ : state) {
    double acc = 0;
    for (double v : x) acc += exp(lmo::ref::Ball::from_parts(v, 0, 0x1p-90)).rad();
    benchmark::DoNotOptimize(acc);
  }
  per_call(state, x.size());
}
BENCHMARK(BM_ExpBall);

void BM_ExpMp(benchmark::State& state) {
  const std::vector<double> x = arguments();
  std::vector<lmo::ref::mp> a(x.begin(), x.end());
  for (auto _ : state) {
    for (const lmo::ref::mp& v : a) benchmark::DoNotOptimize(exp(v));
  }
  per_call(state, x.size());
}
BENCHMARK(BM_ExpMp);

void BM_ExpMpfr(benchmark::State& state) {
  const auto prec = static_cast<mpfr_prec_t>(state.range(0));
  const std::vector<double> x = arguments();
  mpfr_t a, y;
  mpfr_init2(a, 53);
  mpfr_init2(y, prec);
  int64_t undecided = 0;
  for (auto _ : state) {
    undecided = 0;
    for (double v : x) {
      mpfr_set_d(a, v, MPFR_RNDN);
      mpfr_exp(y, a, MPFR_RNDN);  // within ½ ulp at prec bits
      undecided += !mpfr_can_round(y, prec - 1, MPFR_RNDN, MPFR_RNDZ, 53 + 1);
      benchmark::DoNotOptimize(mpfr_get_d(y, MPFR_RNDN));
    }
  }
  state.counters["undecided"] = static_cast<double>(undecided);
  mpfr_clear(a);
  mpfr_clear(y);
  per_call(state, x.size());
}
BENCHMARK(BM_ExpMpfr)->Arg(53)->Arg(64)->Arg(80)->Arg(113);

#if LMO_HAVE_ARB
void BM_ExpArb(benchmark::State& state) {
  const auto prec = static_cast<slong>(state.range(0));
  const std::vector<double> x = arguments();
  arb_t a, y;
  arb_init(a);
  arb_init(y);
  int64_t undecided = 0;
  for (auto _ : state) {
    undecided = 0;
    for (double v : x) {
      arb_set_d(a, v);
      arb_exp(y, a, prec);  // a ball that contains e^v
      undecided += !arb_can_round_arf(y, 53, ARF_RND_NEAR);
      benchmark::DoNotOptimize(arf_get_d(arb_midref(y), ARF_RND_NEAR));
    }
  }
  state.counters["undecided"] = static_cast<double>(undecided);
  arb_clear(a);
  arb_clear(y);
  per_call(state, x.size());
}
BENCHMARK(BM_ExpArb)->Arg(64)->Arg(80)->Arg(113);
#endif

}  // namespace

BENCHMARK_MAIN();
