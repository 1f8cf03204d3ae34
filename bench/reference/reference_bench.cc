// Cost of the reference per output element on mp and float128, relative to the same formula on
// double, measured in the same run (Google Benchmark). Run:
//   build/bench/reference/reference_bench --benchmark_counters_tabular=true
// Each benchmark reports `ns_per_elem`; the ratio to the double row is the cost of exactness.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "reference/attention.h"
#include "reference/norms.h"
#include "reference/rope.h"
#include "reference/softmax.h"

namespace lmo::ref {
namespace {

// Deterministic, well-scaled inputs (a fixed linear congruential sequence in [-1, 1)).
template <class T>
std::vector<T> inputs(size_t n, uint64_t seed) {
  std::vector<T> v(n);
  for (auto& x : v) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    x = T(static_cast<double>(seed >> 11) / 0x1p52 - 1.0);
  }
  return v;
}

void per_element(benchmark::State& state, int64_t elements) {
  state.counters["ns_per_elem"] = benchmark::Counter(
      static_cast<double>(elements), benchmark::Counter::kIsIterationInvariantRate |
                                         benchmark::Counter::kInvert);
}

template <class T>
void BM_Rope(benchmark::State& state) {
  const int64_t d = 128;
  const auto x = inputs<T>(d, 1);
  const auto inv = rope_inv_freq<T>(d, T(10000));
  int64_t p = 0;
  for (auto _ : state) {
    auto y = rope<T>(x, T(static_cast<double>(p++ % 4096)), inv, RopeLayout::kHalfSplit);
    benchmark::DoNotOptimize(y);
  }
  per_element(state, d);
}

template <class T>
void BM_Softmax(benchmark::State& state) {
  const auto z = inputs<T>(32000, 2);
  for (auto _ : state) {
    auto p = softmax<T>(z);
    benchmark::DoNotOptimize(p);
  }
  per_element(state, 32000);
}

template <class T>
void BM_RmsNorm(benchmark::State& state) {
  const int64_t d = 4096;
  const auto x = inputs<T>(d, 3);
  const auto gamma = inputs<T>(d, 4);
  const T eps = constant<T>("1e-5");
  for (auto _ : state) {
    auto y = rmsnorm<T>(std::span<const T>(x), std::span<const T>(gamma), eps);
    benchmark::DoNotOptimize(y);
  }
  per_element(state, d);
}

// One head, causal, T = 256, d = 64: outputs are T·d elements.
template <class T>
void BM_Attention(benchmark::State& state) {
  const int64_t t = 256, d = 64;
  const Mat<T> q(t, d, inputs<T>(t * d, 5)), k(t, d, inputs<T>(t * d, 6)), v(t, d, inputs<T>(t * d, 7));
  AttentionConfig cfg;
  cfg.heads = cfg.kv_heads = 1;
  cfg.head_dim = d;
  cfg.mask = MaskKind::kCausal;
  set_reference_threads(1);  // cost per element on one core, comparable across types
  for (auto _ : state) {
    auto o = attention<T>(q, k, v, cfg);
    benchmark::DoNotOptimize(o);
  }
  set_reference_threads(0);
  per_element(state, t * d);
}

BENCHMARK_TEMPLATE(BM_RmsNorm, double);
BENCHMARK_TEMPLATE(BM_RmsNorm, float128);
BENCHMARK_TEMPLATE(BM_RmsNorm, mp);
BENCHMARK_TEMPLATE(BM_Attention, double);
BENCHMARK_TEMPLATE(BM_Attention, float128)->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_Attention, mp)->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_Rope, double);
BENCHMARK_TEMPLATE(BM_Rope, float128);
BENCHMARK_TEMPLATE(BM_Rope, mp);
BENCHMARK_TEMPLATE(BM_Softmax, double);
BENCHMARK_TEMPLATE(BM_Softmax, float128);
BENCHMARK_TEMPLATE(BM_Softmax, mp);

}  // namespace
}  // namespace lmo::ref

BENCHMARK_MAIN();
