// The fast kernels' threads: a small persistent pool with fork-join parallel loops.
//
// Determinism: a loop over n items is cut into chunks of a fixed `grain` items, chunk c being
// [c·grain, min(n, (c + 1)·grain)). The cut depends only on n and grain, never on the number of
// threads, and every kernel computes each chunk's outputs from its own inputs only (no
// cross-chunk reduction), so results are bitwise identical for any thread count; threads only
// decide who runs which chunk.
#pragma once

#include <cstdint>
#include <functional>

namespace lmo::fast {

// Number of threads the kernels use (the calling thread included). Throws std::invalid_argument
// unless 1 <= n <= 1024. The default is std::thread::hardware_concurrency() (at least 1).
void set_threads(int n);
int threads();

// Calls fn(begin, end) for every chunk of [0, n) (see above), in parallel over threads(). The
// call returns when every chunk is done; the first exception a chunk throws is rethrown here.
// Nested calls (fn calling parallel_for) run their chunks on the calling thread. Throws
// std::invalid_argument for n < 0 or grain < 1.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace lmo::fast
