#include "reference/parallel.h"

#include <mpfr.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "reference/contraction.h"
#include "reference/number_types.h"

namespace lmo::ref {
namespace {
std::atomic<int> g_threads{0};

// The threads a loop started on this thread may use; 0 outside any loop's worker (all of
// reference_threads()). A loop of n items on T threads gives each of its workers T / n of them
// (at least 1), so that a loop inside a body (a certified part whose evaluator loops over rows,
// say) uses the threads its outer loop leaves idle and no more: never T² threads.
thread_local int64_t worker_share = 0;

// Boost's numeric_limits<mp> (min, max, epsilon, round_error, infinity, quiet_NaN) fill a
// function-local static by hand (a flag set before the value), which is not thread-safe: two
// workers making their first call at once could copy the value while it is still 0, so a fully
// masked attention row came out 0 instead of NaN in a few runs of the sanitized build. Made once
// here, under C++'s thread-safe static initialization, before any worker starts.
void init_mp_limits() {
  using L = std::numeric_limits<mp>;
  static const bool ready = [] {
    (void)(L::min)(), (void)(L::max)(), (void)L::epsilon(), (void)L::round_error();
    (void)L::infinity(), (void)L::quiet_NaN();
    return true;
  }();
  (void)ready;
}
}  // namespace

void set_reference_threads(int n) { g_threads = n < 0 ? 0 : n; }

int reference_threads() {
  const int n = g_threads.load();
  if (n > 0) return n;
  return std::max(1u, std::thread::hardware_concurrency());
}

void parallel_for(int64_t n, const std::function<void(int64_t)>& body) {
  if (n <= 0) return;
  const int64_t available = worker_share > 0 ? worker_share : reference_threads();
  const int64_t threads = std::min<int64_t>(available, n);
  if (threads == 1) {
    for (int64_t i = 0; i < n; ++i) body(i);
    return;
  }
  init_mp_limits();
  std::exception_ptr error;
  std::mutex error_mutex;
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(threads));
  // The workers compute as the caller would: with its FMA contraction (contraction.h).
  const bool contract = fma_contraction();
  for (int64_t t = 0; t < threads; ++t) {
    const int64_t begin = n * t / threads, end = n * (t + 1) / threads;
    pool.emplace_back([&, begin, end, contract, available] {
      const FmaContraction scope(contract);
      worker_share = std::max<int64_t>(1, available / threads);
      try {
        for (int64_t i = begin; i < end; ++i) body(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
      mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);  // MPFR keeps per-thread constant caches
    });
  }
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace lmo::ref
