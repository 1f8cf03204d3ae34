// Spreads the reference's outer loops (rows, heads, tokens) over the cores. Each index is
// computed by exactly one thread with the same code as in a serial loop, and every result goes
// to its own slot, so the output never depends on the number of threads.
#pragma once

#include <cstdint>
#include <functional>

namespace lmo::ref {

// Threads the reference uses; 0 (the default) means one per hardware thread. Tests set it to
// show results do not depend on it.
void set_reference_threads(int n);
int reference_threads();

// Calls body(i) for every i in [0, n), split into contiguous blocks over the threads. The first
// exception a body throws is rethrown once every thread has stopped. A call from inside a body
// gets that worker's share of the outer loop's threads: T / n of T threads over n items, at
// least one (serial on the worker when the outer loop keeps every thread busy).
void parallel_for(int64_t n, const std::function<void(int64_t)>& body);

}  // namespace lmo::ref
